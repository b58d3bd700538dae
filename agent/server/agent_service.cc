#include "agent/server/agent_service.h"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "agent/checks.h"
#include "agent/conformance.h"
#include "agent/external_run.h"
#include "agent/host_check.h"
#include "agent/host_facts.h"
#include "agent/orphans.h"
#include "agent/proc.h"
#include "agent/selftest.h"
#include "agent/window_token.h"
#include "common/config_toml.h"
#include "common/log.h"
#include "common/parse.h"
#include "loadgen/load.h"
#include "loadgen/request.h"
#include "rpc/status.h"
#include "rpc/tls.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

std::vector<std::pair<std::string, std::string>> Headers(
    const google::protobuf::RepeatedPtrField<v1::Header>& headers) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& h : headers) out.emplace_back(h.name(), h.value());
  return out;
}

// A request to a checked name goes to its address; the Host header keeps naming the host as the
// caller gave it (unless the caller set one).
HeaderList WithHost(HeaderList headers, const CheckedTarget& target, uint16_t port) {
  if (target.name.empty()) return headers;
  for (const auto& [name, value] : headers) {
    if (strcasecmp(name.c_str(), "host") == 0) return headers;
  }
  headers.emplace_back("Host", HostHeaderValue(target.name, port));
  return headers;
}

// Why a call's CancelFlag was set, for its error.
std::string CancelReason(const grpc::ServerContext* ctx) {
  if (ctx != nullptr && std::chrono::system_clock::now() >= ctx->deadline()) {
    return "its deadline passed";
  }
  if (ctx != nullptr && ctx->IsCancelled()) return "the caller cancelled it";
  return "the agent is stopping";
}

Status CheckPort(int port) {
  if (port >= 1 && port <= 65535) return Status::Ok();
  return Status::InvalidArgument("port " + std::to_string(port) + ": expected 1 to 65535");
}

// Names the window and its log; it goes into a directory name.
constexpr size_t kMaxWindowLabel = 128;
// perf answers a switch at once; its stop and symbolisation take about half a second here.
constexpr std::chrono::milliseconds kProfileSwitchTimeout{2000};
// perf's start: it opens an event per thread of every sampled process and reads their mappings.
constexpr std::chrono::milliseconds kProfileStartTimeout{5000};
constexpr std::chrono::milliseconds kProfileFinishTimeout{20000};

// StartTargetRequest.campaign and EndCampaignRequest.campaign (proto/benchlab/v1/agent.proto):
// "<name>#<id>", 1 to 128 characters of [A-Za-z0-9._:#-]. It goes into logs and error messages,
// so nothing else is let through. Empty only where `required` is false (a target without side
// services needs no campaign).
constexpr size_t kMaxCampaignKey = 128;
Status CheckCampaignKey(std::string_view key, bool required) {
  if (key.empty() && !required) return Status::Ok();
  bool ok = !key.empty() && key.size() <= kMaxCampaignKey;
  for (char ch : key) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' ||
                ch == ':' || ch == '#' || ch == '-');
  }
  if (ok) return Status::Ok();
  return Status::InvalidArgument("campaign: expected 1 to " + std::to_string(kMaxCampaignKey) +
                                 " characters of [A-Za-z0-9._:#-], got " +
                                 std::to_string(key.size()) + " byte(s) outside that form");
}

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

size_t AgentService::StopAll() {
  std::map<std::string, std::shared_ptr<Active>> active;
  {
    std::lock_guard lock(mu_);
    active.swap(active_);
  }
  // Side by side, so that stopping N targets takes one grace period, not N.
  std::vector<std::thread> stoppers;
  for (auto& [handle, target] : active) {
    stoppers.emplace_back([target = target] {
      std::lock_guard lock(target->mu);
      target->sampler.reset();
      if (target->target.process) target->target.process->Stop(std::chrono::milliseconds(2000));
    });
  }
  for (auto& stopper : stoppers) stopper.join();
  services_.StopAll();
  return active.size();
}

void AgentService::BeginShutdown() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
  for (CancelFlag* call : calls_) call->Cancel();
}

