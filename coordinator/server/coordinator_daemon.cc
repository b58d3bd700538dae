#include "coordinator/server/coordinator_daemon.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <optional>

#include "common/owner_lock.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/server/channel.h"
#include "coordinator/server/coordinator_bisect.h"
#include "coordinator/server/coordinator_service.h"
#include "coordinator/server/http_api.h"
#include "coordinator/server/metrics.h"
#include "coordinator/server/scheduler.h"
#include "coordinator/server/series_remeasure.h"
#include "coordinator/server/stream_slots.h"
#include "rpc/server_port.h"
#include "rpc/tls.h"
#include "spdlog/spdlog.h"

namespace benchlab {

static_assert(kMaxCoordinatorGrpcThreads >= static_cast<int>(kMaxWatchStreams) + 128,
              "every watch stream, and threads for the other calls beside them");

struct CoordinatorDaemon::Parts {
  Parts(std::optional<OwnerLock> lock, std::unique_ptr<Store> s, const CoordinatorOptions& o,
        const std::string& db_path)
      : owner(std::move(lock)),
        options(o),
        store(std::move(s)),
        metrics(db_path),
        scheduler(*store, agents, options.max_windows, &metrics),
        remeasure(*store, agents, scheduler, options.remeasure, options.remeasure_after_campaigns),
        bisections(*store, agents, scheduler),
        service(*store, agents, scheduler, options.tls.get(), &remeasure, &bisections),
        http(*store, agents, scheduler, metrics) {
    // Every campaign's end judges what it re-measured; with remeasure_after_campaigns it also
    // looks at its series, otherwise series are looked at when an operator asks (RemeasureSeries).
    // A look of a bisection that ends moves its search on (coordinator_bisect.h).
    scheduler.OnCampaignEnded([this](int64_t id) {
      remeasure.CampaignEnded(id);
      bisections.CampaignEnded(id);
    });
    if (auto tls = options.tls) {
      // Handshakes refused for their certificates are audited like refused calls
      // (docs/security.md, "Audit"), at most one row per kind per kRefusalWindow.
      tls->SetRefusalSink(
          [store = store.get()](const HandshakeRefusal& r) { AuditHandshakeRefusal(*store, r); });
      // Each agent is called at the address it registered, and must prove the name it
      // registered under with its certificate.
      agents.SetStubFactory([tls](const std::string& name, const std::string& address) {
        return std::shared_ptr<v1::Agent::StubInterface>(
            v1::Agent::NewStub(MakeChannel(address, tls->ChannelCredentials(Role::kAgent, name))));
      });
    }
  }

  ~Parts() {
    if (options.tls) options.tls->SetRefusalSink(nullptr);  // the store goes with these parts
  }

  std::optional<OwnerLock> owner;  // the database's; released last
  CoordinatorOptions options;
  std::unique_ptr<Store> store;
  AgentRegistry agents;
  CoordinatorMetrics metrics;  // /metrics (docs/metrics.md)
  Scheduler scheduler;
  SeriesRemeasure remeasure;
  CoordinatorBisections bisections;
  CoordinatorService service;
  HttpApi http;
  std::unique_ptr<grpc::Server> server;
};

Result<std::unique_ptr<CoordinatorDaemon>> CoordinatorDaemon::Create(const std::string& db_path,
                                                                     CoordinatorOptions options) {
  // One coordinator per database (docs/security.md, "One owner per state"): a second one would
  // take the first's running windows for ones a restart cut off, and both would store them.
  std::optional<OwnerLock> owner;
  if (!db_path.empty() && db_path != ":memory:") {
    auto lock = OwnerLock::Acquire(db_path + ".lock", db_path, ProcessHolder("coordinator"));
    if (!lock.ok()) return lock.status();
    owner = std::move(lock).value();
  }
  auto store = Store::Open(db_path);
  if (!store.ok()) return store.status();
  (*store)->SetAuditRetention(options.audit);
  // Pruned again as calls are audited: a database busy now does not keep the coordinator down.
  auto pruned = (*store)->PruneAudit(options.audit, (*store)->clock().WallNow());
  if (!pruned.ok()) {
    spdlog::warn("audit trail not pruned at start: {}", pruned.status().message());
  } else if (*pruned > 0) {
    spdlog::info("audit trail: {} row(s) older than {} days or beyond the newest {} deleted",
                 *pruned, options.audit.keep_days, options.audit.max_rows);
  }
  return std::unique_ptr<CoordinatorDaemon>(new CoordinatorDaemon(
      std::make_unique<Parts>(std::move(owner), std::move(store).value(), options, db_path)));
}

CoordinatorDaemon::CoordinatorDaemon(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

CoordinatorDaemon::~CoordinatorDaemon() { Shutdown(); }

Store& CoordinatorDaemon::store() { return *parts_->store; }

Result<HostPort> CoordinatorDaemon::Start(const HostPort& listen) {
  const auto& tls = parts_->options.tls;
  if (Status s =
          CheckListenPolicy("coordinator", listen.host, tls != nullptr, parts_->options.insecure);
      !s.ok()) {
    return s;
  }
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(
      listen.ToString(),
      tls ? tls->ServerCredentials({Role::kAgent, Role::kOperator, Role::kViewer})
          : grpc::InsecureServerCredentials(),
      &bound_port);
  builder.SetMaxReceiveMessageSize(kMaxGrpcMessageBytes);
  builder.SetMaxSendMessageSize(kMaxGrpcMessageBytes);
  SetServerKeepalive(builder);
  SetExclusivePort(builder);
  LimitServerThreads(builder, kMaxCoordinatorGrpcThreads);
  builder.RegisterService(&parts_->service);
  // Counts and times every call for /metrics (rpc/metrics_interceptor.h).
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> counted;
  counted.push_back(parts_->metrics.rpc().Factory());
  builder.experimental().SetInterceptorCreators(std::move(counted));
  parts_->server = builder.BuildAndStart();
  if (!parts_->server || bound_port == 0) {
    parts_->server.reset();
    return Status::Unavailable("coordinator cannot listen on " + listen.ToString() +
                               " (address in use or not local?)");
  }
  HostPort bound{listen.host, static_cast<uint16_t>(bound_port)};
  if (parts_->owner) {
    if (Status said = parts_->owner->SetHolder(ProcessHolder("coordinator") + ", listening on " +
                                               bound.ToString());
        !said.ok()) {
      spdlog::warn("{}", said.message());
    }
  }
  parts_->scheduler.Start();
  // A search the coordinator was running when it stopped goes on from its store
  // (coordinator_bisect.h): a look that ended meanwhile is judged, the next one queued.
  parts_->bisections.ResumeAll();
  spdlog::info("coordinator listening on {} ({})", bound.ToString(),
               tls ? "mutual TLS as " + IdentityUri(tls->own().role, tls->own().name)
                   : std::string("plaintext"));
  return bound;
}

Result<HostPort> CoordinatorDaemon::StartHttp(const HostPort& listen, const std::string& web_root,
                                              const std::vector<std::string>& http_hosts,
                                              const HttpTls& tls) {
  return parts_->http.Start(listen, web_root, http_hosts, tls);
}

void CoordinatorDaemon::Shutdown() {
  parts_->http.Stop();
  parts_->scheduler.Stop();
  if (parts_->server) {
    // Streams (WatchCampaign) get a moment to finish, then are cancelled.
    parts_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    parts_->server->Wait();
    parts_->server.reset();
    // Counts of refused handshakes still held back are stored before the store closes.
    if (parts_->options.tls) parts_->options.tls->FlushRefusals(/*all=*/true);
  }
}

}  // namespace benchlab
