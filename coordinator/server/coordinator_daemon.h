// CoordinatorDaemon: the coordinator as one object: store, agent registry, scheduler and the
// gRPC service, listening on one address. Used by `benchlab coordinator`, by the embedded lab
// and, in-process, by the integration tests. Start/Shutdown from one thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/parse.h"
#include "common/status.h"
#include "coordinator/plan.h"
#include "coordinator/server/http_api.h"
#include "coordinator/server/remeasure_settings.h"
#include "coordinator/store.h"

namespace benchlab {

class TlsContext;  // rpc/tls.h

// gRPC's threads serving the coordinator's calls (rpc/server_port.h): every WatchCampaign stream
// there may be (kMaxWatchStreams), and 128 for the short calls beside them; a call beyond them
// is RESOURCE_EXHAUSTED.
inline constexpr int kMaxCoordinatorGrpcThreads = 384;

struct CoordinatorOptions {
  uint64_t max_windows = kDefaultMaxWindows;  // the largest plan Submit accepts (--max-windows)
  // Mutual TLS for the gRPC port and the channels to agents (rpc/tls.h); null: plaintext, which
  // Start allows on loopback only unless `insecure` (docs/security.md, "Mutual TLS").
  std::shared_ptr<TlsContext> tls;
  bool insecure = false;
  // Re-measure a series' suspected changes after each of its campaigns (docs/history.md, "On a
  // coordinator"); otherwise only when an operator asks (RemeasureSeries). Either way with
  // `remeasure`'s settings.
  bool remeasure_after_campaigns = false;
  RemeasureSettings remeasure;
  // How much of the audit trail to keep (--audit-keep-days, --audit-max-rows): pruned when the
  // coordinator starts and as calls are audited (Store::AppendAudit).
  AuditRetention audit;
};

class CoordinatorDaemon {
 public:
  // Locks the database (its DB.lock file, common/owner_lock.h) and opens the store. Another
  // coordinator on the same database fails here (FailedPrecondition naming it), as does a bad or
  // newer database.
  static Result<std::unique_ptr<CoordinatorDaemon>> Create(const std::string& db_path,
                                                           CoordinatorOptions options = {});
  ~CoordinatorDaemon();

  // Listens (port 0: the kernel picks one) and starts scheduling. Returns the bound address.
  Result<HostPort> Start(const HostPort& listen);
  // Serves the dashboard and the JSON API (docs/api.md) on `listen`, the dashboard's files from
  // `web_root`, to requests whose Host is the listen address or one of `http_hosts`
  // (HttpApi::Start). Returns the bound address. After Start.
  Result<HostPort> StartHttp(const HostPort& listen, const std::string& web_root,
                             const std::vector<std::string>& http_hosts = {},
                             const HttpTls& tls = {});
  // Stops scheduling after the current window, then stops serving.
  void Shutdown();

  Store& store();

 private:
  // The registry, scheduler, services and gRPC server, out of this header so that its users
  // compile without gRPC's (coordinator_daemon.cc).
  struct Parts;
  explicit CoordinatorDaemon(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace benchlab
