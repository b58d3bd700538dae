// How benchlab's daemons write their logs (docs/logging.md). Text, the default, is spdlog's
// usual line for a person at a terminal, its message made printable; JSON is one object a line
// for a fleet's log pipeline:
//
//   {"time":"2026-12-02T09:14:03.125Z","level":"info","daemon":"agent","agent":"server-1",
//    "campaign":"hello","window":"hello-r2-nginx-json-c32","message":"target started"}
//
// `time` is UTC with milliseconds; `level` is spdlog's name (trace, debug, info, warning, error,
// critical); `daemon` the subcommand ("coordinator", "agent", "run", ...); `agent` the agent's
// name in an agent's logs, and in the coordinator's the agent a line is about where the code
// that wrote it knew it (ScopedLogAgent), else null; `campaign` and `window` the campaign and
// window the line is about where the code that wrote it knew them (ScopedLogContext), else null.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "spdlog/formatter.h"

namespace benchlab {

enum class LogFormat { kText, kJson };

// "text" or "json"; nullopt for anything else.
std::optional<LogFormat> ParseLogFormat(std::string_view text);

// The campaign and window this thread is working for, from construction until destruction
// (the previous ones come back then). Empty strings leave a field as it was.
class ScopedLogContext {
 public:
  ScopedLogContext(std::string campaign, std::string window);
  ~ScopedLogContext();
  ScopedLogContext(const ScopedLogContext&) = delete;
  ScopedLogContext& operator=(const ScopedLogContext&) = delete;

 private:
  std::string saved_campaign_, saved_window_;
};

// The agent this thread's lines are about, from construction until destruction (the previous one
// comes back then): the coordinator's lines about one agent (its registration, its heartbeat,
// the results it offers). A process that is an agent names itself (SetLogAgent), which wins.
// An empty name leaves the field as it was.
class ScopedLogAgent {
 public:
  explicit ScopedLogAgent(std::string agent);
  ~ScopedLogAgent();
  ScopedLogAgent(const ScopedLogAgent&) = delete;
  ScopedLogAgent& operator=(const ScopedLogAgent&) = delete;

 private:
  std::string saved_agent_;
};

// Formats spdlog's messages as the JSON lines above. `daemon` and `agent` are fixed for the
// process; set the agent's once its configuration is read (SetLogAgent).
class JsonLogFormatter : public spdlog::formatter {
 public:
  explicit JsonLogFormatter(std::string daemon);
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;

 private:
  std::string daemon_;
};

// spdlog's usual text line, with the message made printable (common/printable.h): a peer's
// bytes quoted in a message (a request's path, an agent's name or error) never print as a second
// line or reach the terminal as a control character.
class TextLogFormatter : public spdlog::formatter {
 public:
  TextLogFormatter();
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;

 private:
  std::unique_ptr<spdlog::formatter> line_;  // spdlog's default pattern
};

// The agent name JSON lines carry from now on (process-wide).
void SetLogAgent(const std::string& name);

// Makes spdlog's default logger write `format` for `daemon` (text: TextLogFormatter).
void ConfigureLogging(LogFormat format, const std::string& daemon);

// The format ConfigureLogging set last (kText before any call): with kJson, everything the process
// writes on stderr is a log line, its errors included (cli/command_error.h).
LogFormat ConfiguredLogFormat();

}  // namespace benchlab
