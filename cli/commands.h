// The `benchlab` command's subcommands. Each Add*Command registers its subcommand (with --help
// text and options) on the root app and returns the function that runs it once parsed; that
// function returns the process exit status (0 ok, 1 failure, 2 bad input).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <utility>
#include <vector>

namespace benchlab {

using CommandRunner = std::function<int()>;

CommandRunner AddRunCommand(CLI::App& root);          // the embedded lab
CommandRunner AddCoordinatorCommand(CLI::App& root);  // the coordinator daemon
CommandRunner AddAgentCommand(CLI::App& root);        // the agent daemon
CommandRunner AddSubmitCommand(CLI::App& root);
CommandRunner AddWindowsCommand(CLI::App& root);
CommandRunner AddAgentsCommand(CLI::App& root);  // the fleet and its leases
CommandRunner AddRerunCommand(CLI::App& root);   // windows measured again
CommandRunner AddCancelCommand(CLI::App& root);
CommandRunner AddLoadCommand(CLI::App& root);         // the load generator on its own
CommandRunner AddReportCommand(CLI::App& root);       // Markdown, JSON or CSV of a campaign
CommandRunner AddCompareCommand(CLI::App& root);      // two campaigns, cell by cell
CommandRunner AddHistoryCommand(CLI::App& root);      // a series of campaigns over time
CommandRunner AddRegressionsCommand(CLI::App& root);  // a series' change points
CommandRunner AddRemeasureCommand(CLI::App& root);    // re-measure a series' suspected changes
CommandRunner AddCaCommand(CLI::App& root);           // the private CA: init, issue, revoke
CommandRunner AddAuditCommand(CLI::App& root);        // who changed what, and who was refused
CommandRunner AddTokenCommand(CLI::App& root);        // the dashboard's tokens
CommandRunner AddHostCommand(CLI::App& root);         // this machine: check, tune, reset
CommandRunner AddProfileCommand(CLI::App& root);      // CPU profiles and their difference

// Every subcommand above, registered on root in the order `benchlab --help` lists them, each with
// the function that runs it (docs/architecture.md lists them; tests/unit/docs/ checks the list).
std::vector<std::pair<CLI::App*, CommandRunner>> AddCommands(CLI::App& root);

}  // namespace benchlab
