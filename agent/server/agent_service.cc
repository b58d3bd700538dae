// AgentService's calls of both roles (agent_service.h): who the agent is and what its host is
// like, the host check, the spool's acknowledgements, and the cancellation of calls. The server
// role is in agent_service_server.cc, the load role in agent_service_load.cc.
#include "agent/server/agent_service.h"

#include <unistd.h>

#include <algorithm>

#include "agent/checks.h"
#include "agent/host_check.h"
#include "agent/host_facts.h"
#include "agent/orphans.h"
#include "agent/selftest.h"
#include "common/parse.h"
#include "rpc/status.h"
#include "rpc/tls.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

AgentIdentity Resolved(AgentIdentity identity) {
  identity.limits = ResolveLimits(identity.limits, identity.allowed_cpus.size());
  return identity;
}

}  // namespace

AgentService::CallWatch::CallWatch(AgentService& service, grpc::ServerContext* ctx)
    : service_(service) {
  {
    std::lock_guard lock(service_.mu_);
    if (service_.shutting_down_) cancel_.Cancel();
    service_.calls_.insert(&cancel_);
  }
  if (ctx == nullptr || cancel_.cancelled()) return;
  const auto deadline = ctx->deadline();
  thread_ = std::thread([this, ctx, deadline] {
    std::unique_lock lock(mu_);
    while (!done_) {
      if (ctx->IsCancelled() || std::chrono::system_clock::now() >= deadline) {
        cancel_.Cancel();
        return;
      }
      cv_.wait_for(lock, kCallPoll);
    }
  });
}

AgentService::CallWatch::~CallWatch() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(service_.mu_);
  service_.calls_.erase(&cancel_);
}

void HostFiguresToProto(const HostWindow& in, v1::HostFigures* out) {
  out->set_interval_s(in.interval_s);
  out->set_cpus(in.cpus);
  out->set_busy_pct(in.busy_pct);
  out->set_idle_pct(in.idle_pct);
  out->set_iowait_pct(in.iowait_pct);
  out->set_steal_pct(in.steal_pct);
  out->set_own_pct(in.own_pct);
  out->set_foreign_mean_pct(in.foreign_mean_pct);
  out->set_foreign_max_pct(in.foreign_max_pct);
  for (const auto& user : in.top_foreign) {
    auto* u = out->add_top_foreign();
    u->set_comm(user.comm);
    u->set_cpu_pct(user.cpu_pct);
  }
  if (in.max_temp_c) out->set_max_temp_c(*in.max_temp_c);
  if (in.throttle_core_events) out->set_throttle_core_events(*in.throttle_core_events);
  if (in.throttle_package_events) out->set_throttle_package_events(*in.throttle_package_events);
  if (in.min_freq_ratio) out->set_min_freq_ratio(*in.min_freq_ratio);
  if (in.swap_in_pages) out->set_swap_in_pages(*in.swap_in_pages);
  if (in.swap_out_pages) out->set_swap_out_pages(*in.swap_out_pages);
}

void FillHostFacts(SysEnv& env, const std::vector<int>& cpus, v1::HostFacts* out) {
  HostFacts facts = ReadHostFacts(env);
  out->set_hostname(facts.hostname);
  out->set_cpu_model(facts.cpu_model);
  out->set_logical_cores(facts.logical_cores);
  out->set_physical_cores(facts.physical_cores);
  out->set_smt(facts.smt);
  out->set_governor(facts.governor);
  out->set_kernel(facts.kernel);
  out->set_memory_kb(facts.memory_kb);
  out->set_hypervisor(facts.hypervisor);
  out->set_agent_version(BENCHLAB_VERSION);
  for (const HostFinding& f : CheckHost(env, cpus)) {
    v1::HostFinding* finding = out->add_findings();
    finding->set_name(f.name);
    finding->set_value(f.value);
    finding->set_status(f.status);
    finding->set_why(f.why);
  }
}

ServiceOptions ServiceOptionsFor(const AgentIdentity& identity, SpawnThread* spawner) {
  ServiceOptions options;
  options.run_root = identity.run_root;
  if (!identity.service_dir.empty()) options.service_dir = identity.service_dir;
  options.allowed_cpus = identity.allowed_cpus;
  options.tag_env = {{kAgentCookieVar, identity.cookie}};
  options.spawner = spawner;
  options.cgroup_parent = identity.cgroup_parent;
  options.sample_period = identity.sample_period;
  return options;
}

AgentService::AgentService(SysEnv& env, AgentIdentity identity, std::vector<TargetDef> catalogue,
                           std::vector<ServiceDef> services)
    : env_(env),
      identity_(Resolved(std::move(identity))),
      catalogue_(std::move(catalogue)),
      services_(env, std::move(services), ServiceOptionsFor(identity_, &spawner_)) {
  for (const auto& def : catalogue_) catalogue_names_.push_back(def.name);
}

AgentService::~AgentService() { StopAll(); }

