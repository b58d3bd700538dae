// The `benchlab` command's subcommands, registered together (cli/commands.h).
#include "cli/commands.h"

namespace benchlab {

std::vector<std::pair<CLI::App*, CommandRunner>> AddCommands(CLI::App& root) {
  std::vector<std::pair<CLI::App*, CommandRunner>> commands;
  for (auto adder :
       {AddRunCommand,     AddCheckCommand,       AddCoordinatorCommand, AddAgentCommand,
        AddSubmitCommand,  AddWindowsCommand,     AddAgentsCommand,      AddRerunCommand,
        AddCancelCommand,  AddLoadCommand,        AddReportCommand,      AddCompareCommand,
        AddHistoryCommand, AddRegressionsCommand, AddRemeasureCommand,   AddBisectCommand,
        AddCaCommand,      AddAuditCommand,       AddTokenCommand,       AddHostCommand,
        AddProfileCommand, AddCompletionCommand,  AddManCommand}) {
    CommandRunner runner = adder(root);
    commands.emplace_back(root.get_subcommands({}).back(), std::move(runner));
  }
  return commands;
}

}  // namespace benchlab
