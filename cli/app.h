// The `benchlab` command line: every subcommand in one table, parsed and run. cli/main.cc calls
// RunBenchlab with the process's arguments; tests call it in their own process and get the exit
// status the binary would return (cli/commands.h's table). Call it from one thread at a time: a
// subcommand configures the process's logging.
#pragma once

namespace benchlab {

// Parses `argv` (argv[0] is the program's name), runs the subcommand it names and returns its
// exit status. A command line CLI11 refuses prints CLI11's message and returns kExitUsage;
// --help and --version print and return kExitOk.
int RunBenchlab(int argc, const char* const* argv);

}  // namespace benchlab
