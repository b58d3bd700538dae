#include "agent/server/agent_service.h"

#include <algorithm>
#include <filesystem>

#include "agent/conformance.h"
#include "agent/host_facts.h"
#include "agent/orphans.h"
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

void AgentService::StopAll() {
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
  {
    std::lock_guard lock(mu_);
    auto version = versions_.find(def->name);
    reply->set_version(version == versions_.end() ? "unavailable" : version->second);
  }
  spdlog::info("started target {} as {} (pid {}, port {}, cpus {}, ready in {:.1f} ms)",
               def->name, handle, active->target.process->pid(), active->target.port,
               FormatCpuList(active->target.cpus), active->target.startup_ms);
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
  ExitInfo info = exited_before ? before
                                : active->target.process->Stop(
                                      std::chrono::milliseconds(req->grace_ms() > 0 ? req->grace_ms() : 2000));
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
    active->sampler = std::make_unique<IntervalSampler>(env_, active->target.process->pid());
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
  for (const auto& s : figures->samples) {
    auto* out = reply->add_samples();
    out->set_t_s(s.t_s);
    out->set_cpu_pct(s.cpu_pct);
    out->set_rss_kb(s.rss_kb);
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

  auto result = benchlab::RunLoad(options, [writer](bool measuring) {
    v1::RunLoadEvent event;
    event.set_kind(measuring ? v1::RunLoadEvent::MEASURE_START : v1::RunLoadEvent::MEASURE_END);
    writer->Write(event);
  });
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
  writer->Write(event);
  return grpc::Status::OK;
}

}  // namespace benchlab
