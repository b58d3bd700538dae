// How a subcommand reports that it failed: one line on stderr, "benchlab NAME: MESSAGE", and the
// exit status it returns (cli/commands.h's ExitCode); and which status an error value stands for.
#pragma once

#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "common/log.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace benchlab {

// One line on stderr as it is, or with --log-format json a JSON log line at level error.
inline void ErrorLine(const std::string& line) {
  if (ConfiguredLogFormat() == LogFormat::kJson) {
    spdlog::error("{}", line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

// With --log-format json the line is a JSON log line at level error instead (docs/logging.md): a
// daemon's stderr then holds JSON alone, its refusal to start included.
// The JSON line's message is `message` alone: the line names its daemon already.
inline int CommandError(const char* command, int exit_status, const std::string& message) {
  ErrorLine(ConfiguredLogFormat() == LogFormat::kJson
                ? message
                : "benchlab " + std::string(command) + ": " + message);
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
