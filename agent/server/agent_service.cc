#include "agent/server/agent_service.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "agent/checks.h"
#include "agent/conformance.h"
#include "agent/external_run.h"
#include "agent/host_facts.h"
#include "agent/orphans.h"
#include "agent/selftest.h"
#include "common/parse.h"
#include "loadgen/load.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

grpc::Status ToGrpc(const Status& status) {
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (status.code()) {
    case StatusCode::kOk: return grpc::Status::OK;
    case StatusCode::kInvalidArgument: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case StatusCode::kNotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case StatusCode::kAlreadyExists: code = grpc::StatusCode::ALREADY_EXISTS; break;
    case StatusCode::kFailedPrecondition: code = grpc::StatusCode::FAILED_PRECONDITION; break;
    case StatusCode::kDeadlineExceeded: code = grpc::StatusCode::DEADLINE_EXCEEDED; break;
    case StatusCode::kUnavailable: code = grpc::StatusCode::UNAVAILABLE; break;
    default: break;
  }
  return grpc::Status(code, status.message());
}

std::vector<std::pair<std::string, std::string>> Headers(
    const google::protobuf::RepeatedPtrField<v1::Header>& headers) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& h : headers) out.emplace_back(h.name(), h.value());
  return out;
}

}  // namespace

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

void FillHostFacts(SysEnv& env, v1::HostFacts* out) {
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
}

AgentService::AgentService(SysEnv& env, AgentIdentity identity, std::vector<TargetDef> catalogue)
    : env_(env), identity_(std::move(identity)), catalogue_(std::move(catalogue)) {
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
  for (auto& [handle, target] : active) {
    std::lock_guard lock(target->mu);
    target->sampler.reset();
    if (target->target.process) target->target.process->Stop(std::chrono::milliseconds(2000));
  }
  return active.size();
}

std::shared_ptr<AgentService::Active> AgentService::Find(const std::string& handle) {
  std::lock_guard lock(mu_);
  auto it = active_.find(handle);
  return it == active_.end() ? nullptr : it->second;
}

grpc::Status AgentService::DescribeHost(grpc::ServerContext*, const v1::DescribeHostRequest*,
                                        v1::DescribeHostReply* reply) {
  reply->set_agent_name(identity_.name);
  for (const auto& role : identity_.roles) reply->add_roles(role);
  FillHostFacts(env_, reply->mutable_host());
  for (const auto& name : catalogue_names_) reply->add_catalogue(name);
  return grpc::Status::OK;
}

grpc::Status AgentService::StartTarget(grpc::ServerContext*, const v1::StartTargetRequest* req,
                                       v1::StartTargetReply* reply) {
  const TargetDef* def = nullptr;
  for (const auto& entry : catalogue_) {
    if (entry.name == req->target()) def = &entry;
  }
  if (def == nullptr) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        "agent \"" + identity_.name + "\" has no target \"" + req->target() +
                            "\" in its catalogue");
  }
  std::vector<int> cpus(req->cpus().begin(), req->cpus().end());
  std::string handle;
  {
    std::lock_guard lock(mu_);
    handle = "t" + std::to_string(next_handle_++);
  }
  std::string label = req->window_label().empty() ? handle : req->window_label();
  for (char& ch : label) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') ch = '_';
  }
  std::string run_dir =
      (std::filesystem::path(identity_.run_root) / (label + "-" + handle)).string();
  StartOptions options;
  options.allowed_cpus = identity_.allowed_cpus;
  options.tag_env = {{kAgentCookieVar, identity_.cookie}};
  options.spawner = &spawner_;
  options.use_cgroup = true;
  options.ready_host = identity_.target_host;
  auto started = benchlab::StartTarget(env_, *def, cpus, run_dir, options);
  if (!started.ok()) return ToGrpc(started.status());

  auto active = std::make_shared<Active>();
  active->target = std::move(started).value();
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
  spdlog::info("started target {} as {} (pid {}, port {}, cpus {}, ready in {:.1f} ms, {})",
               def->name, handle, active->target.process->pid(), active->target.port,
               FormatCpuList(active->target.cpus), active->target.startup_ms,
               active->target.cgroup ? "in cgroup " + active->target.cgroup->path()
                                     : "no cgroup: " + active->target.cgroup_note);
  std::lock_guard lock(mu_);
  active_[handle] = std::move(active);
  return grpc::Status::OK;
}

