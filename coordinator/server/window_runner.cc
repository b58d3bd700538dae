#include "coordinator/server/window_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <latch>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <grpcpp/client_context.h>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/histogram.h"
#include "coordinator/gates.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

using Ms = std::chrono::duration<double, std::milli>;

// Self-tests an agent runs at the start of a campaign; the fastest is the calibration.
constexpr int kCalibrationRuns = 3;

void SetDeadline(grpc::ClientContext& ctx, std::chrono::milliseconds budget) {
  ctx.set_deadline(std::chrono::system_clock::now() + budget);
}

std::string Describe(const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return "deadline exceeded (" + status.error_message() + ")";
  }
  return status.error_message().empty() ? "gRPC status " + std::to_string(status.error_code())
                                        : status.error_message();
}

// A step's failure, named: "<step>: agent <name>: <what gRPC said>". An agent that cannot be
// reached is lost to the window ("agent_lost: <step>: ..."): the window is measured again once
// the agent is back, where any other failure is the window's own.
std::string StepFailure(const std::string& step, const std::string& agent,
                        const grpc::Status& status) {
  std::string text = step + ": agent " + agent + ": " + Describe(status);
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) return "agent_lost: " + text;
  return text;
}

std::string TopForeignJson(const v1::HostFigures& h) {
  nlohmann::json users = nlohmann::json::array();
  for (const auto& u : h.top_foreign()) users.push_back({{"comm", u.comm()}, {"cpu_pct", u.cpu_pct()}});
  return users.dump();
}

void AddCase(const ScenarioDef& def, bool negative, v1::CheckConformanceRequest& req) {
  auto* c = req.add_cases();
  c->set_name(def.name);
  c->set_negative(negative);
  c->set_method(def.method);
  c->set_path(def.path);
  for (const auto& [name, value] : def.headers) {
    auto* h = c->add_headers();
    h->set_name(name);
    h->set_value(value);
  }
  c->set_body(def.body);
  c->set_expect_status(def.expect.status);
  if (def.expect.body) {
    c->set_check_body(true);
    c->set_expect_body(*def.expect.body);
  }
  for (const auto& [name, value] : def.expect.headers) {
    auto* h = c->add_expect_headers();
    h->set_name(name);
    h->set_value(value);
  }
}

// One load agent's part of a window: its share of the level, and what it sent back. With one
// load agent the share is the whole level and everything is as it always was.
struct LoadShare {
  std::string agent;
  std::shared_ptr<v1::Agent::Stub> stub;
  int connections = 0;
  double rate = 0;
  int max_conns = 0;
  uint64_t seed = 0;      // of the Poisson schedule; 0: the generator's default
  std::string spool_key;  // sent with RunLoad; the agent spools its result under it + ".load"
  std::optional<double> selftest_ms;
  HostMeasures host;  // CheckHost's readings, then the measured interval's
  bool have_result = false;
  v1::LoadResult result;
  grpc::Status status;  // of the RunLoad stream
};

// The protocol's steps, with the window's row filled as they go.
class WindowProtocol {
 public:
  WindowProtocol(AgentRegistry& agents, const AgentRegistry::Placement& placement,
                 const Campaign& campaign, const PlannedWindow& planned, std::string spool_key,
                 Calibration& calibration, TargetSession& session, WindowOutcome& out);

  void Run();

 private:
  bool Fail(const std::string& verdict, const std::string& reason) {
    out_.row.verdict = verdict;
    reasons_.push_back(reason);
    return false;
  }
  bool CheckHosts();
  bool CheckHost(v1::Agent::Stub& stub, const std::string& agent, const std::vector<int>& cpus,
                 std::optional<double>& selftest_ms, HostMeasures& host);
  bool StartTarget();
  bool CheckConformance();
  v1::RunLoadRequest LoadRequest(const ScenarioDef& scenario, const LoadShare& share) const;
  bool MeasureLoad();
  // Fills the row's load columns and the load samples from every share that sent a result;
  // a non-empty return is why the results could not be merged.
  std::string MergeLoadResults(const ScenarioDef& scenario);
  void StopTarget();
  void Judge();
  void Finish();
  bool multi() const { return shares_.size() > 1; }

