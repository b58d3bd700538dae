// How wide the command line's tables and progress lines may be (docs/cli.md, "Width"): --width N
// when given, else the terminal's width when stdout is a terminal wider than kDefaultTextWidth,
// else kDefaultTextWidth (common/text_table.h). One process runs one command, so the width is
// one value for the process: --width sets it while the command line is parsed, and the
// command's formatters read it. Main thread only.
#pragma once

#include <CLI/CLI.hpp>

namespace benchlab {

// Adds --width N (kMinTextWidth to kMaxTextWidth columns; another value exits 2) to `cmd`.
CLI::Option* AddWidthOption(CLI::App* cmd);

// The width this process's text output fits: ResolveTextWidth of --width and the terminal.
int OutputWidth();

// `flag` when it is above 0; else `terminal` when it is wider than kDefaultTextWidth; else
// kDefaultTextWidth. `terminal` 0: unknown, or not a terminal.
int ResolveTextWidth(int flag, int terminal);

// stdout's width in columns when it is a terminal: TIOCGWINSZ, else $COLUMNS; 0 when stdout is
// no terminal or neither says.
int StdoutTerminalColumns();

}  // namespace benchlab
