#include "agent/server/agent_daemon.h"

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include <cstdio>
#include <random>

#include "agent/orphans.h"
#include "agent/supervisor.h"
#include "agent/target_runner.h"
#include "benchlab/v1/coordinator.grpc.pb.h"
#include "spdlog/spdlog.h"

namespace benchlab {

namespace {

// A fresh instance id per agent process, so its cookie tells its own children from those of a
// crashed predecessor with the same name.
std::string NewInstanceId(SysEnv& env) { return AgentInstance(env, getpid()); }

AgentIdentity MakeIdentity(SysEnv& env, const AgentConfig& config, const std::string& instance) {
  AgentIdentity identity{config.name,
                         config.roles,
                         config.run_root,
                         config.allowed_cpus,
                         AgentCookie(config.name, instance),
                         config.own_roots,
                         config.sample_period};
  if (identity.allowed_cpus.empty()) {
    auto own = env.GetAffinity(0);
    if (own.ok()) identity.allowed_cpus = *own;
  }
  identity.target_host = TargetHost(config);
  return identity;
}

}  // namespace

std::string TargetHost(const AgentConfig& config) {
  std::string host = config.listen.host;
  if (!config.advertise.empty()) {
    auto advertised = ParseHostPort(config.advertise);
    host = advertised.ok() ? advertised->host : "";
  }
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") return "127.0.0.1";
  return host;
}

AgentDaemon::AgentDaemon(SysEnv& env, AgentConfig config)
    : env_(env),
      config_(std::move(config)),
      instance_(NewInstanceId(env_)),
      service_(env_, MakeIdentity(env_, config_, instance_), config_.catalogue) {}

AgentDaemon::~AgentDaemon() { Shutdown(); }

Result<HostPort> AgentDaemon::Start() {
  for (pid_t pid : StopOrphans(env_, config_.name, instance_, std::chrono::seconds(2))) {
    spdlog::warn("agent {}: stopped pid {}, left running by an earlier agent of this name",
                 config_.name, pid);
  }
  std::map<std::string, std::string> versions;
  for (const auto& def : config_.catalogue) {
    auto version = ReadTargetVersion(env_, def, config_.run_root + "/versions");
    if (!version.ok()) spdlog::warn("agent {}: {}", config_.name, version.status().message());
    versions[def.name] = version.ok() ? *version : "unavailable";
  }
  service_.SetVersions(versions);
  if (!config_.spool_dir.empty()) {
    auto spool = Spool::Open(config_.spool_dir);
    if (!spool.ok()) return spool.status();
    service_.SetSpool(std::move(spool).value());
  }

  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(config_.listen.ToString(), grpc::InsecureServerCredentials(),
                           &bound_port);
  builder.RegisterService(&service_);
  server_ = builder.BuildAndStart();
  if (!server_ || bound_port == 0) {
    server_.reset();
    return Status::Unavailable("agent " + config_.name + " cannot listen on " +
                               config_.listen.ToString());
  }
  HostPort bound{config_.listen.host, static_cast<uint16_t>(bound_port)};
  std::string address = config_.advertise.empty() ? bound.ToString() : config_.advertise;
  spdlog::info("agent {} listening on {} (roles: {})", config_.name, bound.ToString(),
               fmt::join(config_.roles, ","));
  thread_ = std::thread([this, address] { RegistrationLoop(address); });
  return bound;
}

void AgentDaemon::RegistrationLoop(std::string address) {
  auto channel = grpc::CreateChannel(config_.coordinator, grpc::InsecureChannelCredentials());
  auto stub = v1::Coordinator::NewStub(channel);
  v1::RegisterAgentRequest request;
  request.set_name(config_.name);
  for (const auto& role : config_.roles) request.add_roles(role);
  request.set_address(address);
  FillHostFacts(env_, request.mutable_host());
  for (const auto& name : service_.catalogue_names()) request.add_catalogue(name);
  for (const auto& label : config_.labels) request.add_labels(label);
  for (const auto& [name, version] : service_.versions())
    (*request.mutable_versions())[name] = version;

  std::chrono::milliseconds pause(200);
  std::string last_error;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    grpc::Status status;
    if (!registered_) {
      v1::RegisterAgentReply reply;
      status = stub->RegisterAgent(&ctx, request, &reply);
      // What the spool still holds (a crash, or a coordinator that went away before its
      // acknowledgement) is offered again after every registration.
      if (status.ok() && service_.spool() != nullptr) {
        if (auto records = service_.spool()->List(); records.ok() && !records->empty()) {
          v1::OfferResultsRequest offer;
          offer.set_name(config_.name);
          for (auto& [key, payload] : *records) {
            auto* item = offer.add_spooled();
            item->set_key(key);
            item->set_payload(std::move(payload));
          }
          grpc::ClientContext offer_ctx;
          offer_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
          v1::OfferResultsReply offered;
          status = stub->OfferResults(&offer_ctx, offer, &offered);
          for (const auto& key : offered.acknowledged()) (void)service_.spool()->Remove(key);
          if (offered.acknowledged_size() > 0) {
            spdlog::info("agent {}: coordinator took {} spooled results", config_.name,
                         offered.acknowledged_size());
          }
        }
      }
      if (status.ok()) {
        registered_ = true;
        // Heartbeat three times per lease so one lost beat never expires it.
        pause = std::chrono::milliseconds(std::max<int64_t>(100, reply.lease_ms() / 3));
        spdlog::info("agent {} registered with coordinator {}", config_.name, config_.coordinator);
      }
    } else {
      v1::HeartbeatRequest beat;
      beat.set_name(config_.name);
      v1::HeartbeatReply reply;
      status = stub->Heartbeat(&ctx, beat, &reply);
      if (status.ok() && !reply.known()) {
        // The coordinator restarted: the windows it was running are gone with it (it records
        // them as failed and runs them again), so their targets must not run on beside the next.
        registered_ = false;
        const size_t stopped = service_.StopAll();
        if (stopped > 0) {
          spdlog::warn("agent {}: coordinator {} restarted; stopped {} target(s) of its windows",
                       config_.name, config_.coordinator, stopped);
        }
      }
    }
    if (!status.ok() && status.error_message() != last_error) {
      spdlog::warn("agent {}: coordinator {}: {}", config_.name, config_.coordinator,
                   status.error_message());
    }
    last_error = status.ok() ? "" : status.error_message();
    ReapOrphans();
    lock.lock();
    cv_.wait_for(lock, registered_ ? pause : std::chrono::milliseconds(200),
                 [this] { return stopping_; });
  }
}

void AgentDaemon::Shutdown() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    server_->Wait();
    server_.reset();
  }
  service_.StopAll();
}

}  // namespace benchlab