  TargetSession& session_;
  const AgentRegistry::Placement& placement_;
  const Campaign& campaign_;
  const PlannedWindow& planned_;
  const std::string spool_key_;
  Calibration& calibration_;
  WindowOutcome& out_;
  std::shared_ptr<v1::Agent::Stub> server_;
  std::vector<LoadShare> shares_;  // the load agents this window uses; the first checks conformance
  std::vector<std::string> reasons_;
  std::string handle_;
  int port_ = 0;
  bool target_died_ = false;
  uint64_t status_mismatches_ = 0;  // responses whose status was not the expected one
  uint64_t mismatches_ = 0;         // responses failing the expectation (status or body)
  uint64_t transport_errors_ = 0;
  WindowMeasures measures_;  // what the gates judge, filled step by step
  v1::HostFigures server_host_;
};

WindowProtocol::WindowProtocol(AgentRegistry& agents, const AgentRegistry::Placement& placement,
                               const Campaign& campaign, const PlannedWindow& planned,
                               std::string spool_key, Calibration& calibration,
                               TargetSession& session, WindowOutcome& out)
    : session_(session),
      placement_(placement),
      campaign_(campaign),
      planned_(planned),
      spool_key_(std::move(spool_key)),
      calibration_(calibration),
      out_(out),
      server_(agents.Stub(placement.server_agent)) {
  std::vector<std::string> names = placement.load_agents;
  if (names.empty()) names.push_back(placement.load_agent);
  if (names.size() > 1 && planned.connections < static_cast<int>(names.size())) {
    // Every load agent needs a connection of its own.
    const size_t keep = static_cast<size_t>(std::max(1, planned.connections));
    spdlog::warn("window {} {} {} round {}: {} connections cannot be split over {} load agents; "
                 "using the first {}",
                 planned.target, planned.scenario, LoadLevelLabel(planned), planned.round,
                 planned.connections, names.size(), keep);
    names.resize(keep);
  }
  const size_t n = names.size();
  const std::vector<int> connections = SplitLoadLevel(planned.connections, n);
  const std::vector<int> max_conns = SplitLoadLevel(campaign.load_max_conns, n);
  for (size_t i = 0; i < n; ++i) {
    LoadShare share;
    share.agent = names[i];
    share.stub = agents.Stub(names[i]);
    share.connections = connections[i];
    share.rate = planned.rate / static_cast<double>(n);
    share.max_conns = max_conns[i];
    // Agents with the same seed would send their Poisson bursts at the same instants.
    share.seed = n > 1 ? i + 1 : 0;
    share.spool_key = n > 1 ? spool_key_ + "." + names[i] : spool_key_;
    shares_.push_back(std::move(share));
  }
  if (multi()) {
    std::string joined;
    nlohmann::json hosts = nlohmann::json::object();
    for (const LoadShare& share : shares_) {
      joined += (joined.empty() ? "" : ",") + share.agent;
      nlohmann::json facts =
          nlohmann::json::parse(agents.HostFactsJson(share.agent), nullptr, false);
      hosts[share.agent] = facts.is_object() ? facts : nlohmann::json::object();
    }
    out_.row.load_agent = joined;
    out_.row.load_host = nlohmann::json{{"agents", hosts}}.dump();
  }
}

// A host's figures as the gates read them; a reading the machine does not offer stays unset.
void FillHostMeasures(const v1::HostFigures& h, HostMeasures& out) {
  const double cpus = h.cpus() > 0 ? h.cpus() : 1;
  out.foreign_mean_pct = h.foreign_mean_pct();
  out.steal_pct = h.steal_pct() / cpus;
  out.busy_pct = h.busy_pct() / cpus;
  if (h.has_throttle_core_events() || h.has_throttle_package_events()) {
    out.throttle_events = h.throttle_core_events() + h.throttle_package_events();
  }
  if (h.has_min_freq_ratio()) out.min_freq_ratio = h.min_freq_ratio();
  if (h.has_swap_in_pages()) out.swap_in_pages = h.swap_in_pages();
  if (h.has_swap_out_pages()) out.swap_out_pages = h.swap_out_pages();
}

