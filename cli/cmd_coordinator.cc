// `benchlab coordinator`: the coordinator daemon.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "cli/commands.h"
#include "cli/signals.h"
#include "common/parse.h"
#include "coordinator/server/coordinator_daemon.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

struct CoordinatorArgs {
  std::string listen = "127.0.0.1:7700";
  std::string db = "benchlab.db";
  std::string port_file;
  int parent_pid = 0;
};

int RunCoordinator(const CoordinatorArgs& args) {
  auto listen = ParseHostPort(args.listen);
  if (!listen.ok()) {
    std::fprintf(stderr, "benchlab coordinator: --listen: %s\n", listen.status().message().c_str());
    return 2;
  }
  if (args.parent_pid != 0 && !ExitWithParent(args.parent_pid)) return 1;
  BlockTerminationSignals();
  auto daemon = CoordinatorDaemon::Create(args.db);
  if (!daemon.ok()) {
    std::fprintf(stderr, "benchlab coordinator: %s\n", daemon.status().message().c_str());
    return 1;
  }
  auto bound = (*daemon)->Start(*listen);
  if (!bound.ok()) {
    std::fprintf(stderr, "benchlab coordinator: %s\n", bound.status().message().c_str());
    return 1;
  }
  if (!args.port_file.empty()) {
    // Written whole under a temporary name, then renamed, so a reader never sees half of it.
    std::string tmp = args.port_file + ".tmp";
    std::ofstream(tmp) << bound->port << "\n";
    std::rename(tmp.c_str(), args.port_file.c_str());
  }
  int sig = WaitForTerminationSignal();
  spdlog::info("coordinator stopping on signal {}", sig);
  (*daemon)->Shutdown();
  return 0;
}

}  // namespace

CommandRunner AddCoordinatorCommand(CLI::App& root) {
  auto args = std::make_shared<CoordinatorArgs>();
  CLI::App* cmd = root.add_subcommand(
      "coordinator", "Run the coordinator daemon: agents register with it, campaigns are "
                     "submitted to it, and it stores every window in SQLite.");
  cmd->add_option("--listen", args->listen, "HOST:PORT to serve gRPC on (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("--db", args->db, "SQLite database file")->capture_default_str();
  cmd->add_option("--port-file", args->port_file,
                  "write the bound port to this file once listening");
  cmd->add_option("--parent-pid", args->parent_pid,
                  "exit when this parent process exits (used by benchlab run)")
      ->group("");
  return [args] { return RunCoordinator(*args); };
}

}  // namespace benchlab