grpc::Status AgentService::StopTarget(grpc::ServerContext*, const v1::StopTargetRequest* req,
                                      v1::StopTargetReply* reply) {
  std::shared_ptr<Active> active;
  {
    std::lock_guard lock(mu_);
    auto it = active_.find(req->handle());
    if (it == active_.end()) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no running target " + req->handle());
    }
    active = it->second;
    active_.erase(it);
  }
  std::lock_guard lock(active->mu);
  active->sampler.reset();
  ExitInfo before;
  bool exited_before = active->target.process->Exited(&before);
  // Stop() also clears what the leader left of its group when it exited by itself.
  ExitInfo info = active->target.process->Stop(
      std::chrono::milliseconds(req->grace_ms() > 0 ? req->grace_ms() : 2000));
  if (exited_before) info = before;
  reply->set_exited_before_stop(exited_before);
  reply->set_exit_description(info.Describe());
  for (const auto& line : active->target.process->LastLogLines(10)) reply->add_last_log_lines(line);
  spdlog::info("stopped target {}: {}{}", req->handle(), info.Describe(),
               exited_before ? " (it had exited on its own)" : "");
  return grpc::Status::OK;
}

grpc::Status AgentService::Mark(grpc::ServerContext*, const v1::MarkRequest* req,
                                v1::MarkReply* reply) {
  auto active = Find(req->handle());
  if (!active) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no running target " + req->handle());
  std::lock_guard lock(active->mu);
  if (req->kind() == v1::MarkRequest::BEGIN) {
    pid_t pid = active->target.process->pid();
    active->sampler = std::make_unique<IntervalSampler>(
        env_, pid, identity_.sample_period, NewHostWatch(pid, active->target.cpus),
        active->target.cgroup.get());
    Status begun = active->sampler->Begin();
    if (!begun.ok()) {
      active->sampler.reset();
      return ToGrpc(begun);
    }
    reply->set_target_alive(true);
    return grpc::Status::OK;
  }
  if (req->kind() != v1::MarkRequest::END || !active->sampler) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "Mark END needs a Mark BEGIN on the same target first");
  }
  auto figures = active->sampler->End();
  active->sampler.reset();
  if (!figures.ok()) return ToGrpc(figures.status());
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
  } else if (!figures->host_error.empty()) {
    spdlog::warn("host figures unavailable for {}: {}", req->handle(), figures->host_error);
  }
  if (!req->spool_key().empty()) {
    Status spooled = SpoolPut(req->spool_key() + ".server", reply->SerializeAsString());
    if (!spooled.ok()) return ToGrpc(spooled);
  }
  return grpc::Status::OK;
}

std::unique_ptr<HostWatch> AgentService::NewHostWatch(pid_t target, const std::vector<int>& cpus) {
  HostWatchOptions options;
  if (target != 0) options.own_roots.push_back(target);
  options.own_roots.push_back(getpid());
  for (pid_t root : identity_.own_roots) options.own_roots.push_back(root);
  options.pinned_cpus = cpus;
  return std::make_unique<HostWatch>(env_, options);
}

Status AgentService::SpoolPut(const std::string& key, const std::string& bytes) {
  if (!spool_) return Status::Ok();
  Status st = spool_->Put(key, bytes);
  if (!st.ok()) spdlog::error("spool: {}", st.message());
  return st;
}