Result<std::shared_ptr<AgentService::Active>> AgentService::Owned(const std::string& handle,
                                                                  const std::string& window) {
  BENCHLAB_RETURN_IF_ERROR(CheckWindowToken("window", window));
  std::lock_guard lock(mu_);
  auto it = active_.find(handle);
  if (it == active_.end()) return Status::NotFound("no running target " + config::Quote(handle));
  if (!TokensEqual(it->second->window, window)) {
    return Status::PermissionDenied("target " + config::Quote(handle) +
                                    " was not started by this window");
  }
  return it->second;
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

grpc::Status AgentService::StartTarget(grpc::ServerContext* ctx, const v1::StartTargetRequest* req,
                                       v1::StartTargetReply* reply) {
  if (grpc::Status allowed = RequireRole(*ctx, tls_, {Role::kCoordinator}); !allowed.ok()) {
    return allowed;
  }
  CallWatch call(*this, ctx);
  if (Status token = CheckWindowToken("window", req->window()); !token.ok())
    return rpc::ToGrpcStatus(token);
  if (req->window_label().size() > kMaxWindowLabel) {
    return rpc::ToGrpcStatus(
        Status::InvalidArgument("window_label: at most " + std::to_string(kMaxWindowLabel) +
                                " characters, got " + std::to_string(req->window_label().size())));
  }
  if (Status campaign = CheckCampaignKey(req->campaign(), false); !campaign.ok()) {
    return rpc::ToGrpcStatus(campaign);
  }
  const TargetDef* def = nullptr;
  for (const auto& entry : catalogue_) {
    if (entry.name == req->target()) def = &entry;
  }
  if (def == nullptr) {
    return rpc::ToGrpcStatus(Status::NotFound("agent \"" + identity_.name + "\" has no target \"" +
                                              req->target() + "\" in its catalogue"));
  }
  if (req->profile_hz() < 0 || req->profile_hz() > kMaxProfileHz) {
    return rpc::ToGrpcStatus(Status::InvalidArgument("profile_hz: 0 (no profile) to " +
                                                     std::to_string(kMaxProfileHz) + ", got " +
                                                     std::to_string(req->profile_hz())));
  }
  std::vector<int> cpus(req->cpus().begin(), req->cpus().end());
  auto random = RandomHex(16);
  if (!random.ok()) return rpc::ToGrpcStatus(random.status());
  const std::string handle = *random;
  {
    std::lock_guard lock(mu_);
    if (shutting_down_) {
      // Cancelled: the agent is going away (docs/agent.md), as when its calls are cancelled.
      return rpc::ToGrpcStatus(Status::Cancelled("agent \"" + identity_.name + "\" is stopping"));
    }
    const size_t held = active_.size() + starting_;
    if (held >= static_cast<size_t>(identity_.limits.max_targets)) {
      return rpc::ToGrpcStatus(Status::ResourceExhausted(
          "agent \"" + identity_.name + "\" already runs " + std::to_string(held) +
          " target(s), limits.max_targets = " + std::to_string(identity_.limits.max_targets) +
          ": a window must stop its target first"));
    }
    ++starting_;
  }
  // The slot is held until the target is running (in active_) or its start failed.
  struct Slot {
    AgentService& service;
    ~Slot() {
      std::lock_guard lock(service.mu_);
      --service.starting_;
    }
  } slot{*this};
  std::string label = req->window_label().empty() ? handle : req->window_label();
  for (char& ch : label) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') ch = '_';
  }
  ScopedLogContext log_context("", label);
  std::string run_dir =
      (std::filesystem::path(identity_.run_root) / (label + "-" + handle)).string();
  StartOptions options;
  options.allowed_cpus = identity_.allowed_cpus;
  options.tag_env = {{kAgentCookieVar, identity_.cookie}};
  options.spawner = &spawner_;
  options.use_cgroup = true;
  options.cgroup_parent = identity_.cgroup_parent;
  options.ready_host = identity_.target_host;
  options.template_dirs = identity_.template_dirs;
  options.cancel = &call.cancel();
  // Its side services first (docs/services.md): running for this campaign, reset when due.
  TargetDef launched = *def;
  if (!def->services.empty()) {
    ServiceWindow window{req->campaign(), def->name, req->round(), req->window()};
    auto prepared = services_.Prepare(def->services, window);
    if (!prepared.ok()) {
      services_.Release(req->window());
      return rpc::ToGrpcStatus(prepared.status());
    }
    launched = WithServiceEndpoints(*def, prepared->endpoints);
    for (const ServiceStartInfo& start : prepared->starts) {
      auto* out = reply->add_services();
      out->set_name(start.name);
      out->set_started(start.started);
      out->set_startup_ms(start.startup_ms);
    }
    for (const ResetRun& reset : prepared->resets) {
      auto* out = reply->add_resets();
      out->set_service(reset.service);
      out->set_ms(reset.ms);
    }
  }
  auto started = benchlab::LaunchTarget(env_, launched, cpus, run_dir, options);
  if (!started.ok()) {
    services_.Release(req->window());
    return rpc::ToGrpcStatus(started.status());
  }

  auto active = std::make_shared<Active>();
  active->target = std::move(started).value();
  active->window = req->window();
  active->services = def->services;
  reply->set_handle(handle);
  reply->set_pid(active->target.process->pid());
  reply->set_port(active->target.port);
  reply->set_startup_ms(active->target.startup_ms);
  reply->set_first_request_ms(active->target.first_request_ms);
  reply->set_idle_rss_kb(active->target.idle_rss_kb);
  for (int cpu : active->target.cpus) reply->add_cpus(cpu);
  if (auto scheduling = CheckScheduling(env_, active->target.process->pid()); scheduling.ok()) {
    if (scheduling->failed()) {
      for (const auto& reason : scheduling->reasons) reply->add_check_failures(reason);
    }
  }
  {
    std::lock_guard lock(mu_);
    auto version = versions_.find(def->name);
    reply->set_version(version == versions_.end() ? "unavailable" : version->second);
  }
  if (req->profile_hz() > 0) {
    // perf starts now, with its events off, and is switched on at Mark BEGIN. It runs where
    // the agent's own threads do, never on the target's CPUs, and a profile that cannot be
    // taken leaves the window as it is, saying why (docs/profiles.md).
    ProfileSpec spec;
    // Every process of the target's tree and of its services' trees as they stand once ready
    // (nginx's workers, a cluster's children, a pool's PostgreSQL backends). perf's per-process
    // events do not follow what those processes fork later (docs/profiles.md, "Limits").
    std::vector<pid_t> roots = services_.Pids(active->services);
    roots.insert(roots.begin(), active->target.process->pid());
    for (pid_t root : roots) {
      auto tree = ProcTreeSampler(env_, root).Sample();
      if (!tree.ok()) {
        spec.pids.push_back(root);
        continue;
      }
      for (pid_t pid : tree->pids) {
        if (std::find(spec.pids.begin(), spec.pids.end(), pid) == spec.pids.end()) {
          spec.pids.push_back(pid);
        }
      }
    }
    spec.frequency_hz = req->profile_hz();
    spec.scratch_dir = run_dir + "/profile";
    auto profiler = WindowProfiler::Start(env_, spec, kProfileStartTimeout);
    if (profiler.ok()) {
      active->profiler = std::move(profiler).value();
    } else {
      active->profile_error = profiler.status().message();
      spdlog::warn("target {}: no profile: {}", handle, active->profile_error);
    }
  }
  spdlog::info("started target {} as {} (pid {}, port {}, cpus {}, ready in {:.1f} ms, {})",
               def->name, handle, active->target.process->pid(), active->target.port,
               FormatCpuList(active->target.cpus), active->target.startup_ms,
               active->target.cgroup ? "in cgroup " + active->target.cgroup->path()
                                     : "no cgroup: " + active->target.cgroup_note);
  std::lock_guard lock(mu_);
  active_[handle] = std::move(active);
  return grpc::Status::OK;
}

