// Manual pages for `benchlab`'s subcommands, generated from the same CLI11 definitions `--help`
// prints (cli/commands.cc), as the shell completion is (cli/completion.h): one page per
// subcommand, benchlab-run(1) ... , with its name, synopsis, description, its own subcommands
// (`ca issue`, `host tune`) and every option with its help text, value, default and environment
// variable (docs/cli.md, "Manual pages"). `benchlab man` writes them; the Debian package installs
// them beside the hand-written benchlab(1). Pure functions of the app's definitions; any thread.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace benchlab {

// What every page's .TH line carries besides its name: the date (empty: none) and the source
// ("benchlab 0.1.0").
struct ManPageHeader {
  std::string date;
  std::string source;
};

// The subcommands of `root` that get a page: every one `benchlab --help` lists (hidden ones,
// with an empty group, have none).
std::vector<const CLI::App*> ManPageCommands(const CLI::App& root);

// The page's file name: "benchlab-run.1".
std::string ManPageFileName(const CLI::App& command);

// The roff source of `command`'s page (man(7) macros): NAME, SYNOPSIS, DESCRIPTION, COMMANDS
// (its own subcommands, each with its options), ARGUMENTS, OPTIONS (one subsection per option
// group besides the default), EXIT STATUS and SEE ALSO benchlab(1). Text is escaped for roff:
// hyphens as \-, backslashes as \e, other than ASCII as \[uXXXX], no line begins with a dot.
std::string ManPage(const CLI::App& command, const ManPageHeader& header);

// `text` as roff text lines (exposed for tests).
std::string RoffText(std::string_view text);

}  // namespace benchlab