bool WindowProtocol::CheckHost(v1::Agent::Stub& stub, const std::string& agent,
                               const std::vector<int>& cpus, std::optional<double>& selftest_ms,
                               HostMeasures& host) {
  v1::CheckHostRequest req;
  for (int cpu : cpus) req.add_cpus(cpu);
  auto check = [&](v1::CheckHostReply& reply) {
    grpc::ClientContext ctx;
    SetDeadline(ctx, std::chrono::seconds(10));
    return stub.CheckHost(&ctx, req, &reply);
  };
  v1::CheckHostReply reply;
  grpc::Status status = check(reply);
  if (!status.ok()) return Fail("failed", StepFailure("check_host", agent, status));
  selftest_ms = reply.selftest_wall_ms();
  const bool first = calibration_.count(agent) == 0;
  if (first) {
    // The campaign's calibration: the fastest of kCalibrationRuns self-tests at its start, so a
    // neighbour's burst during one of them does not make every later window look fast.
    double fastest = reply.selftest_wall_ms();
    for (int i = 1; i < kCalibrationRuns; ++i) {
      v1::CheckHostReply again;
      if (!check(again).ok()) break;
      fastest = std::min(fastest, again.selftest_wall_ms());
    }
    calibration_[agent] = fastest;
  }
  auto it = calibration_.find(agent);
  if (it->second > 0) {
    double drift = reply.selftest_wall_ms() / it->second - 1;
    host.selftest_drift = drift;
    if (!out_.row.selftest_drift || std::abs(drift) > std::abs(*out_.row.selftest_drift)) {
      out_.row.selftest_drift = drift;
    }
  }
  // Judged with the other gates once the window is measured.
  for (const auto& failure : reply.failures()) {
    if (failure.rfind("on_battery", 0) == 0) {
      host.on_battery = true;
    } else {
      measures_.scheduling_failures.push_back(failure + " (agent " + agent + ")");
    }
  }
  return true;
}

// Keeps in `worst` the worse of each reading: the highest foreign CPU, steal, busy share,
// throttle and swap counts, the lowest frequency ratio, the self-test drift farthest from 0, on
// battery if any. With several load agents the gates judge the load side by this.
void KeepWorst(const HostMeasures& h, HostMeasures& worst) {
  auto higher = [](const auto& value, auto& kept) {
    if (value && (!kept || *value > *kept)) kept = value;
  };
  higher(h.foreign_mean_pct, worst.foreign_mean_pct);
  higher(h.steal_pct, worst.steal_pct);
  higher(h.busy_pct, worst.busy_pct);
  higher(h.throttle_events, worst.throttle_events);
  higher(h.swap_in_pages, worst.swap_in_pages);
  higher(h.swap_out_pages, worst.swap_out_pages);
  higher(h.on_battery, worst.on_battery);
  if (h.min_freq_ratio && (!worst.min_freq_ratio || *h.min_freq_ratio < *worst.min_freq_ratio)) {
    worst.min_freq_ratio = h.min_freq_ratio;
  }
  if (h.selftest_drift &&
      (!worst.selftest_drift || std::abs(*h.selftest_drift) > std::abs(*worst.selftest_drift))) {
    worst.selftest_drift = h.selftest_drift;
  }
}

bool WindowProtocol::CheckHosts() {
  const TargetDef* def = campaign_.FindTarget(planned_.target);
  std::vector<int> server_cpus = def != nullptr ? def->cpus : std::vector<int>{};
  if (!CheckHost(*server_, placement_.server_agent, server_cpus, out_.row.selftest_server_ms,
                 measures_.server)) {
    return false;
  }
  auto& slowest = out_.row.selftest_load_ms;
  for (LoadShare& share : shares_) {
    if (!CheckHost(*share.stub, share.agent, campaign_.load_cpus, share.selftest_ms, share.host)) {
      return false;
    }
    if (share.selftest_ms && (!slowest || *share.selftest_ms > *slowest)) {
      slowest = share.selftest_ms;
    }
  }
  return true;
}

bool WindowProtocol::StartTarget() {
  const TargetDef* def = campaign_.FindTarget(planned_.target);
  v1::StartTargetRequest req;
  req.set_target(planned_.target);
  if (def != nullptr) {
    for (int cpu : def->cpus) req.add_cpus(cpu);
  }
  req.set_window_label(campaign_.name + "-r" + std::to_string(planned_.round) + "-" +
                       planned_.target + "-" + planned_.scenario + "-" +
                       LoadLevelLabel(planned_) +
                       (planned_.noise ? "-n" + std::to_string(planned_.position) : ""));
  v1::StartTargetReply reply;
  grpc::ClientContext ctx;
  auto ready_budget = def != nullptr ? def->ready_timeout : std::chrono::milliseconds(10000);
  SetDeadline(ctx, ready_budget + std::chrono::seconds(10));
  grpc::Status status = server_->StartTarget(&ctx, req, &reply);
  if (!status.ok()) {
    return Fail("failed", StepFailure("start_target", placement_.server_agent, status));
  }
  handle_ = reply.handle();
  port_ = reply.port();
  out_.row.target_version = reply.version();
  for (const auto& failure : reply.check_failures()) {
    measures_.scheduling_failures.push_back(failure);
  }
  out_.row.startup_ms = reply.startup_ms();
  out_.row.first_request_ms = reply.first_request_ms();
  out_.row.idle_rss_kb = reply.idle_rss_kb();
  return true;
}

