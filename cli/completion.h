// Shell completion for `benchlab`, generated from the same CLI11 definitions `--help` prints
// (cli/commands.cc): subcommands, their own subcommands (`ca issue`, `host tune`) and every
// option of each, so a new option completes without anyone editing a script (docs/cli.md,
// "Completion"). `benchlab completion bash|zsh|fish` prints one; the Debian package installs
// all three. Pure functions of the app's definitions; any thread.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace benchlab {

// The shells a script is written for.
inline const std::vector<std::string> kCompletionShells = {"bash", "zsh", "fish"};

// The completion script of `root` (the `benchlab` app with every subcommand added) for `shell`,
// one of kCompletionShells: bash's is a `complete -F` function; zsh's loads it through
// bashcompinit; fish's is one `complete -c benchlab` line per subcommand and option.
std::string CompletionScript(const CLI::App& root, std::string_view shell);

}  // namespace benchlab
