// The `benchlab` command line: every subcommand in one table, parsed and run. cli/main.cc calls
// RunBenchlab with the process's arguments; tests call it in their own process and get the exit
// status the binary would return (cli/commands.h's table). Call it from one thread at a time: a
// subcommand configures the process's logging.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace benchlab {

// Parses `argv` (argv[0] is the program's name), runs the subcommand it names and returns its
// exit status. A command line CLI11 refuses prints CLI11's message and returns kExitUsage;
// --help and --version print and return kExitOk.
// `benchlab help [SUBCOMMAND]` is `benchlab [SUBCOMMAND] --help`. A first word that names no
// subcommand returns kExitUsage with "'rnu' is not a subcommand. Did you mean 'run'?".
int RunBenchlab(int argc, const char* const* argv);

// Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`.
size_t EditDistance(std::string_view a, std::string_view b);
// The names `word` is a slip for, closest first: within one edit (two for words of four letters
// or more), or that `word` begins.
std::vector<std::string> SimilarNames(std::string_view word, const std::vector<std::string>& names);

}  // namespace benchlab
