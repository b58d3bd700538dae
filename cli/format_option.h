// --format, as every command that writes its result in more than one form takes it (docs/cli.md,
// "One word per thing"): `md` and `markdown` both name Markdown, and the command reads "md".
// Called while a command's options are declared, before parsing; any thread.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace benchlab {

// Adds --format to `cmd`, stored in `*format`. `forms` are the forms the command writes, "md" for
// Markdown; "markdown" is stored as "md", and a form not in `forms` is refused while parsing
// (exit 2, cli/commands.h). An empty `forms` leaves the check to the command, whose forms may
// depend on its other options (profile's on --diff).
CLI::Option* AddFormatOption(CLI::App* cmd, std::string* format,
                             const std::vector<std::string>& forms, const std::string& help);

}  // namespace benchlab
