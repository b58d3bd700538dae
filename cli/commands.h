// The `benchlab` command's subcommands. Each Add*Command registers its subcommand (with --help
// text and options) on the root app and returns the function that runs it once parsed; that
// function returns the process exit status, one of ExitCode.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <utility>
#include <vector>

namespace benchlab {

// The exit statuses of every subcommand, one table for all (docs/cli.md, "Exit status"): the same
// situation gives the same status whichever command meets it.
enum ExitCode : int {
  // Done, and every check asked for held.
  kExitOk = 0,
  // Failed: the work could not be done because something beyond the command line failed (a
  // database that cannot be opened or read, a coordinator that cannot be reached or did not
  // answer within its deadline, a write that failed, a window that could not be measured). The
  // command line was right, and the same command may succeed later: an unreachable coordinator is
  // this status from every command, `report` and `compare` alike.
  kExitFailure = 1,
  // Bad input: an option, argument, file or name that is wrong (CLI11's refusals, an unknown
  // campaign or series, a database file that does not exist, a malformed HOST:PORT, a file that is
  // no run of record, a request the coordinator refused as invalid). Nothing was done, and the
  // same command fails the same way until it is changed.
  kExitUsage = 2,
  // Done, and the regression check asked for found one: `compare --fail-on-regression PCT` (a
  // cell worse than A beyond PCT) or `regressions --fail-on regression` (a confirmed regression).
  // A status of its own, so that a CI job tells "B regressed" from "the comparison did not
  // happen" (1) and from a wrong command line (2).
  kExitRegression = 3,
  // Done, and `--fail-on invalid` found windows the gates refused: every window of the campaign
  // was measured, and the newest attempt of at least one is invalid (`run`, `submit --wait`,
  // `report`). A campaign that did not finish, or a window not measured at all, is kExitFailure
  // instead.
  kExitInvalid = 4,
  // Interrupted by SIGINT or SIGTERM (128 + SIGINT, as a shell reports a Ctrl-C) before the work
  // ended; what was stored stays (`run --resume` goes on; a coordinator's campaign goes on there).
  kExitInterrupted = 130,
};

using CommandRunner = std::function<int()>;

CommandRunner AddRunCommand(CLI::App& root);          // the embedded lab
CommandRunner AddCheckCommand(CLI::App& root);        // a campaign file, before it runs
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
CommandRunner AddBisectCommand(CLI::App& root);       // a regression's commit, by bisection
CommandRunner AddCaCommand(CLI::App& root);           // the private CA: init, issue, revoke
CommandRunner AddAuditCommand(CLI::App& root);        // who changed what, and who was refused
CommandRunner AddTokenCommand(CLI::App& root);        // the dashboard's tokens
CommandRunner AddHostCommand(CLI::App& root);         // this machine: check, tune, reset
CommandRunner AddProfileCommand(CLI::App& root);      // CPU profiles and their difference
CommandRunner AddCompletionCommand(CLI::App& root);   // bash, zsh and fish completion scripts
CommandRunner AddManCommand(CLI::App& root);          // a manual page per subcommand

// Every subcommand above, registered on root in the order `benchlab --help` lists them, each with
// the function that runs it (docs/architecture.md lists them; tests/unit/docs/ checks the list).
std::vector<std::pair<CLI::App*, CommandRunner>> AddCommands(CLI::App& root);

}  // namespace benchlab
