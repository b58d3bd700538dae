#include "coordinator/server/window_runner.h"

#include <grpcpp/client_context.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "common/clock.h"
#include "common/log.h"
#include "coordinator/gates.h"
#include "coordinator/server/window_protocol.h"
#include "rpc/status.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace window_detail {

void SetDeadline(grpc::ClientContext& ctx, Clock& clock, std::chrono::milliseconds budget) {
  ctx.set_deadline(clock.WallNow() + budget);
}

std::string Describe(const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return "deadline exceeded (" + status.error_message() + ")";
  }
  return status.error_message().empty() ? "gRPC status " + std::to_string(status.error_code())
                                        : status.error_message();
}

WindowReason StepFailure(const std::string& step, const std::string& agent,
                         const grpc::Status& status) {
  WindowReason reason;
  reason.kind = ReasonKind::kStep;
  reason.name = step;
  reason.code = rpc::GrpcCodeName(status.error_code());
  reason.host = agent;
  reason.text = step + ": agent " + agent + ": " + Describe(status);
  // The coordinator never cancels its own calls (they end by deadline), so CANCELLED comes from
  // an agent that is stopping and cancelled the calls it was serving (docs/agent.md): the agent
  // is going away, as when its transport is lost.
  if (rpc::TransportLost(status) || status.error_code() == grpc::StatusCode::CANCELLED) {
    reason.kind = ReasonKind::kAgentLost;
    reason.text = "agent_lost: " + reason.text;
  }
  return reason;
}

v1::StopTargetRequest StopRequest(const std::string& handle, const std::string& window) {
  v1::StopTargetRequest req;
  req.set_handle(handle);
  req.set_grace_ms(2000);
  req.set_window(window);
  return req;
}

