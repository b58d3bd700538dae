#include "agent/server/agent_daemon.h"

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/channel_arguments.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "agent/orphans.h"
#include "agent/private_dir.h"
#include "agent/server/agent_state.h"
#include "agent/start_check.h"
#include "agent/supervisor.h"
#include "agent/target_runner.h"
#include "agent/window_token.h"
#include "rpc/keepalive.h"
#include "rpc/server_port.h"
#include "rpc/tls.h"
#include "spdlog/spdlog.h"

namespace benchlab {

namespace {

// How long a side service may sit unused before the agent stops it (docs/services.md).
constexpr std::chrono::minutes kServiceIdle{10};

// A fresh instance id per agent process, so its cookie tells its own children from those of a
// crashed predecessor with the same name.
std::string NewInstanceId(SysEnv& env) { return AgentInstance(env, getpid()); }

AgentIdentity MakeIdentity(SysEnv& env, const AgentConfig& config, const std::string& instance) {
  AgentIdentity identity;
  identity.name = config.name;
  identity.roles = config.roles;
  identity.run_root = config.run_root;
  identity.service_dir = config.service_dir;
  identity.allowed_cpus = config.allowed_cpus;
  identity.cookie = AgentCookie(config.name, instance);
  identity.own_roots = config.own_roots;
  identity.cgroup_parent = config.cgroup_parent;
  identity.sample_period = config.sample_period;
  if (identity.allowed_cpus.empty()) {
    auto own = env.GetAffinity(0);
    if (own.ok()) identity.allowed_cpus = *own;
  }
  identity.target_host = TargetHost(config);
  identity.allowed_targets = config.allowed_targets;
  identity.limits = config.limits;
  if (!config.config_dir.empty()) identity.template_dirs.push_back(config.config_dir);
  return identity;
}

// The agent's channel to the coordinator, with the fleet's keepalive (rpc/keepalive.h).
std::shared_ptr<grpc::Channel> CoordinatorChannel(const std::string& address,
                                                  std::shared_ptr<grpc::ChannelCredentials> creds) {
  grpc::ChannelArguments args;
  AddKeepalive(args);
  return grpc::CreateCustomChannel(address, std::move(creds), args);
}

// The coordinator could not be reached (or was too slow): offer again later.
bool Unreachable(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

}  // namespace

AgentDaemon::AgentDaemon(SysEnv& env, AgentConfig config, Clock& clock)
    : env_(env),
      clock_(clock),
      config_(std::move(config)),
      instance_(NewInstanceId(env_)),
      service_(env_, MakeIdentity(env_, config_, instance_), config_.catalogue, config_.services),
      metrics_(config_.name, [this] { return SnapshotOf(env_, service_, registered()); }) {}

AgentDaemon::~AgentDaemon() { Shutdown(); }

Result<HostPort> AgentDaemon::Start() {
  if (config_.state_dir.empty()) {
    // Built in process without a state directory: the proof lives as long as this daemon.
    auto proof = RandomHex(32);
    if (!proof.ok()) return proof.status();
    instance_proof_ = *proof;
  } else {
    BENCHLAB_RETURN_IF_ERROR(EnsurePrivateDir("state_dir", config_.state_dir));
    // One agent per state directory (docs/security.md, "One owner per state"), checked before
    // anything in it is read or written.
    auto lock = OwnerLock::Acquire(config_.state_dir + "/lock", "state_dir " + config_.state_dir,
                                   ProcessHolder("agent " + config_.name));
    if (!lock.ok()) return lock.status();
    state_lock_ = std::move(lock).value();
    auto proof = LoadInstanceProof(config_.state_dir);
    if (!proof.ok()) return Status(proof.status().code(), "state_dir: " + proof.status().message());
    instance_proof_ = *proof;
  }
  if (!config_.tls.empty()) {
    auto tls = TlsContext::Load(config_.tls, clock_);
    if (!tls.ok()) return Status(tls.status().code(), "[tls]: " + tls.status().message());
    const CertificateInfo own = (*tls)->own();
    if (own.role != Role::kAgent || own.name != config_.name) {
      return Status::InvalidArgument("[tls] cert: " + config_.tls.cert + " is " +
                                     IdentityUri(own.role, own.name) + "; agent " + config_.name +
                                     " needs " + IdentityUri(Role::kAgent, config_.name));
    }
    tls_ = *tls;
  }
  BENCHLAB_RETURN_IF_ERROR(CheckListenPolicy("agent " + config_.name, config_.listen.host,
                                             tls_ != nullptr, config_.insecure));
  service_.SetTls(tls_.get());
  BENCHLAB_RETURN_IF_ERROR(EnsurePrivateDir("run_root", config_.run_root));
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
    auto spool = Spool::Open(config_.spool_dir, service_.identity().limits.spool_max_bytes);
    if (!spool.ok()) return spool.status();
    service_.SetSpool(std::move(spool).value());
  }
  // Opened at the first StartTarget with a commit (agent/server/agent_service.h).
  if (!config_.build_cache_dir.empty()) {
    service_.SetBuildCache(config_.build_cache_dir, config_.build_cache_max_bytes);
  }
  if (config_.metrics_listen) {
    BENCHLAB_RETURN_IF_ERROR(metrics_.Start(*config_.metrics_listen).status());
  }

  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(
      config_.listen.ToString(),
      tls_ ? tls_->ServerCredentials({Role::kCoordinator}) : grpc::InsecureServerCredentials(),
      &bound_port);
  SetServerKeepalive(builder);
  SetExclusivePort(builder);
  LimitServerThreads(builder, kMaxGrpcThreads);
  builder.RegisterService(&service_);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> counted;
  counted.push_back(metrics_.rpc().Factory());  // for /metrics (rpc/metrics_interceptor.h)
  builder.experimental().SetInterceptorCreators(std::move(counted));
  server_ = builder.BuildAndStart();
  if (!server_ || bound_port == 0) {
    server_.reset();
    return Status::Unavailable("agent " + config_.name + " cannot listen on " +
                               config_.listen.ToString());
  }
  HostPort bound{config_.listen.host, static_cast<uint16_t>(bound_port)};
  std::string address = config_.advertise.empty() ? bound.ToString() : config_.advertise;
  if (state_lock_) {
    if (Status said = state_lock_->SetHolder(ProcessHolder("agent " + config_.name) +
                                             ", listening on " + bound.ToString());
        !said.ok()) {
      spdlog::warn("agent {}: {}", config_.name, said.message());
    }
  }
  spdlog::info("agent {} listening on {} (roles: {}); work in {}, spool in {}", config_.name,
               bound.ToString(), fmt::join(config_.roles, ","), config_.run_root,
               config_.spool_dir.empty() ? "none" : config_.spool_dir);
  thread_ = std::thread([this, address] { RegistrationLoop(address); });
  return bound;
}

AgentDaemon::InFlight::InFlight(AgentDaemon& daemon, grpc::ClientContext& ctx) : daemon_(daemon) {
  std::lock_guard lock(daemon_.mu_);
  daemon_.in_flight_ = &ctx;
  if (daemon_.stopping_) ctx.TryCancel();
}

AgentDaemon::InFlight::~InFlight() {
  std::lock_guard lock(daemon_.mu_);
  daemon_.in_flight_ = nullptr;
}

Status AgentDaemon::ReloadTls() { return tls_ ? tls_->Reload() : Status::Ok(); }

namespace {

// Why each catalogue target cannot start on this host as configured (agent/start_check.h): its
// own first problem, else its first side service's. At most 500 bytes each, cut at a character
// boundary, control characters replaced, as the coordinator accepts (RegisterAgentRequest).
std::map<std::string, std::string> UnstartableTargets(const AgentConfig& config,
                                                      const std::vector<int>& cpus) {
  StartCheckOptions options;
  options.cpus = cpus;
  std::map<std::string, std::string> targets, services;
  for (const StartProblem& p : CheckStartable(config.catalogue, config.services, options)) {
    std::string& why = (p.kind == "target" ? targets : services)[p.name];
    if (why.empty()) why = p.why;
  }
  for (const TargetDef& def : config.catalogue) {
    for (const std::string& service : def.services) {
      auto it = services.find(service);
      if (it != services.end() && !targets.contains(def.name)) {
        targets[def.name] = "service \"" + service + "\": " + it->second;
      }
    }
  }
  for (auto& [name, why] : targets) {
    for (char& c : why) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    if (why.size() > 500) {
      size_t cut = 497;
      while (cut > 0 && (static_cast<unsigned char>(why[cut]) & 0xC0) == 0x80) --cut;
      why = why.substr(0, cut) + "...";
    }
  }
  return targets;
}

}  // namespace

void AgentDaemon::RegistrationLoop(std::string address) {
  auto channel =
      CoordinatorChannel(config_.coordinator, tls_ ? tls_->ChannelCredentials(Role::kCoordinator)
                                                   : grpc::InsecureChannelCredentials());
  auto stub = v1::Coordinator::NewStub(channel);
  v1::RegisterAgentRequest request;
  request.set_name(config_.name);
  for (const auto& role : config_.roles) request.add_roles(role);
  request.set_address(address);
  FillHostFacts(env_, service_.identity().allowed_cpus, request.mutable_host());
  for (const auto& name : service_.catalogue_names()) request.add_catalogue(name);
  for (const auto& [target, why] : UnstartableTargets(config_, service_.identity().allowed_cpus)) {
    if (std::find(request.catalogue().begin(), request.catalogue().end(), target) ==
        request.catalogue().end()) {
      continue;
    }
    spdlog::warn("agent {}: catalogue target {} cannot start on this host: {}", config_.name,
                 target, why);
    (*request.mutable_unstartable())[target] = why;
  }
  for (const auto& label : config_.labels) request.add_labels(label);
  for (const auto& [name, version] : service_.versions())
    (*request.mutable_versions())[name] = version;
  request.set_instance_proof(instance_proof_);

  std::string last_error;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    grpc::Status status = RegisterOrBeat(*stub, request);
    NoteReachability(status);
    if (status.ok() && registered_ && offer_pending_) offer_pending_ = !OfferSpool(*stub);
    if (!status.ok() && status.error_message() != last_error) {
      spdlog::warn("agent {}: coordinator {}: {}", config_.name, config_.coordinator,
                   status.error_message());
    }
    last_error = status.ok() ? "" : status.error_message();
    // A campaign-scoped side service outlives its last window until another campaign needs it
    // or it has been idle this long (docs/services.md, "When services stop").
    service_.StopIdleServices(kServiceIdle);
    ReapOrphans();
    lock.lock();
    cv_.wait_for(lock, registered_ ? pause_ : std::chrono::milliseconds(200),
                 [this] { return stopping_; });
  }
}