bool WindowProtocol::CheckConformance() {
  v1::CheckConformanceRequest req;
  req.set_host(placement_.server_host);
  req.set_port(port_);
  req.set_timeout_ms(2000);
  for (const auto& s : campaign_.scenarios) AddCase(s, false, req);
  for (const auto& n : campaign_.negatives) AddCase(n, true, req);
  v1::CheckConformanceReply reply;
  grpc::ClientContext ctx;
  SetDeadline(ctx, std::chrono::milliseconds(5000 + 2000 * req.cases_size()));
  // From the first load agent only: the others take the same network path to the same target.
  const LoadShare& first = shares_.front();
  grpc::Status status = first.stub->CheckConformance(&ctx, req, &reply);
  if (!status.ok()) return Fail("failed", StepFailure("conformance", first.agent, status));
  if (!reply.ok()) {
    out_.row.verdict = "skipped";
    for (const auto& diff : reply.diffs()) reasons_.push_back("conformance: " + diff);
    return false;
  }
  return true;
}

v1::RunLoadRequest WindowProtocol::LoadRequest(const ScenarioDef& scenario,
                                               const LoadShare& share) const {
  v1::RunLoadRequest req;
  req.set_host(placement_.server_host);
  req.set_port(port_);
  req.set_method(scenario.method);
  req.set_path(scenario.path);
  for (const auto& [name, value] : scenario.headers) {
    auto* h = req.add_headers();
    h->set_name(name);
    h->set_value(value);
  }
  req.set_body(scenario.body);
  req.set_connections(share.connections);
  req.set_depth(campaign_.load_depth);
  if (planned_.rate > 0) {
    req.set_rate(share.rate);
    req.set_poisson(campaign_.load_poisson);
    if (share.seed != 0) req.set_seed(share.seed);
    req.set_max_conns(share.max_conns);
  }
  req.set_threads(campaign_.load_threads);
  for (int cpu : campaign_.load_cpus) req.add_cpus(cpu);
  req.set_warmup_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(campaign_.warmup).count());
  req.set_duration_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(campaign_.duration).count());
  req.set_timeout_ms(2000);
  req.set_spool_key(share.spool_key);
  // Every response is checked against the scenario's expectation while measuring.
  req.add_expect_status(scenario.expect.status);
  if (scenario.expect.body) {
    req.set_check_body(true);
    req.set_expect_body(*scenario.expect.body);
  }
  return req;
}

