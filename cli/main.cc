// benchlab: one executable, with subcommands (see `benchlab --help`).
#include <string>

#include "cli/commands.h"
#include "common/log.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

int main(int argc, char** argv) {
  // Logs go to stderr; stdout carries what a command reports (window lines, tables, JSON).
  spdlog::set_default_logger(spdlog::stderr_color_mt("benchlab"));
  CLI::App app{
      "benchlab: a distributed benchmark lab for HTTP servers.\n"
      "A coordinator schedules campaigns over gRPC to agents; every window is judged by gates "
      "and stored in SQLite."};
  // BENCHLAB_VERSION: the project's version (CMakeLists.txt), which the Debian package carries.
  app.set_version_flag("--version", "benchlab " BENCHLAB_VERSION);
  app.require_subcommand(1);
  // Options of the top level are accepted after the subcommand too: `benchlab agent
  // --log-format json --config ...`.
  app.fallthrough();
  std::string log_format = "text";
  app.add_option("--log-format", log_format,
                 "text (the default: a line a person reads) or json (one object a line: time, "
                 "level, daemon, agent, campaign, window, message; docs/logging.md)")
      ->check(CLI::IsMember({"text", "json"}))
      ->envname("BENCHLAB_LOG_FORMAT");
  auto commands = benchlab::AddCommands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  for (auto& [sub, runner] : commands) {
    if (!sub->parsed()) continue;
    benchlab::ConfigureLogging(*benchlab::ParseLogFormat(log_format), sub->get_name());
    return runner();
  }
  return 2;
}
