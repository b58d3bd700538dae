// `benchlab coordinator`: the coordinator daemon.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/signals.h"
#include "cli/tls_options.h"
#include "cli/web_root.h"
#include "common/parse.h"
#include "coordinator/plan.h"
#include "coordinator/server/coordinator_daemon.h"
#include "spdlog/spdlog.h"
#include "tls/files.h"

namespace benchlab {
namespace {

struct CoordinatorArgs {
  std::string listen = "127.0.0.1:7700";
  std::string db = "benchlab.db";
  std::string port_file;
  int parent_pid = 0;
  std::string http;  // "" : no dashboard; "PORT" or "HOST:PORT"
  std::string http_port_file;
  std::string web_root;
  std::vector<std::string> http_hosts;  // more Host names the dashboard answers
  uint64_t max_windows = kDefaultMaxWindows;
  bool no_remeasure = false;  // leave the series' suspected changes suspected
  int remeasure_rounds = RemeasureSettings{}.max_rounds;
  AuditRetention audit;
  TlsFiles tls;
  bool insecure = false;
  std::string http_tls_cert;  // the dashboard's HTTPS certificate chain and key
  std::string http_tls_key;
};

// `--http 8080` means 127.0.0.1:8080: the dashboard listens on loopback unless told otherwise.
Result<HostPort> ParseHttpAddress(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    return ParseHostPort("127.0.0.1:" + text);
  }
  return ParseHostPort(text);
}

void WritePortFile(const std::string& path, uint16_t port) {
  // Written whole under a temporary name, then renamed, so a reader never sees half of it.
  std::string tmp = path + ".tmp";
  std::ofstream(tmp) << port << "\n";
  std::rename(tmp.c_str(), path.c_str());
}

int RunCoordinator(const CoordinatorArgs& args) {
  auto listen = ParseHostPort(args.listen);
  if (!listen.ok()) {
    return CommandError("coordinator", kExitUsage, "--listen: " + listen.status().message());
  }
  std::optional<HostPort> http;
  if (!args.http.empty()) {
    auto parsed = ParseHttpAddress(args.http);
    if (!parsed.ok()) {
      return CommandError("coordinator", kExitUsage, "--http: " + parsed.status().message());
    }
    http = *parsed;
  }
  auto tls = LoadTls(args.tls, {Role::kCoordinator});
  if (!tls.ok()) {
    return CommandError("coordinator", kExitUsage, tls.status().message());
  }
  if (args.parent_pid != 0 && !ExitWithParent(args.parent_pid)) return kExitFailure;
  BlockTerminationSignals();
  CoordinatorOptions options;
  options.max_windows = args.max_windows;
  options.tls = *tls;
  options.insecure = args.insecure;
  options.remeasure_after_campaigns = !args.no_remeasure;
  options.remeasure.max_rounds = args.remeasure_rounds;
  options.audit = args.audit;
  auto daemon = CoordinatorDaemon::Create(args.db, options);
  if (!daemon.ok()) {
    return CommandError("coordinator", kExitFailure, daemon.status().message());
  }
  auto bound = (*daemon)->Start(*listen);
  if (!bound.ok()) {
    return CommandError("coordinator", kExitFailure, bound.status().message());
  }
  if (http) {
    // HTTPS with its own certificate when given one; beyond loopback, with the coordinator's
    // own otherwise (docs/security.md, "The dashboard").
    HttpTls http_tls{args.http_tls_cert, args.http_tls_key, args.insecure};
    if (http_tls.cert.empty() && http_tls.key.empty() && *tls && !IsLoopbackHost(http->host)) {
      const TlsFiles files = TlsFilesWithEnvironment(args.tls);
      http_tls.cert = files.cert;
      http_tls.key = files.key;
    }
    auto web = (*daemon)->StartHttp(*http, args.web_root.empty() ? DefaultWebRoot() : args.web_root,
                                    args.http_hosts, http_tls);
    if (!web.ok()) {
      (*daemon)->Shutdown();
      return CommandError("coordinator", kExitFailure, "--http: " + web.status().message());
    }
    if (!args.http_port_file.empty()) WritePortFile(args.http_port_file, web->port);
  }
  if (!args.port_file.empty()) WritePortFile(args.port_file, bound->port);
  int sig = WaitForTerminationSignal();
  // SIGHUP re-reads the TLS files (certificate, key, CA, CRL) and keeps running: campaigns go
  // on, and new connections use what was read. A file that does not check keeps the old ones.
  while (sig == SIGHUP) {
    if (options.tls) {
      Status reloaded = options.tls->Reload();
      if (reloaded.ok()) {
        spdlog::info("coordinator: TLS files read again on SIGHUP");
      } else {
        spdlog::error("coordinator: SIGHUP: {}; the previous TLS files stay in force",
                      reloaded.message());
      }
    }
    sig = WaitForTerminationSignal();
  }
  spdlog::info("coordinator stopping on signal {}", sig);
  (*daemon)->Shutdown();
  return kExitOk;
}

}  // namespace

