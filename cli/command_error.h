// How a subcommand reports that it failed: one line on stderr, "benchlab NAME: MESSAGE", and the
// exit status it returns (cli/commands.h's ExitCode); and which status an error value stands for.
#pragma once

#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "common/status.h"

namespace benchlab {

inline int CommandError(const char* command, int exit_status, const std::string& message) {
  std::fprintf(stderr, "benchlab %s: %s\n", command, message.c_str());
  return exit_status;
}

// The exit status of an error that stops a command, one mapping for all of them: kExitUsage when
// the input was wrong (InvalidArgument, NotFound, AlreadyExists, FailedPrecondition: the same
// command fails again), kExitFailure for anything else (Unavailable, DeadlineExceeded, IoError,
// Internal, PermissionDenied, ...: what failed lies beyond the command line).
int ExitCodeOf(const Status& status);

// The same with the status's message on stderr (CommandError).
inline int CommandError(const char* command, const Status& status) {
  return CommandError(command, ExitCodeOf(status), status.message());
}

}  // namespace benchlab