grpc::Status AgentService::StopTarget(grpc::ServerContext* ctx, const v1::StopTargetRequest* req,
                                      v1::StopTargetReply* reply) {
  if (grpc::Status allowed = RequireRole(*ctx, tls_, {Role::kCoordinator}); !allowed.ok()) {
    return allowed;
  }
  auto owned = Owned(req->handle(), req->window());
  if (!owned.ok()) return rpc::ToGrpcStatus(owned.status());
  std::shared_ptr<Active> active = *owned;
  {
    // Another StopTarget of the same window may have taken it meanwhile.
    std::lock_guard lock(mu_);
    auto it = active_.find(req->handle());
    if (it == active_.end() || it->second != active) {
      return rpc::ToGrpcStatus(
          Status::NotFound("no running target " + config::Quote(req->handle())));
    }
    active_.erase(it);
  }
  std::lock_guard lock(active->mu);
  active->sampler.reset();
  active->services_interval.reset();
  const auto grace = std::chrono::milliseconds(std::clamp(req->grace_ms(), 0, 60'000));
  ExitInfo before;
  bool exited_before = active->target.process->Exited(&before);
  // Stop() also clears what the leader left of its group when it exited by itself.
  ExitInfo info =
      active->target.process->Stop(grace.count() > 0 ? grace : std::chrono::milliseconds(2000));
  if (exited_before) info = before;
  reply->set_exited_before_stop(exited_before);
  reply->set_exit_description(info.Describe());
  for (const auto& line : active->target.process->LastLogLines(10)) reply->add_last_log_lines(line);
  spdlog::info("stopped target {}: {}{}", req->handle(), info.Describe(),
               exited_before ? " (it had exited on its own)" : "");
  services_.Release(active->window);
  return grpc::Status::OK;
}

grpc::Status AgentService::Mark(grpc::ServerContext* ctx, const v1::MarkRequest* req,
                                v1::MarkReply* reply) {
  if (grpc::Status allowed = RequireRole(*ctx, tls_, {Role::kCoordinator}); !allowed.ok()) {
    return allowed;
  }
  auto owned = Owned(req->handle(), req->window());
  if (!owned.ok()) return rpc::ToGrpcStatus(owned.status());
  std::shared_ptr<Active> active = *owned;
  std::lock_guard lock(active->mu);
  if (req->kind() == v1::MarkRequest::BEGIN) {
    pid_t pid = active->target.process->pid();
    active->sampler = std::make_unique<IntervalSampler>(
        env_, pid, identity_.sample_period,
        NewHostWatch(pid, active->target.cpus, services_.Pids(active->services)),
        active->target.cgroup.get());
    Status begun = active->sampler->Begin();
    if (!begun.ok()) {
      active->sampler.reset();
      return rpc::ToGrpcStatus(begun);
    }
    // The services' samplers start right after the target's, then their probes are read.
    if (!active->services.empty()) active->services_interval = services_.Begin(active->services);
    if (active->profiler) {
      if (Status on = active->profiler->Enable(kProfileSwitchTimeout); !on.ok()) {
        active->profile_error = on.message();
        active->profiler.reset();
        spdlog::warn("target {}: no profile: {}", req->handle(), active->profile_error);
      }
    }
    reply->set_target_alive(true);
    return grpc::Status::OK;
  }
  if (req->kind() != v1::MarkRequest::END || !active->sampler) {
    return rpc::ToGrpcStatus(
        Status::FailedPrecondition("Mark END needs a Mark BEGIN on the same target first"));
  }
  auto figures = active->sampler->End();
  active->sampler.reset();
  if (active->profiler) {
    auto profile = active->profiler->Finish(kProfileFinishTimeout);
    active->profiler.reset();
    if (profile.ok()) {
      auto packed = CompressFolded(*profile, kMaxProfileBytes);
      if (packed.ok()) {
        reply->set_profile_folded_z(*packed);
        reply->set_profile_samples(profile->samples());
      } else {
        active->profile_error = packed.status().message();
      }
    } else {
      active->profile_error = profile.status().message();
    }
  }
  reply->set_profile_error(active->profile_error);
  if (active->services_interval) {
    std::vector<ProbeReading> probes;
    for (const ServiceInterval& s : active->services_interval->End(&probes)) {
      auto* out = reply->add_services();
      out->set_name(s.name);
      out->set_cpu_user_s(s.cpu_user_s);
      out->set_cpu_sys_s(s.cpu_sys_s);
      out->set_rss_mean_kb(s.rss_mean_kb);
      out->set_rss_peak_kb(s.rss_peak_kb);
      out->set_cpu_source(s.cpu_source);
      out->set_alive(s.alive);
      out->set_exit(s.exit);
    }
    for (const ProbeReading& p : probes) {
      auto* out = reply->add_probes();
      out->set_service(p.service);
      out->set_name(p.name);
      if (p.before) out->set_before(*p.before);
      if (p.after) out->set_after(*p.after);
      out->set_error(p.error);
    }
    active->services_interval.reset();
  }
  if (!figures.ok()) return rpc::ToGrpcStatus(figures.status());
  reply->set_cpu_user_s(figures->cpu_user_s);
  reply->set_cpu_sys_s(figures->cpu_sys_s);
  reply->set_rss_mean_kb(figures->rss_mean_kb);
  reply->set_rss_peak_kb(figures->rss_peak_kb);
  reply->set_interval_s(figures->interval_s);
  reply->set_target_alive(figures->target_alive && !active->target.process->Exited());
  reply->set_threads(figures->threads);
  reply->set_cpu_source(figures->cpu_source);
  reply->set_voluntary_ctxt_switches(figures->voluntary_ctxt_switches);
  reply->set_nonvoluntary_ctxt_switches(figures->nonvoluntary_ctxt_switches);
  for (const auto& s : figures->samples) {
    auto* out = reply->add_samples();
    out->set_t_s(s.t_s);
    out->set_cpu_pct(s.cpu_pct);
    out->set_rss_kb(s.rss_kb);
    if (figures->host) {
      // The host's sample that ends closest to this one (both run on the same ticks).
      const HostSample* best = nullptr;
      for (const auto& h : figures->host->samples) {
        if (!best || std::abs(h.t_s - s.t_s) < std::abs(best->t_s - s.t_s)) best = &h;
      }
      if (best) {
        out->set_host_busy_pct(best->busy_pct);
        out->set_foreign_pct(best->foreign_pct);
        out->set_steal_pct(best->steal_pct);
      }
    }
  }
  if (figures->host) {
    HostFiguresToProto(*figures->host, reply->mutable_host());
    NoteHost(*figures->host);
  } else if (!figures->host_error.empty()) {
    spdlog::warn("host figures unavailable for {}: {}", req->handle(), figures->host_error);
  }
  if (!req->spool_key().empty()) {
    Status spooled =
        SpoolPut(req->spool_key() + ".server", req->window(), reply->SerializeAsString());
    if (!spooled.ok()) return rpc::ToGrpcStatus(spooled);
  }
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

grpc::Status AgentService::EndCampaign(grpc::ServerContext* ctx, const v1::EndCampaignRequest* req,
                                       v1::EndCampaignReply* reply) {
  if (grpc::Status allowed = RequireRole(*ctx, tls_, {Role::kCoordinator}); !allowed.ok()) {
    return allowed;
  }
  CallWatch call(*this, ctx);
  if (Status campaign = CheckCampaignKey(req->campaign(), true); !campaign.ok()) {
    return rpc::ToGrpcStatus(campaign);
  }
  const ServiceManager::Ended ended = services_.StopCampaign(req->campaign());
  reply->set_services_stopped(static_cast<int32_t>(ended.stopped));
  reply->set_services_in_use(static_cast<int32_t>(ended.in_use));
  return grpc::Status::OK;
}

grpc::Status AgentService::CheckConformance(grpc::ServerContext* ctx,
                                            const v1::CheckConformanceRequest* req,
                                            v1::CheckConformanceReply* reply) {
  if (grpc::Status allowed = RequireRole(*ctx, tls_, {Role::kCoordinator}); !allowed.ok()) {
    return allowed;
  }
  CallWatch call(*this, ctx);
  if (Status port = CheckPort(req->port()); !port.ok()) return rpc::ToGrpcStatus(port);
  if (Status limits = CheckConformanceLimits(*req, identity_.limits); !limits.ok()) {
    return rpc::ToGrpcStatus(limits);
  }
  const auto port = static_cast<uint16_t>(req->port());
  std::vector<ContractCase> cases;
  for (const auto& in : req->cases()) {
    ContractCase c;
    c.name = in.name();
    c.negative = in.negative();
    c.request.method = in.method().empty() ? "GET" : in.method();
    c.request.path = in.path().empty() ? "/" : in.path();
    c.request.headers = Headers(in.headers());
    Status head = CheckRequestParts("case " + QuoteBytes(c.name, 40), c.request.method,
                                    c.request.path, c.request.headers);
    if (!head.ok()) return rpc::ToGrpcStatus(head);
    c.request.body = in.body();
    c.expect_status = in.expect_status();
    if (in.check_body()) c.expect_body = in.expect_body();
    c.expect_headers = Headers(in.expect_headers());
    cases.push_back(std::move(c));
  }
  auto target = identity_.allowed_targets.Check(req->host());
  if (!target.ok()) return rpc::ToGrpcStatus(target.status());
  for (ContractCase& c : cases) c.request.headers = WithHost(c.request.headers, *target, port);
  auto timeout = std::chrono::milliseconds(req->timeout_ms() > 0 ? req->timeout_ms() : 2000);
  std::vector<std::string> diffs;
  for (const ContractCase& c : cases) {
    if (call.cancel().cancelled()) {
      return rpc::ToGrpcStatus(Status::Cancelled("CheckConformance cancelled"));
    }
    for (auto& d : CheckContract(target->address, port, {c}, timeout, identity_.limits.max_body)) {
      diffs.push_back(d);
    }
  }
  reply->set_ok(diffs.empty());
  for (auto& d : diffs) reply->add_diffs(std::move(d));
  return grpc::Status::OK;
}

Result<LoadOptions> AgentService::LoadOptionsFor(const v1::RunLoadRequest& req) {
  BENCHLAB_RETURN_IF_ERROR(CheckPort(req.port()));
  BENCHLAB_RETURN_IF_ERROR(CheckLoadLimits(req, identity_.limits));
  if (!req.spool_key().empty() || !req.window().empty()) {
    BENCHLAB_RETURN_IF_ERROR(CheckWindowToken("window", req.window()));
  }
  LoadOptions options;
  options.port = static_cast<uint16_t>(req.port());
  options.method = req.method().empty() ? "GET" : req.method();
  options.path = req.path().empty() ? "/" : req.path();
  options.headers = Headers(req.headers());
  BENCHLAB_RETURN_IF_ERROR(
      CheckRequestParts("RunLoad", options.method, options.path, options.headers));
  options.body = req.body();
  options.connections = req.connections();
  options.threads = req.threads() > 0 ? req.threads() : 1;
  options.cpus.assign(req.cpus().begin(), req.cpus().end());
  const auto& allowed = identity_.allowed_cpus;
  if (options.cpus.empty()) {
    options.cpus = allowed;
  } else if (!allowed.empty() && !std::includes(allowed.begin(), allowed.end(),
                                                options.cpus.begin(), options.cpus.end())) {
    return Status::InvalidArgument("load CPUs " + FormatCpuList(options.cpus) +
                                   " are outside agent \"" + identity_.name + "\"'s allowed CPUs " +
                                   FormatCpuList(allowed));
  }
  options.warmup = std::chrono::milliseconds(req.warmup_ms());
  options.duration = std::chrono::milliseconds(req.duration_ms());
  if (req.timeout_ms() > 0) options.timeout = std::chrono::milliseconds(req.timeout_ms());
  if (req.depth() > 0) options.depth = req.depth();
  options.rate = req.rate();
  options.arrival = req.poisson() ? Arrival::kPoisson : Arrival::kConstant;
  if (req.seed() != 0) options.seed = req.seed();
  options.max_conns = req.max_conns();
  options.expect_status.assign(req.expect_status().begin(), req.expect_status().end());
  if (req.check_body()) options.expect_body = req.expect_body();
  options.max_body = identity_.limits.max_body;
  // Last: the one check that may wait for DNS.
  auto target = identity_.allowed_targets.Check(req.host());
  if (!target.ok()) return target.status();
  options.host = target->address;
  options.headers = WithHost(std::move(options.headers), *target, options.port);
  return options;
}

namespace {

// Runs benchlab's own generator (loadgen's GenerateLoad) and fills its RESULT.
Status LoadWithGenerator(const LoadOptions& options, const MeasureMarkFn& mark,
                         v1::LoadResult* out) {
  auto result = GenerateLoad(options, mark);
  if (!result.ok()) return result.status();
  out->set_requests(result->requests);
  out->set_duration_s(result->duration_s);
  out->set_rps(result->rps);
  out->set_histogram(result->latency_us.Serialize());
  for (const auto& [status, count] : result->status_counts) {
    auto* sc = out->add_status_counts();
    sc->set_status(status);
    sc->set_count(count);
  }
  auto* errors = out->mutable_errors();
  errors->set_connect(result->errors.connect);
  errors->set_read(result->errors.read);
  errors->set_write(result->errors.write);
  errors->set_timeout(result->errors.timeout);
  errors->set_parse(result->errors.parse);
  errors->set_body_too_large(result->errors.body_too_large);
  out->set_reconnects(result->reconnects);
  for (double cpu : result->thread_cpu_s) out->add_thread_cpu_s(cpu);
  for (uint64_t n : result->per_second_requests) out->add_per_second_requests(n);
  for (const SeriesPoint& point : result->series) out->add_per_second_p99_us(point.p99_us);
  out->set_mismatches(result->errors.mismatch);
  out->set_open_loop(result->open_loop);
  out->set_rate(result->rate);
  out->set_sent(result->sent);
  out->set_dropped(result->dropped);
  if (result->open_loop) out->set_histogram_uncorrected(result->latency_uncorrected_us.Serialize());
  out->set_generator_bound(result->generator_bound);
  out->set_throughput_rps(result->throughput_rps);
  out->set_cpu_user_s(result->cpu_user_s);
  out->set_cpu_sys_s(result->cpu_sys_s);
  out->set_depth(options.depth);
  out->set_tool("benchlab");
  out->set_record_json(LoadResultToJson(*result));
  return Status::Ok();
}

// The wrk or h2load command a RunLoad request asks for (docs/load.md, "External tools").
Result<ExternalLoadSpec> ToolSpecFor(const v1::RunLoadRequest& req, const LoadOptions& options) {
  if (req.tool() != "wrk" && req.tool() != "h2load") {
    return Status::InvalidArgument("tool: expected benchlab, wrk or h2load, got \"" + req.tool() +
                                   "\"");
  }
  if (options.rate > 0) {
    return Status::InvalidArgument(req.tool() + " measures closed loop only, not a rate");
  }
  ExternalLoadSpec spec;
  spec.tool = req.tool();
  spec.binary = req.tool();
  spec.host = options.host;
  spec.port = options.port;
  spec.method = options.method;
  spec.path = options.path;
  spec.headers = options.headers;
  spec.body = options.body;
  spec.connections = options.connections;
  spec.threads = options.threads;
  spec.depth = options.depth;
  spec.duration_s = std::chrono::duration<double>(options.duration).count();
  spec.timeout_s = std::chrono::duration<double>(options.timeout).count();
  return spec;
}

// Runs wrk or h2load in `scratch` (removed afterwards) and fills its RESULT.
Status LoadWithTool(SysEnv& env, const ExternalLoadSpec& spec, const LoadOptions& options,
                    const std::string& scratch, const CancelFlag& cancel, const MeasureMarkFn& mark,
                    v1::LoadResult* out) {
  auto run = RunExternalLoad(env, spec, options.cpus,
                             std::chrono::duration_cast<std::chrono::milliseconds>(options.warmup),
                             scratch, mark, &cancel);
  std::error_code ec;
  std::filesystem::remove_all(scratch, ec);
  if (!run.ok()) return run.status();

  const ExternalLoadFigures& f = run->figures;
  out->set_tool(spec.tool);
  out->set_requests(f.requests);
  out->set_duration_s(f.duration_s);
  out->set_rps(f.rps);
  out->set_throughput_rps(f.rps);
  auto* errors = out->mutable_errors();
  errors->set_connect(f.errors_connect);
  errors->set_read(f.errors_read);
  errors->set_write(f.errors_write);
  errors->set_timeout(f.errors_timeout);
  // Neither tool checks bodies; a response outside 2xx/3xx is what they can tell.
  out->set_mismatches(f.non_2xx_3xx);
  out->set_cpu_user_s(run->cpu_user_s);
  out->set_cpu_sys_s(run->cpu_sys_s);
  out->set_depth(options.depth);
  for (const std::string& column : f.unavailable) out->add_unavailable(column);
  auto* latency = out->mutable_external_latency();
  if (f.p50_us) latency->set_p50_us(*f.p50_us);
  if (f.p90_us) latency->set_p90_us(*f.p90_us);
  if (f.p99_us) latency->set_p99_us(*f.p99_us);
  if (f.mean_us) latency->set_mean_us(*f.mean_us);
  if (f.max_us) latency->set_max_us(*f.max_us);
  nlohmann::json record = {
      {"tool", f.tool},
      {"version", f.version},
      {"argv", run->argv},
      {"requests", f.requests},
      {"duration_s", f.duration_s},
      {"rps", f.rps},
      {"latency_us",
       {{"p50", f.p50_us ? nlohmann::json(*f.p50_us) : nlohmann::json(nullptr)},
        {"p75", f.p75_us ? nlohmann::json(*f.p75_us) : nlohmann::json(nullptr)},
        {"p90", f.p90_us ? nlohmann::json(*f.p90_us) : nlohmann::json(nullptr)},
        {"p99", f.p99_us ? nlohmann::json(*f.p99_us) : nlohmann::json(nullptr)},
        {"mean", f.mean_us ? nlohmann::json(*f.mean_us) : nlohmann::json(nullptr)},
        {"stdev", f.stdev_us ? nlohmann::json(*f.stdev_us) : nlohmann::json(nullptr)},
        {"min", f.min_us ? nlohmann::json(*f.min_us) : nlohmann::json(nullptr)},
        {"max", f.max_us ? nlohmann::json(*f.max_us) : nlohmann::json(nullptr)}}},
      {"non_2xx_3xx", f.non_2xx_3xx},
      {"status_classes", f.status_classes},
      {"errors",
       {{"connect", f.errors_connect},
        {"read", f.errors_read},
        {"write", f.errors_write},
        {"timeout", f.errors_timeout}}},
      {"failed", f.failed ? nlohmann::json(*f.failed) : nlohmann::json(nullptr)},
      {"bytes_per_s", f.bytes_per_s ? nlohmann::json(*f.bytes_per_s) : nlohmann::json(nullptr)},
      {"cpu_user_s", run->cpu_user_s},
      {"cpu_sys_s", run->cpu_sys_s},
      {"wall_s", run->wall_s},
      {"unavailable", f.unavailable},
      {"output", run->output},
  };
  out->set_record_json(record.dump());
  return Status::Ok();
}

}  // namespace

grpc::Status AgentService::RunLoad(grpc::ServerContext* ctx, const v1::RunLoadRequest* req,
                                   grpc::ServerWriter<v1::RunLoadEvent>* writer) {
  if (grpc::Status allowed = RequireRole(*ctx, tls_, {Role::kCoordinator}); !allowed.ok()) {
    return allowed;
  }
  CallWatch call(*this, ctx);
  auto checked = LoadOptionsFor(*req);
  if (!checked.ok()) return rpc::ToGrpcStatus(checked.status());
  LoadOptions& options = *checked;
  options.stop = call.cancel().flag();
  const CancelFlag& cancel = call.cancel();
  if (req->tool().empty() || req->tool() == "benchlab") {
    return WatchAndSpoolLoad(ctx, *req, options.cpus, cancel, writer,
                             [&](const MeasureMarkFn& mark, v1::LoadResult* out) {
                               return LoadWithGenerator(options, mark, out);
                             });
  }
  auto spec = ToolSpecFor(*req, options);
  if (!spec.ok()) return rpc::ToGrpcStatus(spec.status());
  const std::string scratch = NewToolScratch(req->tool());
  return WatchAndSpoolLoad(ctx, *req, options.cpus, cancel, writer,
                           [&](const MeasureMarkFn& mark, v1::LoadResult* out) {
                             return LoadWithTool(env_, *spec, options, scratch, cancel, mark, out);
                           });
}

std::string AgentService::NewToolScratch(const std::string& tool) {
  std::lock_guard lock(mu_);
  return (std::filesystem::path(identity_.run_root) /
          ("load-" + tool + "-" + std::to_string(next_scratch_++)))
      .string();
}

grpc::Status AgentService::WatchAndSpoolLoad(grpc::ServerContext* ctx,
                                             const v1::RunLoadRequest& req,
                                             const std::vector<int>& cpus, const CancelFlag& cancel,
                                             grpc::ServerWriter<v1::RunLoadEvent>* writer,
                                             const LoadProducer& produce) {
  struct Running {  // counts this call in readings().loads_running while it produces load
    AgentService& service;
    explicit Running(AgentService& s) : service(s) {
      std::lock_guard lock(service.mu_);
      ++service.last_.loads_running;
    }
    ~Running() {
      std::lock_guard lock(service.mu_);
      --service.last_.loads_running;
    }
  } running(*this);
  // The load host is watched over exactly the producer's measured interval.
  IntervalSampler host(env_, 0, identity_.sample_period, NewHostWatch(0, cpus));
  bool watching = false;
  Result<IntervalFigures> host_figures = Status::Unavailable("the load host was not watched");
  v1::RunLoadEvent event;
  event.set_kind(v1::RunLoadEvent::RESULT);
  v1::LoadResult* out = event.mutable_result();
  Status produced = produce(
      [&](bool measuring) {
        if (measuring) {
          watching = host.Begin().ok();
        } else if (watching) {
          host_figures = host.End();
          watching = false;
        }
        v1::RunLoadEvent edge;
        edge.set_kind(measuring ? v1::RunLoadEvent::MEASURE_START : v1::RunLoadEvent::MEASURE_END);
        writer->Write(edge);
      },
      out);
  if (watching) (void)host.End();
  if (cancel.cancelled()) {
    // Nothing is spooled: a window whose caller went away has no result to keep.
    return rpc::ToGrpcStatus(Status::Cancelled("RunLoad cancelled: " + CancelReason(ctx)));
  }
  if (!produced.ok()) return rpc::ToGrpcStatus(produced);
  if (host_figures.ok() && host_figures->host) {
    HostFiguresToProto(*host_figures->host, out->mutable_host());
    NoteHost(*host_figures->host);
  }
  if (!req.spool_key().empty()) {
    Status spooled = SpoolPut(req.spool_key() + ".load", req.window(), event.SerializeAsString());
    if (!spooled.ok()) return rpc::ToGrpcStatus(spooled);
  }
  writer->Write(event);
  return grpc::Status::OK;
}

}  // namespace benchlab
