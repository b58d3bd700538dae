#include "coordinator/server/coordinator_daemon.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "coordinator/server/agent_registry.h"
#include "coordinator/server/channel.h"
#include "coordinator/server/coordinator_service.h"
#include "coordinator/server/http_api.h"
#include "coordinator/server/scheduler.h"
#include "spdlog/spdlog.h"

namespace benchlab {

struct CoordinatorDaemon::Parts {
  Parts(std::unique_ptr<Store> s, const CoordinatorOptions& options)
      : store(std::move(s)),
        scheduler(*store, agents, options.max_windows),
        service(*store, agents, scheduler),
        http(*store, agents, scheduler) {}

  std::unique_ptr<Store> store;
  AgentRegistry agents;
  Scheduler scheduler;
  CoordinatorService service;
  HttpApi http;
  std::unique_ptr<grpc::Server> server;
};

Result<std::unique_ptr<CoordinatorDaemon>> CoordinatorDaemon::Create(const std::string& db_path,
                                                                     CoordinatorOptions options) {
  auto store = Store::Open(db_path);
  if (!store.ok()) return store.status();
  return std::unique_ptr<CoordinatorDaemon>(
      new CoordinatorDaemon(std::make_unique<Parts>(std::move(store).value(), options)));
}

CoordinatorDaemon::CoordinatorDaemon(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

CoordinatorDaemon::~CoordinatorDaemon() { Shutdown(); }

Store& CoordinatorDaemon::store() { return *parts_->store; }

Result<HostPort> CoordinatorDaemon::Start(const HostPort& listen) {
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(listen.ToString(), grpc::InsecureServerCredentials(), &bound_port);
  builder.SetMaxReceiveMessageSize(kMaxGrpcMessageBytes);
  builder.SetMaxSendMessageSize(kMaxGrpcMessageBytes);
  builder.RegisterService(&parts_->service);
  parts_->server = builder.BuildAndStart();
  if (!parts_->server || bound_port == 0) {
    parts_->server.reset();
    return Status::Unavailable("coordinator cannot listen on " + listen.ToString() +
                               " (address in use or not local?)");
  }
  HostPort bound{listen.host, static_cast<uint16_t>(bound_port)};
  parts_->scheduler.Start();
  spdlog::info("coordinator listening on {}", bound.ToString());
  return bound;
}

Result<HostPort> CoordinatorDaemon::StartHttp(const HostPort& listen, const std::string& web_root,
                                              const std::vector<std::string>& http_hosts) {
  return parts_->http.Start(listen, web_root, http_hosts);
}

void CoordinatorDaemon::Shutdown() {
  parts_->http.Stop();
  parts_->scheduler.Stop();
  if (parts_->server) {
    // Streams (WatchCampaign) get a moment to finish, then are cancelled.
    parts_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    parts_->server->Wait();
    parts_->server.reset();
  }
}

}  // namespace benchlab