grpc::Status AgentDaemon::RegisterOrBeat(v1::Coordinator::Stub& stub,
                                         const v1::RegisterAgentRequest& request) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  InFlight call(*this, ctx);
  if (!registered_) {
    v1::RegisterAgentReply reply;
    grpc::Status status = stub.RegisterAgent(&ctx, request, &reply);
    if (status.ok()) {
      registered_ = true;
      // What the spool still holds (a crash, or a coordinator that went away before its
      // acknowledgement) is offered again after every registration.
      offer_pending_ = service_.spool() != nullptr;
      // Heartbeat three times per lease so one lost beat never expires it.
      pause_ = std::chrono::milliseconds(std::max<int64_t>(100, reply.lease_ms() / 3));
      lease_ = std::chrono::milliseconds(reply.lease_ms());
      spdlog::info("agent {} registered with coordinator {}", config_.name, config_.coordinator);
    }
    return status;
  }
  v1::HeartbeatRequest beat;
  beat.set_name(config_.name);
  beat.set_instance_proof(instance_proof_);
  v1::HeartbeatReply reply;
  grpc::Status status = stub.Heartbeat(&ctx, beat, &reply);
  if (status.ok() && !reply.known()) {
    // The coordinator restarted: the windows it was running are gone with it (it records them
    // as failed and runs them again), so their targets must not run on beside the next.
    registered_ = false;
    const size_t stopped = service_.StopAll();
    if (stopped > 0) {
      spdlog::warn("agent {}: coordinator {} restarted; stopped {} target(s) of its windows",
                   config_.name, config_.coordinator, stopped);
    }
  }
  return status;
}