bool WindowProtocol::MeasureLoad() {
  const ScenarioDef* scenario = campaign_.FindScenario(planned_.scenario);
  const auto budget = std::chrono::duration_cast<std::chrono::milliseconds>(
                          campaign_.warmup + campaign_.duration) +
                      std::chrono::seconds(30);
  using SteadyTime = std::chrono::steady_clock::time_point;
  // What the load streams share; every field below, and every Mark, under `mu`.
  std::mutex mu;
  bool marked = false;
  bool server_spooled = false;  // an END mark succeeded: the server spooled its figures
  size_t starts = 0, ends = 0;
  SteadyTime first_start, last_start, first_end, last_end;
  double align_ms = 0;
  v1::MarkReply figures;
  std::string mark_error;
  auto mark = [&](v1::MarkRequest::Kind kind, v1::MarkReply* reply) {
    auto received = std::chrono::steady_clock::now();
    v1::MarkRequest mreq;
    mreq.set_handle(handle_);
    mreq.set_kind(kind);
    if (kind == v1::MarkRequest::END) mreq.set_spool_key(spool_key_);
    grpc::ClientContext mctx;
    SetDeadline(mctx, std::chrono::seconds(5));
    grpc::Status status = server_->Mark(&mctx, mreq, reply);
    // The server's cut happened within this round trip of the load generator's event.
    align_ms = std::max(align_ms, Ms(std::chrono::steady_clock::now() - received).count());
    if (kind == v1::MarkRequest::END && status.ok()) server_spooled = true;
    return status;
  };
  // The server's interval opens at the first agent's MEASURE_START and closes at the last one's
  // MEASURE_END, so it covers every agent's measured interval.
  auto stream_load = [&](LoadShare& share) {
    v1::RunLoadRequest req = LoadRequest(*scenario, share);
    grpc::ClientContext ctx;
    SetDeadline(ctx, budget);
    auto stream = share.stub->RunLoad(&ctx, req);
    v1::RunLoadEvent event;
    while (stream->Read(&event)) {
      const SteadyTime arrived = std::chrono::steady_clock::now();
      if (event.kind() == v1::RunLoadEvent::MEASURE_START) {
        std::lock_guard<std::mutex> lock(mu);
        last_start = arrived;
        if (starts++ > 0) continue;
        first_start = arrived;
        out_.row.started_at = FormatIsoTime(std::chrono::system_clock::now());
        v1::MarkReply ignored;
        grpc::Status status = mark(v1::MarkRequest::BEGIN, &ignored);
        if (!status.ok()) mark_error = StepFailure("mark_begin", placement_.server_agent, status);
        marked = status.ok();
      } else if (event.kind() == v1::RunLoadEvent::MEASURE_END) {
        std::lock_guard<std::mutex> lock(mu);
        if (ends++ == 0) first_end = arrived;
        last_end = arrived;
        if (ends < shares_.size()) continue;
        out_.row.ended_at = FormatIsoTime(std::chrono::system_clock::now());
        if (marked) {
          grpc::Status status = mark(v1::MarkRequest::END, &figures);
          if (!status.ok()) mark_error = StepFailure("mark_end", placement_.server_agent, status);
          marked = false;
        }
      } else if (event.kind() == v1::RunLoadEvent::RESULT) {
        share.have_result = true;
        share.result.Swap(event.mutable_result());
      }
    }
    share.status = stream->Finish();
  };
  if (!multi()) {
    stream_load(shares_.front());
  } else {
    // One thread per extra agent; all streams open together once every thread is up.
    std::latch go(static_cast<std::ptrdiff_t>(shares_.size()));
    std::vector<std::thread> threads;
    for (size_t i = 1; i < shares_.size(); ++i) {
      threads.emplace_back([&, i] {
        go.arrive_and_wait();
        stream_load(shares_[i]);
      });
    }
    go.arrive_and_wait();
    stream_load(shares_.front());
    for (std::thread& thread : threads) thread.join();
  }
  if (marked) {  // a stream broke inside the interval: close the server's interval anyway
    v1::MarkReply ignored;
    (void)mark(v1::MarkRequest::END, &ignored);
  }
  std::string merge_error = MergeLoadResults(*scenario);
  if (server_spooled) out_.spooled.emplace_back(placement_.server_agent, spool_key_ + ".server");
  bool broken = false;
  for (const LoadShare& share : shares_) {
    if (share.status.ok()) continue;
    Fail("failed", StepFailure("run_load", share.agent, share.status));
    broken = true;
  }
  if (broken) return false;
  for (const LoadShare& share : shares_) {
    if (share.have_result) continue;
    return Fail("failed", multi() ? "run_load: load agent " + share.agent + " sent no result"
                                  : "run_load: the load agent sent no result");
  }
  if (!merge_error.empty()) return Fail("failed", merge_error);
  if (!mark_error.empty()) return Fail("failed", mark_error);
  auto& row = out_.row;
  // Each agent's interval lies inside the server's within the Mark round trip plus how far the
  // agents' own starts (or ends) were apart; with one agent the spread is 0.
  const double spread_ms =
      std::max(Ms(last_start - first_start).count(), Ms(last_end - first_end).count());
  row.align_error_ms = align_ms + spread_ms;
  row.server_cpu_s = figures.cpu_user_s() + figures.cpu_sys_s();
  row.cpu_us_per_request = row.requests ? row.server_cpu_s * 1e6 / row.requests : 0;
  row.rss_peak_kb = figures.rss_peak_kb();
  row.rss_mean_kb = figures.rss_mean_kb();
  if (!figures.target_alive()) target_died_ = true;
  row.threads = figures.threads();
  row.cpu_accounting = figures.cpu_source();
  row.ctx_switches_voluntary = figures.voluntary_ctxt_switches();
  row.ctx_switches_involuntary = figures.nonvoluntary_ctxt_switches();
  if (figures.has_host()) {
    const auto& h = figures.host();
    server_host_ = h;
    row.server_busy_pct = h.busy_pct();
    row.server_steal_pct = h.steal_pct();
    row.server_foreign_cpu_pct = h.foreign_mean_pct();
    row.server_foreign_cpu_max_pct = h.foreign_max_pct();
    row.server_top_foreign = TopForeignJson(h);
    if (h.has_max_temp_c()) row.max_temp_c = h.max_temp_c();
    if (h.has_throttle_core_events() || h.has_throttle_package_events()) {
      row.throttle_events = static_cast<int64_t>(h.throttle_core_events() +
                                                 h.throttle_package_events());
    }
    if (h.has_min_freq_ratio()) row.min_freq_ratio = h.min_freq_ratio();
    if (h.has_swap_in_pages()) row.swap_in_pages = static_cast<int64_t>(h.swap_in_pages());
    if (h.has_swap_out_pages()) row.swap_out_pages = static_cast<int64_t>(h.swap_out_pages());
  }
  for (const auto& s : figures.samples()) {
    SampleRow sample;
    sample.source = "server";
    sample.t_s = s.t_s();
    sample.cpu_pct = s.cpu_pct();
    sample.rss_kb = s.rss_kb();
    if (figures.has_host()) {
      sample.host_busy_pct = s.host_busy_pct();
      sample.foreign_pct = s.foreign_pct();
      sample.steal_pct = s.steal_pct();
    }
    out_.samples.push_back(sample);
  }
  return true;
}