grpc::Status AgentService::CheckHost(grpc::ServerContext*, const v1::CheckHostRequest* req,
                                     v1::CheckHostReply* reply) {
  std::vector<int> cpus(req->cpus().begin(), req->cpus().end());
  if (cpus.empty()) cpus = identity_.allowed_cpus;
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
  if (!selftest.ok()) return ToGrpc(selftest.status());
  reply->set_selftest_wall_ms(selftest->wall_ms);
  reply->set_selftest_cpu_ms(selftest->cpu_ms);
  return grpc::Status::OK;
}

grpc::Status AgentService::Acknowledge(grpc::ServerContext*, const v1::AcknowledgeRequest* req,
                                       v1::AcknowledgeReply*) {
  if (!spool_) return grpc::Status::OK;
  for (const auto& ack : req->acks()) {
    Status removed = spool_->Remove(ack.key());
    if (!removed.ok()) return ToGrpc(removed);
  }
  return grpc::Status::OK;
}

grpc::Status AgentService::CheckConformance(grpc::ServerContext*,
                                            const v1::CheckConformanceRequest* req,
                                            v1::CheckConformanceReply* reply) {
  if (req->port() <= 0 || req->port() > 65535) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "port out of range");
  }
  std::vector<ContractCase> cases;
  for (const auto& in : req->cases()) {
    ContractCase c;
    c.name = in.name();
    c.negative = in.negative();
    c.request.method = in.method();
    c.request.path = in.path();
    c.request.headers = Headers(in.headers());
    c.request.body = in.body();
    c.expect_status = in.expect_status();
    if (in.check_body()) c.expect_body = in.expect_body();
    c.expect_headers = Headers(in.expect_headers());
    cases.push_back(std::move(c));
  }
  auto timeout = std::chrono::milliseconds(req->timeout_ms() > 0 ? req->timeout_ms() : 2000);
  auto diffs = CheckContract(req->host(), static_cast<uint16_t>(req->port()), cases, timeout);
  reply->set_ok(diffs.empty());
  for (auto& d : diffs) reply->add_diffs(std::move(d));
  return grpc::Status::OK;
}

grpc::Status AgentService::RunLoad(grpc::ServerContext*, const v1::RunLoadRequest* req,
                                   grpc::ServerWriter<v1::RunLoadEvent>* writer) {
  LoadOptions options;
  options.host = req->host();
  options.port = static_cast<uint16_t>(req->port());
  options.method = req->method().empty() ? "GET" : req->method();
  options.path = req->path().empty() ? "/" : req->path();
  options.headers = Headers(req->headers());
  options.body = req->body();
  options.connections = req->connections();
  options.threads = req->threads() > 0 ? req->threads() : 1;
  options.cpus.assign(req->cpus().begin(), req->cpus().end());
  const auto& allowed = identity_.allowed_cpus;
  if (options.cpus.empty()) {
    options.cpus = allowed;
  } else if (!allowed.empty() && !std::includes(allowed.begin(), allowed.end(),
                                                options.cpus.begin(), options.cpus.end())) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "load CPUs " + FormatCpuList(options.cpus) +
                            " are outside agent \"" + identity_.name + "\"'s allowed CPUs " +
                            FormatCpuList(allowed));
  }
  options.warmup = std::chrono::milliseconds(req->warmup_ms());
  options.duration = std::chrono::milliseconds(req->duration_ms());
  if (req->timeout_ms() > 0) options.timeout = std::chrono::milliseconds(req->timeout_ms());
  if (req->depth() < 0 || req->depth() > LoadOptions::kMaxDepth) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "depth " + std::to_string(req->depth()) + " is outside 1.." +
                            std::to_string(LoadOptions::kMaxDepth));
  }
  if (req->depth() > 0) options.depth = req->depth();
  if (!(req->rate() >= 0) || !std::isfinite(req->rate())) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "rate must be a finite number >= 0");
  }
  options.rate = req->rate();
  options.arrival = req->poisson() ? Arrival::kPoisson : Arrival::kConstant;
  if (req->seed() != 0) options.seed = req->seed();
  options.max_conns = std::max(0, req->max_conns());
  options.expect_status.assign(req->expect_status().begin(), req->expect_status().end());
  if (req->check_body()) options.expect_body = req->expect_body();

  // The load host is watched over exactly the generator's measured interval.
  IntervalSampler host(env_, 0, identity_.sample_period, NewHostWatch(0, options.cpus));
  bool watching = false;
  Result<IntervalFigures> host_figures = Status::Unavailable("the load host was not watched");
  if (!req->tool().empty() && req->tool() != "benchlab") {
    return RunExternal(*req, options, writer);
  }
  auto result = benchlab::RunLoad(options, [&](bool measuring) {
    if (measuring) {
      watching = host.Begin().ok();
    } else if (watching) {
      host_figures = host.End();
      watching = false;
    }
    v1::RunLoadEvent event;
    event.set_kind(measuring ? v1::RunLoadEvent::MEASURE_START : v1::RunLoadEvent::MEASURE_END);
    writer->Write(event);
  });
  if (watching) (void)host.End();
  if (!result.ok()) return ToGrpc(result.status());
  v1::RunLoadEvent event;
  event.set_kind(v1::RunLoadEvent::RESULT);
  auto* out = event.mutable_result();
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
  if (host_figures.ok() && host_figures->host) {
    HostFiguresToProto(*host_figures->host, out->mutable_host());
  }
  if (!req->spool_key().empty()) {
    Status spooled = SpoolPut(req->spool_key() + ".load", event.SerializeAsString());
    if (!spooled.ok()) return ToGrpc(spooled);
  }
  writer->Write(event);
  return grpc::Status::OK;
}

