#include "coordinator/server/coordinator_daemon.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "coordinator/server/channel.h"
#include "spdlog/spdlog.h"

namespace benchlab {

Result<std::unique_ptr<CoordinatorDaemon>> CoordinatorDaemon::Create(const std::string& db_path,
                                                                     CoordinatorOptions options) {
  auto store = Store::Open(db_path);
  if (!store.ok()) return store.status();
  return std::unique_ptr<CoordinatorDaemon>(
      new CoordinatorDaemon(std::move(store).value(), options));
}

CoordinatorDaemon::CoordinatorDaemon(std::unique_ptr<Store> store,
                                     const CoordinatorOptions& options)
    : store_(std::move(store)),
      scheduler_(*store_, agents_, options.max_windows),
      service_(*store_, agents_, scheduler_),
      http_(*store_, agents_, scheduler_) {}

CoordinatorDaemon::~CoordinatorDaemon() { Shutdown(); }

Result<HostPort> CoordinatorDaemon::Start(const HostPort& listen) {
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(listen.ToString(), grpc::InsecureServerCredentials(), &bound_port);
  builder.SetMaxReceiveMessageSize(kMaxGrpcMessageBytes);
  builder.SetMaxSendMessageSize(kMaxGrpcMessageBytes);
  builder.RegisterService(&service_);
  server_ = builder.BuildAndStart();
  if (!server_ || bound_port == 0) {
    server_.reset();
    return Status::Unavailable("coordinator cannot listen on " + listen.ToString() +
                               " (address in use or not local?)");
  }
  HostPort bound{listen.host, static_cast<uint16_t>(bound_port)};
  scheduler_.Start();
  spdlog::info("coordinator listening on {}", bound.ToString());
  return bound;
}

Result<HostPort> CoordinatorDaemon::StartHttp(const HostPort& listen, const std::string& web_root,
                                              const std::vector<std::string>& http_hosts) {
  return http_.Start(listen, web_root, http_hosts);
}

void CoordinatorDaemon::Shutdown() {
  http_.Stop();
  scheduler_.Stop();
  if (server_) {
    // Streams (WatchCampaign) get a moment to finish, then are cancelled.
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    server_->Wait();
    server_.reset();
  }
}

}  // namespace benchlab
