// AgentService's load role (agent_service.h): checking a target's conformance to the
// campaign's contract and driving load at it, with benchlab's generator or wrk or h2load, while
// the load host is watched.
#include <strings.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "agent/conformance.h"
#include "agent/external_run.h"
#include "agent/server/agent_service.h"
#include "agent/window_token.h"
#include "common/parse.h"
#include "common/printable.h"
#include "loadgen/load.h"
#include "loadgen/request.h"
#include "rpc/status.h"
#include "rpc/tls.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

// A target's CA bundle over the network: a few certificates, never more than this.
constexpr size_t kMaxCaPemBytes = 256 * 1024;

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

}  // namespace

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
  std::optional<ProbeTls> tls;
  if (!req->tls_ca_pem().empty()) {
    if (req->tls_ca_pem().size() > kMaxCaPemBytes) {
      return rpc::ToGrpcStatus(Status::InvalidArgument("CheckConformance: tls_ca_pem: at most " +
                                                       std::to_string(kMaxCaPemBytes) + " bytes"));
    }
    tls = ProbeTls{.ca_pem = req->tls_ca_pem(), .server_name = req->host()};
  }
  std::vector<std::string> diffs;
  for (const ContractCase& c : cases) {
    if (call.cancel().cancelled()) {
      return rpc::ToGrpcStatus(Status::Cancelled("CheckConformance cancelled"));
    }
    for (auto& d : CheckContract(target->address, port, {c}, timeout, identity_.limits.max_body,
                                 tls ? &*tls : nullptr)) {
      diffs.push_back(d);
    }
  }
  reply->set_ok(diffs.empty());
  for (auto& d : diffs) reply->add_diffs(std::move(d));
  return grpc::Status::OK;
}

namespace {

// RunLoadRequest.tls into the generator's options, each field checked as it comes from the
// network: bounded sizes, printable names, the values ValidateTlsOptions accepts.
Result<TlsLoadOptions> TlsOptionsFor(const v1::TlsLoad& tls, const std::string& host) {
  constexpr int kMaxAlpn = 8;
  TlsLoadOptions o;
  o.resumption = tls.resumption();
  o.version = tls.version().empty() ? "1.3" : tls.version();
  if (tls.alpn_size() > kMaxAlpn) {
    return Status::InvalidArgument("RunLoad: tls.alpn: at most " + std::to_string(kMaxAlpn) +
                                   " protocols");
  }
  o.alpn.assign(tls.alpn().begin(), tls.alpn().end());
  if (tls.alpn_size() == 0) o.alpn = {"http/1.1"};
  o.verify = !tls.insecure();
  if (tls.ca_pem().size() > kMaxCaPemBytes) {
    return Status::InvalidArgument("RunLoad: tls.ca_pem: at most " +
                                   std::to_string(kMaxCaPemBytes) + " bytes");
  }
  o.ca_pem = tls.ca_pem();
  // The name the coordinator dialled, not the address it resolved to, unless one is given.
  o.server_name = tls.server_name().empty() ? host : tls.server_name();
  if (o.server_name.size() > 253 || FirstUnprintable(o.server_name) != std::string::npos) {
    return Status::InvalidArgument("RunLoad: tls.server_name: expected a host name");
  }
  for (const std::string& p : o.alpn) {
    if (FirstUnprintable(p) != std::string::npos)
      return Status::InvalidArgument("RunLoad: tls.alpn: expected names");
  }
  if (Status st = ValidateTlsOptions(o); !st.ok()) {
    return Status::InvalidArgument("RunLoad: " + st.message());
  }
  return o;
}

}  // namespace

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
  if (!req.engine().empty()) {
    std::optional<IoEngine> engine = ParseIoEngine(req.engine());
    if (!engine) {
      return Status::InvalidArgument(
          "RunLoad: engine: expected \"auto\", \"io_uring\" or \"epoll\", got \"" +
          req.engine().substr(0, 32) + "\"");
    }
    options.engine = *engine;
  }
  options.requests_per_connection = req.requests_per_connection();
  if (req.has_tls()) {
    BENCHLAB_ASSIGN_OR_RETURN(options.tls, TlsOptionsFor(req.tls(), req.host()));
  }
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
  if (!result->engine_note.empty()) spdlog::warn("load generator: {}", result->engine_note);
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
  for (const SecondPoint& point : result->series) out->add_per_second_p99_us(point.p99_us);
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
  if (req.has_tls()) {
    return Status::InvalidArgument("tls: " + req.tool() +
                                   " is not driven over TLS here; tool \"benchlab\" is");
  }
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