std::string WindowProtocol::MergeLoadResults(const ScenarioDef& scenario) {
  auto& row = out_.row;
  std::string error;
  bool any = false, latency_ok = true, uncorrected_ok = true, open_loop = false;
  Histogram latency, uncorrected;
  nlohmann::json counts = nlohmann::json::object();
  nlohmann::json records = nlohmann::json::object();
  std::vector<SampleRow> seconds;
  const v1::HostFigures* most_foreign = nullptr;
  auto merge_histogram = [&](const LoadShare& share, const std::string& text, const char* what,
                             Histogram& into, bool& ok) {
    auto histogram = Histogram::Deserialize(text);
    if (histogram.ok()) return into.Merge(*histogram);
    ok = false;
    if (multi() && error.empty()) {
      error = "run_load: load agent " + share.agent + " sent a " + what +
              " histogram that does not parse: " + histogram.status().message();
    }
  };
  auto higher = [](double value, std::optional<double>& kept) {
    if (!kept || value > *kept) kept = value;
  };
  for (LoadShare& share : shares_) {
    if (!share.have_result) continue;
    any = true;
    const v1::LoadResult& r = share.result;
    row.requests += r.requests();
    row.duration_s = std::max(row.duration_s, r.duration_s());
    row.rps += r.rps();
    merge_histogram(share, r.histogram(), "latency", latency, latency_ok);
    uint64_t status_mismatches = 0;
    for (const auto& sc : r.status_counts()) {
      const std::string code = std::to_string(sc.status());
      counts[code] = counts.value(code, uint64_t{0}) + sc.count();
      if (sc.status() != scenario.expect.status) status_mismatches += sc.count();
    }
    status_mismatches_ += status_mismatches;
    row.errors_connect += r.errors().connect();
    row.errors_read += r.errors().read();
    row.errors_write += r.errors().write();
    row.errors_timeout += r.errors().timeout();
    row.errors_parse += r.errors().parse();
    row.errors_mismatch += r.mismatches();
    // A wrong status is one kind of mismatch; the generator checks the body too.
    mismatches_ += std::max<uint64_t>(r.mismatches(), status_mismatches);
    double cpu = r.cpu_user_s() + r.cpu_sys_s();
    if (cpu == 0) {  // an agent that predates the field reports per thread only
      for (double thread_cpu : r.thread_cpu_s()) cpu += thread_cpu;
    }
    row.load_cpu_s += cpu;
    row.load_depth = r.depth() > 0 ? r.depth() : 1;
    row.sent = row.sent.value_or(0) + static_cast<int64_t>(r.sent());
    if (r.generator_bound()) row.generator_bound = 1;
    row.throughput_rps = row.throughput_rps.value_or(0) + r.throughput_rps();
    if (r.open_loop()) {
      open_loop = true;
      row.load_rate = row.load_rate.value_or(0) + r.rate();
      row.dropped = row.dropped.value_or(0) + static_cast<int64_t>(r.dropped());
      merge_histogram(share, r.histogram_uncorrected(), "uncorrected", uncorrected,
                      uncorrected_ok);
    }
    // The histograms are columns of their own; the record keeps everything else.
    nlohmann::json record = nlohmann::json::parse(r.record_json(), nullptr, false);
    if (record.is_object()) {
      record.erase("histogram");
      record.erase("histogram_uncorrected");
      if (!multi()) row.load_record = record.dump();
    }
    if (multi()) records[share.agent] = record.is_object() ? record : nlohmann::json::object();
    if (r.has_host()) {
      const auto& h = r.host();
      higher(h.busy_pct(), row.load_busy_pct);
      higher(h.steal_pct(), row.load_steal_pct);
      higher(h.foreign_mean_pct(), row.load_foreign_cpu_pct);
      higher(h.foreign_max_pct(), row.load_foreign_cpu_max_pct);
      if (!most_foreign || h.foreign_mean_pct() > most_foreign->foreign_mean_pct()) {
        most_foreign = &h;
      }
    }
    out_.spooled.emplace_back(share.agent, share.spool_key + ".load");
    // Per second: requests add up; the second's p99 is the slowest agent's, an upper bound on
    // the p99 of the agents' responses together.
    for (int i = 0; i < r.per_second_requests_size(); ++i) {
      if (seconds.size() <= static_cast<size_t>(i)) {
        SampleRow second;
        second.source = "load";
        second.t_s = i + 1;
        seconds.push_back(second);
      }
      SampleRow& second = seconds[static_cast<size_t>(i)];
      second.requests += r.per_second_requests(i);
      if (i < r.per_second_p99_us_size()) {
        const auto p99 = static_cast<int64_t>(r.per_second_p99_us(i));
        if (!second.p99_us || p99 > *second.p99_us) second.p99_us = p99;
      }
    }
  }
  if (!any) return error;
  // With one agent its serialised histograms are kept as they came.
  row.histogram = multi() ? latency.Serialize() : shares_.front().result.histogram();
  if (latency_ok) {
    row.p50_us = latency.ValueAtPercentile(50);
    row.p90_us = latency.ValueAtPercentile(90);
    row.p99_us = latency.ValueAtPercentile(99);
    row.p999_us = latency.ValueAtPercentile(99.9);
    row.max_us = latency.Max();
    row.mean_us = latency.Mean();
  }
  if (open_loop) {
    row.histogram_uncorrected =
        multi() ? uncorrected.Serialize() : shares_.front().result.histogram_uncorrected();
    if (uncorrected_ok) {
      row.p99_uncorrected_us = static_cast<int64_t>(uncorrected.ValueAtPercentile(99));
    }
  }
  row.status_counts = counts.dump();
  row.errors_status = status_mismatches_;
  transport_errors_ = row.errors_connect + row.errors_read + row.errors_write +
                      row.errors_timeout + row.errors_parse;
  row.errors = transport_errors_ + mismatches_;
  if (multi()) row.load_record = nlohmann::json{{"agents", records}}.dump();
  if (most_foreign != nullptr) row.load_top_foreign = TopForeignJson(*most_foreign);
  for (SampleRow& second : seconds) out_.samples.push_back(std::move(second));
  return error;
}

