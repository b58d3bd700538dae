// How a subcommand reports that it failed: one line on stderr, "benchlab NAME: MESSAGE", and the
// exit status it returns (1 failure, 2 bad input; cli/commands.h).
#pragma once

#include <cstdio>
#include <string>

namespace benchlab {

inline int CommandError(const char* command, int exit_status, const std::string& message) {
  std::fprintf(stderr, "benchlab %s: %s\n", command, message.c_str());
  return exit_status;
}

}  // namespace benchlab
