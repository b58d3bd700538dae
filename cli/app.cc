#include "cli/app.h"

#include <string>

#include "cli/commands.h"
#include "common/log.h"

namespace benchlab {

int RunBenchlab(int argc, const char* const* argv) {
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
  // Every subcommand, from the one list (cli/commands.cc).
  auto commands = AddCommands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  for (auto& [sub, runner] : commands) {
    if (!sub->parsed()) continue;
    ConfigureLogging(*ParseLogFormat(log_format), sub->get_name());
    return runner();
  }
  return kExitUsage;
}

}  // namespace benchlab