grpc::Status AgentService::RunExternal(const v1::RunLoadRequest& req, const LoadOptions& options,
                                       grpc::ServerWriter<v1::RunLoadEvent>* writer) {
  if (req.tool() != "wrk" && req.tool() != "h2load") {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "tool: expected benchlab, wrk or h2load, got \"" + req.tool() + "\"");
  }
  if (options.rate > 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        req.tool() + " measures closed loop only, not a rate");
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
  std::string scratch;
  {
    std::lock_guard lock(mu_);
    scratch = (std::filesystem::path(identity_.run_root) /
               ("load-" + req.tool() + "-" + std::to_string(next_handle_++)))
                  .string();
  }
  IntervalSampler host(env_, 0, identity_.sample_period, NewHostWatch(0, options.cpus));
  bool watching = false;
  Result<IntervalFigures> host_figures = Status::Unavailable("the load host was not watched");
  auto run = RunExternalLoad(
      env_, spec, options.cpus, std::chrono::duration_cast<std::chrono::milliseconds>(options.warmup),
      scratch, [&](bool measuring) {
        if (measuring) {
          watching = host.Begin().ok();
        } else if (watching) {
          host_figures = host.End();
          watching = false;
        }
        v1::RunLoadEvent event;
        event.set_kind(measuring ? v1::RunLoadEvent::MEASURE_START
                                 : v1::RunLoadEvent::MEASURE_END);
        writer->Write(event);
      });
  if (watching) (void)host.End();
  std::error_code ec;
  std::filesystem::remove_all(scratch, ec);
  if (!run.ok()) return ToGrpc(run.status());

  const ExternalLoadFigures& f = run->figures;
  v1::RunLoadEvent event;
  event.set_kind(v1::RunLoadEvent::RESULT);
  auto* out = event.mutable_result();
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
  if (host_figures.ok() && host_figures->host) {
    HostFiguresToProto(*host_figures->host, out->mutable_host());
  }
  if (!req.spool_key().empty()) {
    Status spooled = SpoolPut(req.spool_key() + ".load", event.SerializeAsString());
    if (!spooled.ok()) return ToGrpc(spooled);
  }
  writer->Write(event);
  return grpc::Status::OK;
}

}  // namespace benchlab