void AgentService::SetVersions(std::map<std::string, std::string> versions) {
  std::lock_guard lock(mu_);
  versions_ = std::move(versions);
}

std::map<std::string, std::string> AgentService::versions() {
  std::lock_guard lock(mu_);
  return versions_;
}

void AgentService::BeginShutdown() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
  for (CancelFlag* call : calls_) call->Cancel();
}

grpc::Status AgentService::DescribeHost(grpc::ServerContext* ctx, const v1::DescribeHostRequest*,
                                        v1::DescribeHostReply* reply) {
  if (grpc::Status allowed = RequireRole(*ctx, tls_, {Role::kCoordinator}); !allowed.ok()) {
    return allowed;
  }
  reply->set_agent_name(identity_.name);
  for (const auto& role : identity_.roles) reply->add_roles(role);
  FillHostFacts(env_, identity_.allowed_cpus, reply->mutable_host());
  for (const auto& name : catalogue_names_) reply->add_catalogue(name);
  return grpc::Status::OK;
}

std::unique_ptr<HostWatch> AgentService::NewHostWatch(pid_t target, const std::vector<int>& cpus,
                                                      const std::vector<pid_t>& also_own) {
  HostWatchOptions options;
  if (target != 0) options.own_roots.push_back(target);
  for (pid_t root : also_own) options.own_roots.push_back(root);
  options.own_roots.push_back(getpid());
  for (pid_t root : identity_.own_roots) options.own_roots.push_back(root);
  options.pinned_cpus = cpus;
  return std::make_unique<HostWatch>(env_, options);
}

AgentReadings AgentService::readings() {
  std::lock_guard lock(mu_);
  AgentReadings out = last_;
  out.targets_running = active_.size();
  return out;
}

void AgentService::NoteHost(const HostWindow& host) {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::lock_guard lock(mu_);
  last_.foreign_cpu_cores = host.foreign_mean_pct / 100.0;
  last_.steal_cpu_cores = host.steal_pct / 100.0;
  last_.max_temp_c = host.max_temp_c;
  last_.interval_end_unix_s = now;
}

Status AgentService::SpoolPut(const std::string& key, const std::string& window,
                              const std::string& bytes) {
  if (!spool_) return Status::Ok();
  Status st = spool_->Put(key, window, bytes);
  if (!st.ok()) spdlog::error("spool: {}", st.message());
  return st;
}

grpc::Status AgentService::CheckHost(grpc::ServerContext* ctx, const v1::CheckHostRequest* req,
                                     v1::CheckHostReply* reply) {
  if (grpc::Status allowed = RequireRole(*ctx, tls_, {Role::kCoordinator}); !allowed.ok()) {
    return allowed;
  }
  std::vector<int> cpus(req->cpus().begin(), req->cpus().end());
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  const auto& allowed = identity_.allowed_cpus;
  if (cpus.empty()) {
    cpus = allowed;
  } else if (!allowed.empty() &&
             !std::includes(allowed.begin(), allowed.end(), cpus.begin(), cpus.end())) {
    return rpc::ToGrpcStatus(
        Status::InvalidArgument("cpus " + FormatCpuList(cpus) + " are outside agent \"" +
                                identity_.name + "\"'s allowed CPUs " + FormatCpuList(allowed)));
  }
  auto add = [reply](const CheckResult& result) {
    for (const auto& reason : result.reasons) {
      if (result.outcome == CheckOutcome::kFail) reply->add_failures(reason);
      if (result.outcome == CheckOutcome::kUnavailable) reply->add_unavailable(reason);
    }
  };
  add(CheckPower(env_));
  auto own = CheckScheduling(env_, getpid());
  if (own.ok()) add(*own);
  auto selftest = RunSelfTest(env_, cpus);
  if (!selftest.ok()) return rpc::ToGrpcStatus(selftest.status());
  reply->set_selftest_wall_ms(selftest->time_ms);
  {
    std::lock_guard lock(mu_);
    last_.selftest_wall_s = selftest->time_ms / 1000.0;
  }
  reply->set_selftest_cpu_ms(selftest->cpu_ms);
  reply->set_selftest_passes(selftest->passes);
  reply->set_selftest_descheduled(selftest->descheduled);
  return grpc::Status::OK;
}

grpc::Status AgentService::Acknowledge(grpc::ServerContext* ctx, const v1::AcknowledgeRequest* req,
                                       v1::AcknowledgeReply*) {
  if (grpc::Status allowed = RequireRole(*ctx, tls_, {Role::kCoordinator}); !allowed.ok()) {
    return allowed;
  }
  if (!spool_) return grpc::Status::OK;
  for (const auto& ack : req->acks()) {
    auto removed = spool_->RemoveForWindow(ack.key(), ack.window());
    if (!removed.ok()) return rpc::ToGrpcStatus(removed.status());
    if (!*removed) {
      // Absent already, or spooled under another window: that caller does not own it.
      spdlog::debug("acknowledgement of {} ignored: no result of that window", ack.key());
    }
  }
  return grpc::Status::OK;
}

}  // namespace benchlab
