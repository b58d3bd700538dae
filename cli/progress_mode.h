// How `benchlab run` and `submit --watch` show a campaign's progress on stdout (`--progress`,
// README.md), apart from the printer (cli/progress.h) so that naming a mode needs no protocol
// headers.
#pragma once

#include <optional>
#include <string>

namespace benchlab {

// kAuto: kTty when stdout is a terminal, else kPlain. kOff: the window lines only.
enum class ProgressMode { kAuto, kTty, kPlain, kOff };

// "auto" | "tty" | "plain" | "off"; nullopt for anything else.
std::optional<ProgressMode> ParseProgressMode(const std::string& text);
// kAuto resolved for where stdout goes; any other mode is returned as it is.
ProgressMode ResolveProgressMode(ProgressMode requested, bool stdout_is_terminal);

}  // namespace benchlab