CommandRunner AddCoordinatorCommand(CLI::App& root) {
  auto args = std::make_shared<CoordinatorArgs>();
  CLI::App* cmd =
      root.add_subcommand("coordinator",
                          "Run the coordinator daemon: agents register with it, campaigns are "
                          "submitted to it, and it stores every window in SQLite.");
  cmd->add_option("--listen", args->listen, "HOST:PORT to serve gRPC on (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("--db", args->db, "SQLite database file")->capture_default_str();
  cmd->add_option("--port-file", args->port_file,
                  "write the bound port to this file once listening");
  cmd->add_option("--http", args->http,
                  "serve the dashboard and its JSON API on HOST:PORT (a bare PORT: 127.0.0.1:PORT; "
                  "port 0: any free port); see docs/api.md");
  cmd->add_option("--http-port-file", args->http_port_file,
                  "write the dashboard's bound port to this file once listening");
  cmd->add_option(
      "--web-root", args->web_root,
      "the dashboard's files (default: ../web from benchlab's directory, where the build puts "
      "them, else ../share/benchlab/web, where the Debian package does)");
  cmd->add_option("--http-host", args->http_hosts,
                  "a name (or NAME:PORT) the dashboard is reached by, besides its --http address "
                  "(and localhost when that is loopback); requests for other Host names get 421. "
                  "Repeatable");
  cmd->add_option("--http-tls-cert", args->http_tls_cert,
                  "serve the dashboard over HTTPS with this PEM certificate chain (default beyond "
                  "loopback: the --tls-cert)");
  cmd->add_option("--http-tls-key", args->http_tls_key, "the key of --http-tls-cert (PEM)");
  cmd->add_option("--max-windows", args->max_windows,
                  "refuse campaigns whose plan holds more windows than this")
      ->check(CLI::Range(uint64_t{1}, uint64_t{10'000'000}))
      ->capture_default_str();
  cmd->add_flag("--no-remeasure", args->no_remeasure,
                "do not re-measure a series' suspected changes after its campaigns; they stay "
                "suspected until `benchlab remeasure SERIES --coordinator` asks (docs/history.md)");
  cmd->add_option("--remeasure-rounds", args->remeasure_rounds,
                  "the most rounds a re-measurement takes before it calls a change unconfirmed")
      ->check(CLI::Range(RemeasureSettings{}.min_rounds, 1000))
      ->capture_default_str();
  cmd->add_option("--audit-keep-days", args->audit.keep_days,
                  "delete audit rows older than this many days (docs/security.md, \"Audit\")")
      ->check(CLI::Range(1, 36'500))
      ->capture_default_str();
  cmd->add_option("--audit-max-rows", args->audit.max_rows,
                  "keep at most about this many audit rows, the newest")
      ->check(CLI::Range(int64_t{100}, int64_t{100'000'000}))
      ->capture_default_str();
  AddTlsOptions(cmd, &args->tls);
  cmd->add_flag("--insecure", args->insecure,
                "allow plaintext gRPC or HTTP on an address other than loopback (a warning on "
                "every start); without it, such a --listen needs the --tls-* options and such an "
                "--http a certificate");
  cmd->add_option("--parent-pid", args->parent_pid,
                  "exit when this parent process exits (used by benchlab run)")
      ->group("");
  return [args] { return RunCoordinator(*args); };
}

}  // namespace benchlab