std::string TopForeignJson(const v1::HostFigures& h) {
  nlohmann::json users = nlohmann::json::array();
  for (const auto& u : h.top_foreign())
    users.push_back({{"comm", u.comm()}, {"cpu_pct", u.cpu_pct()}});
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

WindowProtocol::WindowProtocol(AgentRegistry& agents, const AgentRegistry::Placement& placement,
                               const Campaign& campaign, int64_t campaign_id,
                               const PlannedWindow& planned, std::string spool_key,
                               std::string window, Calibration& calibration, TargetSession& session,
                               WindowOutcome& out)
    : agents_(agents),
      session_(session),
      placement_(placement),
      campaign_(campaign),
      campaign_key_(AgentCampaignKey(campaign.name, campaign_id)),
      planned_(planned),
      spool_key_(std::move(spool_key)),
      window_(std::move(window)),
      calibration_(calibration),
      out_(out),
      clock_(agents.clock()),
      server_(agents.Stub(placement.server_agent)) {
  std::vector<std::string> names = placement.load_agents;
  if (names.empty()) names.push_back(placement.load_agent);
  if (names.size() > 1 && planned.connections < static_cast<int>(names.size())) {
    // Every load agent needs a connection of its own.
    const size_t keep = static_cast<size_t>(std::max(1, planned.connections));
    spdlog::warn(
        "window {} {} {} round {}: {} connections cannot be split over {} load agents; "
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

WindowReason WindowProtocol::Failure(const std::string& step, const std::string& agent,
                                     const grpc::Status& status,
                                     std::chrono::steady_clock::time_point called) {
  WindowReason reason = StepFailure(step, agent, status);
  if (reason.kind == ReasonKind::kStep &&
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED &&
      agents_.LapsedSince(agent, called)) {
    reason.kind = ReasonKind::kAgentLost;
    reason.text = "agent_lost: " + reason.text + " (its lease expired during the call)";
  }
  if (reason.kind == ReasonKind::kAgentLost) agents_.MarkUnreachable(agent);
  return reason;
}

bool WindowProtocol::StepFailedSoFar() const {
  return std::any_of(reasons_.begin(), reasons_.end(),
                     [](const WindowReason& r) { return r.kind != ReasonKind::kGate; });
}

grpc::Status WindowProtocol::CheckOnce(v1::Agent::StubInterface& stub,
                                       const v1::CheckHostRequest& req, v1::CheckHostReply& reply) {
  grpc::ClientContext ctx;
  SetDeadline(ctx, clock_, std::chrono::seconds(10));
  return stub.CheckHost(&ctx, req, &reply);
}

void WindowProtocol::CalibrateAgent(v1::Agent::StubInterface& stub, const std::string& agent,
                                    const v1::CheckHostRequest& req) {
  // The campaign's calibration starts from kCalibrationRuns self-tests of their own at its
  // start; every window's self-test then joins its recent ones (SelfTestDrift).
  std::vector<double> runs;
  for (int i = 0; i < kCalibrationRuns; ++i) {
    v1::CheckHostReply again;
    if (!CheckOnce(stub, req, again).ok()) break;
    runs.push_back(again.selftest_wall_ms());
  }
  const AgentCalibration& calibration = calibration_[agent] = Calibrate(runs);
  const SelftestCalibration& start = calibration.start;
  const DriftThreshold threshold =
      SelftestDriftThreshold(campaign_.gates.selftest_drift, start.spread);
  SelftestCalibrationRow row;
  row.agent = agent;
  row.runs = start.runs;
  row.median_ms = start.median_ms;
  row.spread = start.spread;
  row.threshold_pct = threshold.max_pct;
  row.threshold_source = threshold.capped       ? "capped"
                         : threshold.calibrated ? "calibrated"
                                                : "configured";
  out_.calibrations.push_back(std::move(row));
}

bool WindowProtocol::CheckHost(v1::Agent::StubInterface& stub, const std::string& agent,
                               const std::vector<int>& cpus, std::optional<double>& selftest_ms,
                               HostMeasures& host) {
  v1::CheckHostRequest req;
  for (int cpu : cpus) req.add_cpus(cpu);
  v1::CheckHostReply reply;
  const auto called = clock_.Now();
  grpc::Status status = CheckOnce(stub, req, reply);
  if (!status.ok()) return Failed(Failure("check_host", agent, status, called));
  selftest_ms = reply.selftest_wall_ms();
  if (calibration_.count(agent) == 0) CalibrateAgent(stub, agent, req);
  // A run the gate refuses as too slow does not become the norm (SelfTestDrift).
  // The threshold from the host's spread so far, before this self-test can join it.
  const std::optional<double> spread = HostSpread(calibration_[agent]);
  std::optional<double> refuse_above;
  if (campaign_.gates.selftest_drift.enabled) {
    refuse_above = SelftestDriftThreshold(campaign_.gates.selftest_drift, spread).max_pct / 100;
  }
  if (auto drift = SelfTestDrift(calibration_, agent, reply.selftest_wall_ms(), refuse_above)) {
    host.selftest_drift = *drift;
    host.selftest_spread = spread;
    host.selftest_descheduled =
        reply.selftest_passes() > 0 && reply.selftest_descheduled() >= reply.selftest_passes();
    if (!out_.row.selftest_drift || std::abs(*drift) > std::abs(*out_.row.selftest_drift)) {
      out_.row.selftest_drift = *drift;
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

void KeepWorst(const HostMeasures& h, const SelftestDriftGate& drift_gate, HostMeasures& worst) {
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
  // Each agent's drift against its own threshold: the one farthest beyond (or least within) it.
  // Signed: only slower fails (docs/gates.md), so a faster host is never the worst.
  auto excess = [&](const HostMeasures& m) {
    return *m.selftest_drift - SelftestDriftThreshold(drift_gate, m.selftest_spread).max_pct / 100;
  };
  if (h.selftest_drift && (!worst.selftest_drift || excess(h) > excess(worst))) {
    worst.selftest_drift = h.selftest_drift;
    worst.selftest_spread = h.selftest_spread;
    worst.selftest_descheduled = h.selftest_descheduled;
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

bool WindowProtocol::StartTargetProcess() {
  const TargetDef* def = campaign_.FindTarget(planned_.target);
  v1::StartTargetRequest req;
  // The agent's catalogue target it runs ([[target]] of) and the commit of it ([[target]]
  // commit), which the agent builds first or finds built.
  req.set_target(def != nullptr && !def->of.empty() ? def->of : planned_.target);
  if (def != nullptr) {
    for (int cpu : def->cpus) req.add_cpus(cpu);
    req.set_commit(def->commit);
  }
  req.set_window_label(WindowLabel(campaign_, planned_));
  req.set_window(window_);
  req.set_campaign(campaign_key_);
  req.set_round(planned_.round);
  if (campaign_.Profiles(planned_.target)) req.set_profile_hz(campaign_.profile_hz);
  v1::StartTargetReply reply;
  grpc::ClientContext ctx;
  auto ready_budget = def != nullptr ? def->ready_timeout : std::chrono::milliseconds(10000);
  // A commit may be built first: the recipe's limit (the campaign's own, else the default 10
  // minutes, as the agent's catalogue holds the recipe) on top.
  if (def != nullptr && !def->commit.empty()) ready_budget += def->recipe.time_limit;
  SetDeadline(ctx, clock_, ready_budget + std::chrono::seconds(10));
  const auto called = clock_.Now();
  grpc::Status status = server_->StartTarget(&ctx, req, &reply);
  if (!status.ok()) {
    // A commit that does not build is its own step: never measured, and told from a target
    // that would not start (docs/store.md, "windows"; a bisection passes over it).
    const bool build_failed = rpc::HandlerReason(status) == rpc::kBuildFailedReason;
    return Failed(
        Failure(build_failed ? "build" : "start_target", placement_.server_agent, status, called));
  }
  handle_ = reply.handle();
  target_window_ = window_;
  port_ = reply.port();
  target_ca_pem_ = reply.tls_ca_pem();
  out_.row.target_version = reply.version();
  out_.row.target_commit = reply.commit();
  for (const auto& failure : reply.check_failures()) {
    measures_.scheduling_failures.push_back(failure);
  }
  out_.row.startup_ms = reply.startup_ms();
  out_.row.first_request_ms = reply.first_request_ms();
  out_.row.idle_rss_kb = reply.idle_rss_kb();
  // Side services (docs/services.md): how each was found, and the resets that ran.
  for (const auto& started : reply.services()) {
    ServiceRow row;
    row.service = started.name();
    row.started = started.started();
    if (started.started()) row.startup_ms = started.startup_ms();
    for (const auto& reset : reply.resets()) {
      if (reset.service() == started.name()) row.reset_ms = reset.ms();
    }
    out_.services.push_back(std::move(row));
  }
  measures_.has_services = reply.services_size() > 0;
  return true;
}

bool WindowProtocol::CheckConformance() {
  v1::CheckConformanceRequest req;
  req.set_host(placement_.server_host);
  req.set_port(port_);
  req.set_timeout_ms(2000);
  req.set_tls_ca_pem(target_ca_pem_);
  for (const auto& s : campaign_.scenarios) AddCase(s, false, req);
  for (const auto& n : campaign_.negatives) AddCase(n, true, req);
  v1::CheckConformanceReply reply;
  grpc::ClientContext ctx;
  SetDeadline(ctx, clock_, std::chrono::milliseconds(5000 + 2000 * req.cases_size()));
  // From the first load agent only: the others take the same network path to the same target.
  const LoadShare& first = shares_.front();
  const auto called = clock_.Now();
  grpc::Status status = first.stub->CheckConformance(&ctx, req, &reply);
  if (!status.ok()) return Failed(Failure("conformance", first.agent, status, called));
  if (reply.ok()) return true;
  // Judged with the other gates (Judge); with the gate off the load goes ahead.
  measures_.conformance_diffs.assign(reply.diffs().begin(), reply.diffs().end());
  if (campaign_.gates.conformance.enabled) return false;
  spdlog::warn(
      "window {} {} {} round {}: the target fails conformance ({} differences) but "
      "[gates] conformance = false: measuring it anyway",
      planned_.target, planned_.scenario, LoadLevelLabel(planned_), planned_.round,
      reply.diffs_size());
  return true;
}

void WindowProtocol::StopTargetProcess() {
  if (handle_.empty()) return;
  v1::StopTargetReply reply;
  grpc::ClientContext ctx;
  SetDeadline(ctx, clock_, std::chrono::seconds(10));
  const auto called = clock_.Now();
  grpc::Status status = server_->StopTarget(&ctx, StopRequest(handle_, target_window_), &reply);
  if (!status.ok()) {
    Failed(Failure("stop_target", placement_.server_agent, status, called));
    return;
  }
  if (reply.exited_before_stop() || target_died_) {
    measures_.target_exited = true;
    measures_.target_exit_text = reply.exit_description();
    measures_.target_last_log_lines.assign(reply.last_log_lines().begin(),
                                           reply.last_log_lines().end());
  }
}

void WindowProtocol::Judge(bool measured) {
  auto& row = out_.row;
  if (measured && row.requests == 0) {
    WindowReason none;
    none.name = "no_responses";
    none.text = "no_responses: the target answered no request in the measured interval";
    reasons_.push_back(std::move(none));
    measured = false;
  }
  if (!measured) {
    // Nothing was measured: only what the target did can be judged.
    WindowMeasures target;
    target.conformance_diffs = measures_.conformance_diffs;
    target.target_exited = measures_.target_exited;
    target.target_exit_text = measures_.target_exit_text;
    target.target_last_log_lines = measures_.target_last_log_lines;
    for (const GateReason& gate : JudgeWindow(target, campaign_.gates)) {
      reasons_.push_back(FromGate(gate));
    }
    return;
  }
  WindowMeasures& m = measures_;
  if (server_host_.interval_s() > 0) FillHostMeasures(server_host_, m.server);
  // The load side is judged by its worst agent, reading by reading (KeepWorst).
  for (LoadShare& share : shares_) {
    if (share.have_result && share.result.host().interval_s() > 0) {
      FillHostMeasures(share.result.host(), share.host);
    }
    KeepWorst(share.host, campaign_.gates.selftest_drift, m.load);
  }
  m.generator_bound = row.generator_bound != 0;
  m.requests = row.requests;
  m.transport_errors = transport_errors_;
  m.mismatches = mismatches_;
  for (const GateReason& gate : JudgeWindow(m, campaign_.gates)) reasons_.push_back(FromGate(gate));
}

void WindowProtocol::Run() {
  std::string unknown = server_ ? "" : placement_.server_agent;
  for (const LoadShare& share : shares_) {
    if (unknown.empty() && !share.stub) unknown = share.agent;
  }
  if (!unknown.empty()) {
    WindowReason placement;
    placement.name = "placement";
    placement.host = unknown;
    placement.text = "placement: agent " + unknown + " is unknown";
    reasons_.push_back(std::move(placement));
    return Finish();
  }
  const bool reuse =
      !planned_.start_process && !session_.handle.empty() && session_.target == planned_.target;
  // The plan wants a fresh process: the kept one goes first, so only one target runs. So does
  // a kept one when the hosts fail their check.
  if (!reuse) EndSession(agents_, placement_, session_);
  if (!CheckHosts()) {
    EndSession(agents_, placement_, session_);
    return Finish();
  }
  bool ready = true;
  if (reuse) {
    handle_ = session_.handle;
    target_window_ = session_.window;
    port_ = session_.port;
    target_ca_pem_ = session_.tls_ca_pem;
  } else {
    ready = StartTargetProcess() && CheckConformance();
  }
  const bool measured = ready && MeasureLoad();
  if (measured && out_.row.requests > 0 && !StepFailedSoFar() && !planned_.stop_process &&
      !target_died_) {
    session_ = {planned_.target, handle_, port_, target_window_, target_ca_pem_};
  } else {
    StopTargetProcess();
    session_ = {};
  }
  Judge(measured);
  Finish();
}

void WindowProtocol::Finish() {
  // A failure outranks a skipped or invalid verdict; the reasons keep everything that was seen.
  const Verdict verdict = DecideVerdict(reasons_, campaign_.gates.mode);
  out_.row.verdict = VerdictName(verdict);
  out_.row.reasons = ReasonTextsJson(reasons_);
  out_.row.outcome = OutcomeJson(reasons_);
  out_.reasons = reasons_;
}

}  // namespace window_detail

using window_detail::Describe;
using window_detail::SetDeadline;
using window_detail::StopRequest;
using window_detail::WindowProtocol;

namespace {

// The median of a list that is not empty.
double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The median absolute deviation of normal noise is 0.6745 of its standard deviation.
constexpr double kMadToSigma = 1.4826;

}  // namespace

SelftestCalibration CalibrateSelftest(const std::vector<double>& selftest_ms) {
  std::vector<double> ran;
  std::copy_if(selftest_ms.begin(), selftest_ms.end(), std::back_inserter(ran),
               [](double ms) { return ms > 0; });
  SelftestCalibration c;
  c.runs = static_cast<int>(ran.size());
  if (ran.empty()) return c;
  c.median_ms = Median(ran);
  if (c.runs < kMinSpreadRuns) return c;
  std::vector<double> deviations;
  for (double ms : ran) deviations.push_back(std::abs(ms / c.median_ms - 1));
  c.spread = kMadToSigma * Median(std::move(deviations));
  return c;
}

AgentCalibration Calibrate(const std::vector<double>& selftest_ms) {
  AgentCalibration c{CalibrateSelftest(selftest_ms), {}};
  for (double ms : selftest_ms) {
    if (ms > 0) c.accepted.push_back(ms);
  }
  while (c.accepted.size() > kRecentSelftests) c.accepted.pop_front();
  return c;
}

std::optional<double> HostSpread(const AgentCalibration& calibration) {
  if (!calibration.start.spread) return std::nullopt;
  const SelftestCalibration over_campaign =
      CalibrateSelftest({calibration.accepted.begin(), calibration.accepted.end()});
  return std::max(*calibration.start.spread, over_campaign.spread.value_or(0));
}

std::optional<double> SelfTestDrift(Calibration& calibration, const std::string& agent,
                                    double selftest_ms, std::optional<double> refuse_above) {
  auto it = calibration.find(agent);
  if (it == calibration.end() || it->second.accepted.empty() || selftest_ms <= 0) {
    return std::nullopt;
  }
  std::deque<double>& accepted = it->second.accepted;
  const double median = Median({accepted.begin(), accepted.end()});
  if (median <= 0) return std::nullopt;
  const double drift = selftest_ms / median - 1;
  if (!refuse_above || drift <= *refuse_above) {
    accepted.push_back(selftest_ms);
    while (accepted.size() > kRecentSelftests) accepted.pop_front();
  }
  return drift;
}

std::string SpoolKey(int64_t campaign_id, const PlannedWindow& planned, int attempt) {
  // Spool keys are file names: "c64@wrk" becomes "c64_wrk" (no level label has a '_').
  std::string level = LoadLevelLabel(planned);
  std::replace(level.begin(), level.end(), '@', '_');
  std::string key = std::to_string(campaign_id) + "-" + planned.target + "-" + planned.scenario +
                    "-" + level + "-r" + std::to_string(planned.round);
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
  return {planned.target, planned.scenario, LoadLevelLabel(planned),
          planned.round,  planned.position, ""};
}

void EndSession(AgentRegistry& agents, const AgentRegistry::Placement& placement,
                TargetSession& session) {
  if (session.handle.empty()) return;
  auto stub = agents.Stub(placement.server_agent);
  if (stub) {
    v1::StopTargetReply reply;
    grpc::ClientContext ctx;
    SetDeadline(ctx, agents.clock(), std::chrono::seconds(10));
    grpc::Status status =
        stub->StopTarget(&ctx, StopRequest(session.handle, session.window), &reply);
    if (!status.ok()) {
      ScopedLogAgent about(placement.server_agent);
      spdlog::warn("stopping kept target {} on agent {}: {}", session.target,
                   placement.server_agent, Describe(status));
    }
  }
  session = {};
}

std::string WindowLabel(const Campaign& campaign, const PlannedWindow& planned) {
  return campaign.name + "-r" + std::to_string(planned.round) + "-" + planned.target + "-" +
         planned.scenario + "-" + LoadLevelLabel(planned) +
         (planned.noise ? "-n" + std::to_string(planned.position) : "");
}

std::string AgentCampaignKey(const std::string& campaign_name, int64_t campaign_id) {
  return campaign_name + "#" + std::to_string(campaign_id);
}

WindowOutcome RunWindow(AgentRegistry& agents, const AgentRegistry::Placement& placement,
                        const Campaign& campaign, int64_t campaign_id, const PlannedWindow& planned,
                        int attempt, const std::string& window_token, Calibration& calibration,
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
  auto begin = FormatIsoTime(agents.clock().WallNow());
  ScopedLogContext log_context(campaign.name, WindowLabel(campaign, planned));
  WindowProtocol(agents, placement, campaign, campaign_id, planned,
                 SpoolKey(campaign_id, planned, attempt), window_token, calibration, session, out)
      .Run();
  for (SelftestCalibrationRow& calibrated : out.calibrations) calibrated.campaign_id = campaign_id;
  if (row.started_at.empty()) row.started_at = begin;
  if (row.ended_at.empty()) row.ended_at = FormatIsoTime(agents.clock().WallNow());
  return out;
}

}  // namespace benchlab