void AgentDaemon::NoteReachability(const grpc::Status& status) {
  const auto now = clock_.Now();
  if (Unreachable(status)) {
    if (!unreachable_since_) unreachable_since_ = now;
    if (!registered_ || stopped_while_unreachable_ || now - *unreachable_since_ <= LostAfter()) {
      return;
    }
    // The coordinator has judged this agent lost by now and failed the windows it ran here
    // (docs/fleet.md, "Partitions"); their targets must not run on beside the windows measured
    // again.
    stopped_while_unreachable_ = true;
    const size_t stopped = service_.StopAll();
    spdlog::warn(
        "agent {}: coordinator {} unreachable for {} ms, longer than its lease and grace; "
        "stopped {} target(s) of its windows",
        config_.name, config_.coordinator,
        std::chrono::duration_cast<std::chrono::milliseconds>(now - *unreachable_since_).count(),
        stopped);
    return;
  }
  if (!unreachable_since_) return;
  // Back after a partition: a result spooled while the coordinator could not be reached (its
  // RESULT event or acknowledgement lost on the way) is offered now, not at the next
  // registration, which a coordinator that still knows this agent never asks for.
  if (status.ok() && registered_) offer_pending_ = service_.spool() != nullptr;
  if (status.ok()) {
    unreachable_since_.reset();
    stopped_while_unreachable_ = false;
  }
}

