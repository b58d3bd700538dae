// AgentService's server role (agent_service.h): starting targets from the catalogue with their
// side services, sampling them over a measured interval (Mark), profiling them, and stopping
// them and the campaign's services.
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "agent/checks.h"
#include "agent/orphans.h"
#include "agent/proc.h"
#include "agent/server/agent_service.h"
#include "agent/window_token.h"
#include "common/config_toml.h"
#include "common/git_rev.h"
#include "common/log.h"
#include "common/parse.h"
#include "common/printable.h"
#include "rpc/status.h"
#include "rpc/tls.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

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

}  // namespace

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

Result<CachedBuild> AgentService::BuildCommit(const TargetDef& def, const std::string& rev) {
  if (def.recipe.empty()) {
    return Status::FailedPrecondition("target \"" + def.name + "\" of agent \"" + identity_.name +
                                      "\" has no build recipe (source and build) in its "
                                      "catalogue, so no commit of it can be built");
  }
  if (Status text = CheckRevisionText(rev); !text.ok()) {
    return Status::InvalidArgument("commit: " + text.message());
  }
  auto oid = ResolveCommit(def.recipe.source, rev);
  if (!oid.ok()) {
    return Status(oid.status().code(),
                  "commit of target \"" + def.name + "\": " + oid.status().message());
  }
  std::lock_guard lock(build_mu_);
  if (build_cache_ == nullptr) {
    if (build_cache_dir_.empty()) {
      return Status::FailedPrecondition("agent \"" + identity_.name +
                                        "\" has no build cache directory ([build_cache] dir)");
    }
    auto opened = BuildCache::Open(build_cache_dir_, build_cache_max_bytes_);
    if (!opened.ok()) {
      spdlog::error("build cache {}: {}", build_cache_dir_, opened.status().message());
      return Status::FailedPrecondition("agent \"" + identity_.name +
                                        "\" cannot open its build cache " + build_cache_dir_ +
                                        ": " + opened.status().message());
    }
    build_cache_ = std::move(opened).value();
  }
  // The recorded build when there is one (a failure included: it is never built again), else
  // a build now.
  auto built = build_cache_->Build(def.recipe, *oid);
  if (!built.ok()) return built.status();
  if (built->ok)
    spdlog::info("target {}: commit {} built in {}", def.name, *oid, built->output_dir);
  return built;
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
  // A commit is built (or found built) before a slot of max_targets is taken: a build may take
  // its recipe's whole time limit.
  std::string out_dir;
  if (!req->commit().empty()) {
    auto built = BuildCommit(*def, req->commit());
    if (!built.ok()) return rpc::ToGrpcStatus(built.status());
    if (!built->ok) {
      return rpc::ToGrpcStatus(
          Status::FailedPrecondition("build of " + built->commit.substr(0, 12) +
                                     " failed: " + built->failure),
          rpc::kBuildFailedReason);
    }
    out_dir = built->output_dir;
    reply->set_commit(built->commit);
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
  options.out_dir = out_dir;
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
  reply->set_tls_ca_pem(active->target.tls_ca_pem);
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

grpc::Status AgentService::ListCommits(grpc::ServerContext* ctx, const v1::ListCommitsRequest* req,
                                       v1::ListCommitsReply* reply) {
  if (grpc::Status allowed = RequireRole(*ctx, tls_, {Role::kCoordinator}); !allowed.ok()) {
    return allowed;
  }
  CallWatch call(*this, ctx);
  const TargetDef* def = nullptr;
  for (const auto& entry : catalogue_) {
    if (entry.name == req->target()) def = &entry;
  }
  if (def == nullptr) {
    return rpc::ToGrpcStatus(Status::NotFound("agent \"" + identity_.name + "\" has no target " +
                                              config::Quote(PrintableText(req->target())) +
                                              " in its catalogue"));
  }
  if (def->recipe.empty()) {
    return rpc::ToGrpcStatus(Status::FailedPrecondition(
        "target \"" + def->name + "\" of agent \"" + identity_.name +
        "\" has no build recipe (source and build) in its catalogue, so it cannot be bisected"));
  }
  if (req->max_commits() < 2 || req->max_commits() > static_cast<int>(kMaxRangeCommits)) {
    return rpc::ToGrpcStatus(Status::InvalidArgument("max_commits: expected 2 to " +
                                                     std::to_string(kMaxRangeCommits) + ", got " +
                                                     std::to_string(req->max_commits())));
  }
  std::string oids[2];
  int k = 0;
  for (const auto& [field, rev] :
       {std::pair{"good", &req->good()}, std::pair{"bad", &req->bad()}}) {
    if (Status text = CheckRevisionText(*rev); !text.ok()) {
      return rpc::ToGrpcStatus(Status::InvalidArgument(std::string(field) + ": " + text.message()));
    }
    auto oid = ResolveCommit(def->recipe.source, *rev);
    if (!oid.ok()) {
      return rpc::ToGrpcStatus(
          Status(oid.status().code(), std::string(field) + ": " + oid.status().message()));
    }
    oids[k++] = *oid;
  }
  // max_commits counts both ends; the range after the good end holds one fewer.
  auto range = FirstParentRange(def->recipe.source, oids[0], oids[1],
                                static_cast<size_t>(req->max_commits()) - 1);
  if (!range.ok()) return rpc::ToGrpcStatus(range.status());
  auto good_subject = RunGit(def->recipe.source, {"log", "-1", "--format=%s", oids[0]});
  // A subject is the repository's text: printable and bounded before it leaves the agent.
  auto add = [reply](const std::string& oid, const std::string& subject) {
    auto* c = reply->add_commits();
    c->set_oid(oid);
    c->set_subject(ListedSubject(subject));
  };
  add(oids[0], good_subject.ok() ? good_subject->output : "");
  for (const Commit& c : *range) add(c.oid, c.subject);
  return grpc::Status::OK;
}

}  // namespace benchlab
