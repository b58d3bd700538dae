// `benchlab completion bash|zsh|fish`: the shell's completion script for benchlab, generated from
// the command's own definitions (cli/completion.h, docs/cli.md "Completion").
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/completion.h"

namespace benchlab {

CommandRunner AddCompletionCommand(CLI::App& root) {
  auto shell = std::make_shared<std::string>();
  CLI::App* cmd = root.add_subcommand(
      "completion",
      "Print the shell completion script for benchlab: source it, or install it where the shell "
      "looks (the Debian package installs all three).");
  cmd->add_option("shell", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember(kCompletionShells));
  // The root outlives the runner: RunBenchlab parses and runs within its own scope.
  return [shell, &root] {
    const std::string script = CompletionScript(root, *shell);
    std::fwrite(script.data(), 1, script.size(), stdout);
    return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
  };
}

}  // namespace benchlab