void WindowProtocol::StopTarget() {
  if (handle_.empty()) return;
  v1::StopTargetRequest req;
  req.set_handle(handle_);
  req.set_grace_ms(2000);
  v1::StopTargetReply reply;
  grpc::ClientContext ctx;
  SetDeadline(ctx, std::chrono::seconds(10));
  grpc::Status status = server_->StopTarget(&ctx, req, &reply);
  if (!status.ok()) {
    Fail("failed", StepFailure("stop_target", placement_.server_agent, status));
    return;
  }
  if (reply.exited_before_stop() || target_died_) {
    std::string lines;
    for (const auto& line : reply.last_log_lines()) lines += (lines.empty() ? "" : " | ") + line;
    Fail("failed", "target_exited: " + reply.exit_description() + " during the window" +
                       (lines.empty() ? "" : "; last log lines: " + lines));
  }
}

void WindowProtocol::Judge() {
  auto& row = out_.row;
  if (row.requests == 0) {
    Fail("failed", "no_responses: the target answered no request in the measured interval");
    return;
  }
  WindowMeasures& m = measures_;
  if (server_host_.interval_s() > 0) FillHostMeasures(server_host_, m.server);
  // The load side is judged by its worst agent, reading by reading (KeepWorst).
  for (LoadShare& share : shares_) {
    if (share.have_result && share.result.host().interval_s() > 0) {
      FillHostMeasures(share.result.host(), share.host);
    }
    KeepWorst(share.host, m.load);
  }
  m.generator_bound = row.generator_bound != 0;
  m.requests = row.requests;
  m.transport_errors = transport_errors_;
  m.mismatches = mismatches_;
  std::vector<GateReason> reasons = JudgeWindow(m, campaign_.gates);
  for (const GateReason& reason : reasons) reasons_.push_back(reason.text);
  if (InvalidatesWindow(reasons, campaign_.gates.mode)) row.verdict = "invalid";
}