bool AgentDaemon::OfferSpool(v1::Coordinator::Stub& stub) {
  Spool& spool = *service_.spool();
  std::string after;
  size_t taken = 0;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return false;
    }
    auto page = spool.Page(after, kOfferPageBytes, kOfferPageResults);
    if (!page.ok()) {
      spdlog::error("agent {}: {}", config_.name, page.status().message());
      return false;
    }
    if (page->empty()) break;
    after = page->back().key;
    v1::OfferResultsRequest offer;
    offer.set_name(config_.name);
    offer.set_instance_proof(instance_proof_);
    std::set<std::string> offered;
    for (auto& record : *page) {
      auto* item = offer.add_spooled();
      item->set_key(record.key);
      item->set_payload(std::move(record.payload));
      offered.insert(record.key);
    }
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    InFlight call(*this, ctx);
    v1::OfferResultsReply reply;
    grpc::Status status = stub.OfferResults(&ctx, offer, &reply);
    if (Unreachable(status)) return false;
    if (!status.ok()) {
      // Kept: it is offered again after the next registration.
      spdlog::error("agent {}: coordinator refused {} spooled result(s) from {}: {}", config_.name,
                    offer.spooled_size(), offer.spooled(0).key(), status.error_message());
      continue;
    }
    for (const auto& key : reply.acknowledged()) {
      if (offered.count(key) == 0) continue;
      Status removed = spool.Remove(key);
      if (!removed.ok()) spdlog::error("agent {}: {}", config_.name, removed.message());
      ++taken;
    }
  }
  if (taken > 0) {
    spdlog::info("agent {}: coordinator took {} spooled results", config_.name, taken);
  }
  return true;
}

void AgentDaemon::Shutdown() {
  // First, so that load, external tools and starting targets end while the rest shuts down.
  service_.BeginShutdown();
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (in_flight_ != nullptr) in_flight_->TryCancel();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  metrics_.Stop();
  if (server_) {
    // Calls still running at the deadline are cancelled by gRPC; each watches for that.
    server_->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
    server_->Wait();
    server_.reset();
  }
  service_.StopAll();
}

}  // namespace benchlab