void WindowProtocol::Run() {
  out_.row.verdict = "valid";
  std::string unknown = server_ ? "" : placement_.server_agent;
  for (const LoadShare& share : shares_) {
    if (unknown.empty() && !share.stub) unknown = share.agent;
  }
  if (!unknown.empty()) {
    Fail("failed", "placement: agent " + unknown + " is unknown");
    return Finish();
  }
  const bool reuse = !planned_.start_process && !session_.handle.empty() &&
                     session_.target == planned_.target;
  if (!reuse && !session_.handle.empty()) {
    // The plan wants a fresh process: the kept one goes first, so only one target runs.
    std::string kept = std::exchange(handle_, session_.handle);
    StopTarget();
    handle_ = kept;
    reasons_.clear();
    out_.row.verdict = "valid";
    session_ = {};
  }
  if (CheckHosts()) {
    bool ready = false;
    if (reuse) {
      handle_ = session_.handle;
      port_ = session_.port;
      ready = true;
    } else {
      ready = StartTarget() && CheckConformance();
    }
    if (ready && MeasureLoad()) Judge();
    const bool measured = out_.row.verdict == "valid" || out_.row.verdict == "invalid";
    if (ready && measured && !planned_.stop_process && !target_died_) {
      session_ = {planned_.target, handle_, port_};
    } else {
      StopTarget();
      session_ = {};
    }
  } else if (!session_.handle.empty()) {
    handle_ = session_.handle;
    StopTarget();
    session_ = {};
  }
  Finish();
}

void WindowProtocol::Finish() {
  // A failure outranks an invalid verdict; the reasons keep everything that was seen.
  for (const auto& reason : reasons_) {
    if (reason.rfind("target_exited", 0) == 0 || reason.rfind("stop_target", 0) == 0 ||
        reason.rfind("agent_lost", 0) == 0) {
      out_.row.verdict = "failed";
    }
  }
  out_.row.reasons = nlohmann::json(reasons_).dump();
}

}  // namespace

std::string SpoolKey(int64_t campaign_id, const PlannedWindow& planned, int attempt) {
  std::string key = std::to_string(campaign_id) + "-" + planned.target + "-" + planned.scenario +
                    "-" + LoadLevelLabel(planned) + "-r" + std::to_string(planned.round);
  if (planned.noise) key += "-n" + std::to_string(planned.position);
  return key + "-a" + std::to_string(attempt);
}

std::vector<int> SplitLoadLevel(int total, size_t parts) {
  if (parts <= 1) return {total};
  const int n = static_cast<int>(parts);
  std::vector<int> split(parts, total / n);
  for (int i = 0; i < total % n; ++i) ++split[static_cast<size_t>(i)];
  return split;
}

WindowKey KeyOf(const PlannedWindow& planned) {
  return {planned.target, planned.scenario, LoadLevelLabel(planned), planned.round,
          planned.position, ""};
}

void EndSession(AgentRegistry& agents, const AgentRegistry::Placement& placement,
                TargetSession& session) {
  if (session.handle.empty()) return;
  auto stub = agents.Stub(placement.server_agent);
  if (stub) {
    v1::StopTargetRequest req;
    req.set_handle(session.handle);
    req.set_grace_ms(2000);
    v1::StopTargetReply reply;
    grpc::ClientContext ctx;
    SetDeadline(ctx, std::chrono::seconds(10));
    grpc::Status status = stub->StopTarget(&ctx, req, &reply);
    if (!status.ok()) {
      spdlog::warn("stopping kept target {} on agent {}: {}", session.target,
                   placement.server_agent, Describe(status));
    }
  }
  session = {};
}

WindowOutcome RunWindow(AgentRegistry& agents, const AgentRegistry::Placement& placement,
                        const Campaign& campaign, int64_t campaign_id,
                        const PlannedWindow& planned, int attempt, Calibration& calibration,
                        TargetSession& session) {
  WindowOutcome out;
  auto& row = out.row;
  row.campaign = campaign.name;
  row.target = planned.target;
  row.scenario = planned.scenario;
  row.connections = planned.connections;
  row.round = planned.round;
  row.position = planned.position;
  row.load_level = LoadLevelLabel(planned);
  row.noise = planned.noise ? 1 : 0;
  row.attempt = attempt;
  row.server_agent = placement.server_agent;
  row.load_agent = placement.load_agent;
  row.status_counts = "{}";
  row.server_host = agents.HostFactsJson(placement.server_agent);
  row.load_host = agents.HostFactsJson(placement.load_agent);
  auto begin = FormatIsoTime(std::chrono::system_clock::now());
  WindowProtocol(agents, placement, campaign, planned, SpoolKey(campaign_id, planned, attempt),
                 calibration, session, out)
      .Run();
  if (row.started_at.empty()) row.started_at = begin;
  if (row.ended_at.empty()) row.ended_at = FormatIsoTime(std::chrono::system_clock::now());
  return out;
}

}  // namespace benchlab
