#include "coordinator/server/scheduler.h"

#include <grpcpp/client_context.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <tuple>

#include "analysis/gate_audit.h"
#include "analysis/report_format.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/parse.h"
#include "coordinator/campaign.h"
#include "coordinator/outcome.h"
#include "coordinator/plan.h"
#include "coordinator/server/adaptive_plan.h"
#include "coordinator/server/agent_limits.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/server/metrics.h"
#include "coordinator/server/window_runner.h"
#include "coordinator/window_token.h"
#include "spdlog/spdlog.h"

namespace benchlab {

Scheduler::Scheduler(Store& store, AgentRegistry& agents, uint64_t max_windows,
                     CoordinatorMetrics* metrics)
    : store_(store), agents_(agents), max_windows_(max_windows), metrics_(metrics) {}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Start() {
  stopping_ = false;
  // Windows a previous coordinator was running when it stopped: each becomes a failed attempt
  // and is measured again when its campaign resumes.
  auto cut = store_.FailClaimedWindows(
      "coordinator_restart: the coordinator stopped while this window ran");
  if (!cut.ok()) {
    spdlog::error("recording windows cut off by a restart: {}", cut.status().ToString());
  } else if (*cut > 0) {
    spdlog::warn("{} window(s) were cut off by a coordinator restart; they run again", *cut);
  }
  thread_ = std::thread([this] { Loop(); });
}

void Scheduler::Stop() {
  stopping_ = true;
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t Scheduler::version() {
  std::lock_guard lock(mu_);
  return version_;
}

void Scheduler::Bump() {
  {
    std::lock_guard lock(mu_);
    ++version_;
  }
  cv_.notify_all();
}

void Scheduler::SetWaiting(int64_t campaign_id, const std::string& why) {
  {
    std::lock_guard lock(mu_);
    if (why.empty()) {
      waiting_.erase(campaign_id);
    } else {
      waiting_[campaign_id] = why;
    }
    ++version_;
  }
  cv_.notify_all();
}

std::string Scheduler::WaitingFor(int64_t campaign_id) {
  std::lock_guard lock(mu_);
  auto it = waiting_.find(campaign_id);
  return it == waiting_.end() ? "" : it->second;
}

namespace {

// Where the file asks the campaign to run, as placement specs: one per pair it names, else
// one of its selectors (pairs = "all" included), each with its [host] requirements.
std::vector<PlacementSpec> FilePlacementSpecs(const Campaign& campaign) {
  std::vector<PlacementSpec> specs;
  for (const auto& [server, load] : campaign.placement_pairs) specs.push_back({{server}, {load}});
  if (specs.empty()) specs.push_back({campaign.placement_server, campaign.placement_load});
  for (PlacementSpec& spec : specs) spec.host_require = campaign.host_require;
  return specs;
}

}  // namespace

Result<CampaignCheck> Scheduler::Check(const std::string& spec_toml, const std::string& source,
                                       const std::string& campaign_dir) {
  auto campaign = ParseCampaignText(spec_toml, source, campaign_dir);
  if (!campaign.ok()) return campaign.status();
  return CheckParsed(*campaign);
}

Result<CampaignCheck> Scheduler::CheckParsed(const Campaign& campaign) {
  BENCHLAB_RETURN_IF_ERROR(CheckPlanSize(campaign, max_windows_));
  const std::string& source = campaign.source_name;
  CampaignCheck check;
  check.total_windows = static_cast<int>(SizeOfPlan(campaign).Total());
  const std::vector<std::string> targets = CatalogueNames(campaign);
  bool all_await = true;
  for (const PlacementSpec& spec : FilePlacementSpecs(campaign)) {
    bool awaits = false;
    for (const std::string& problem : agents_.PlacementProblems(spec, targets, &awaits)) {
      check.problems.push_back(source + ": placement: " + problem);
    }
    all_await = all_await && awaits;
  }
  check.awaits_registration = !check.problems.empty() && all_await;
  return check;
}

void Scheduler::WaitForChange(uint64_t seen, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return version_ != seen || stopping_.load(); });
}

Result<Submission> Scheduler::Submit(const std::string& spec_toml, const std::string& source,
                                     const std::string& campaign_dir, const std::string& gates_mode,
                                     bool profile) {
  if (gates_mode != "" && gates_mode != "warn" && gates_mode != "enforce") {
    return Status::InvalidArgument("gates mode: expected \"warn\" or \"enforce\", got \"" +
                                   gates_mode + "\"");
  }
  auto campaign = ParseCampaignText(spec_toml, source, campaign_dir);
  if (!campaign.ok()) return campaign.status();
  auto check = CheckParsed(*campaign);
  if (!check.ok()) return check.status();
  if (!check->problems.empty() && !check->awaits_registration) {
    return Status::FailedPrecondition(fmt::format("{}", fmt::join(check->problems, "\n")));
  }
  // The coordinator never runs a target's command or environment (agents run their own
  // catalogues): secrets in env are kept only as hashes.
  auto redacted = RedactCampaignText(spec_toml, source);
  if (!redacted.ok()) return redacted.status();
  CampaignRow row;
  row.name = campaign->name;
  row.series = campaign->series;
  row.state = CampaignStateName(CampaignState::kQueued);
  row.gates_mode = gates_mode;
  row.profile = profile;
  row.baseline = campaign->baseline;
  row.spec_toml = std::move(*redacted);
  row.source = source;
  row.created_at = FormatIsoTime(std::chrono::system_clock::now());
  // A fleet campaign runs its matrix once per pair; with pairs = "all" the count is known once
  // it is placed.
  row.total_windows = static_cast<int>(SizeOfPlan(*campaign).Total());
  std::vector<TargetRow> targets;
  for (const auto& t : campaign->targets) {
    targets.push_back({t.name, nlohmann::json(t.command).dump(), FormatCpuList(t.cpus)});
  }
  std::vector<ScenarioRow> scenarios;
  auto add = [&](const ScenarioDef& s, const char* kind) {
    scenarios.push_back(
        {s.name, kind, s.method, s.path, s.expect.status, s.expect.body.value_or("")});
  };
  for (const auto& s : campaign->scenarios) add(s, "scenario");
  for (const auto& s : campaign->negatives) add(s, "negative");
  auto id = store_.CreateCampaign(row, targets, scenarios);
  if (!id.ok()) return id.status();
  spdlog::info("campaign {} queued: {} windows", row.name, row.total_windows);
  Bump();
  return Submission{*id, row.name, row.total_windows};
}

void Scheduler::Loop() {
  while (!stopping()) {
    auto campaigns = store_.ListCampaigns();
    if (!campaigns.ok()) {
      spdlog::error("listing campaigns: {}", campaigns.status().ToString());
    } else {
      // A campaign interrupted by a stop resumes before queued ones start.
      const CampaignRow* next = nullptr;
      for (const auto& c : *campaigns) {
        if (c.Is(CampaignState::kRunning)) {
          next = &c;
          break;
        }
      }
      for (const auto& c : *campaigns) {
        if (next == nullptr && c.Is(CampaignState::kQueued)) next = &c;
      }
      if (next != nullptr) {
        const int64_t id = next->id;
        RunCampaign(*next);
        if (on_ended_ && !stopping()) {
          auto row = store_.FindCampaignById(id);
          if (row.ok() && *row &&
              ((*row)->Is(CampaignState::kDone) || (*row)->Is(CampaignState::kFailed) ||
               (*row)->Is(CampaignState::kCancelled))) {
            on_ended_(id);
          }
        }
        continue;
      }
    }
    uint64_t seen = version();
    WaitForChange(seen, std::chrono::milliseconds(500));
  }
}

void Scheduler::Acknowledge(const std::vector<SpoolEntry>& spooled) {
  std::map<std::string, v1::AcknowledgeRequest> by_agent;
  for (const SpoolEntry& entry : spooled) {
    v1::SpoolAck* ack = by_agent[entry.agent].add_acks();
    ack->set_key(entry.key);
    ack->set_window(entry.window);
  }
  for (const auto& [agent, req] : by_agent) {
    auto stub = agents_.Stub(agent);
    if (!stub) continue;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::AcknowledgeReply reply;
    grpc::Status status = stub->Acknowledge(&ctx, req, &reply);
    // Not fatal: the agent offers the result again when it next registers, and it is kept then.
    if (!status.ok()) {
      ScopedLogAgent about(agent);
      spdlog::warn("acknowledging {} results to agent {}: {}", req.acks_size(), agent,
                   status.error_message());
    }
  }
}

namespace {

// Calls `call` with each named agent's stub, side by side on threads of their own, and waits for
// all; empty and unknown names are skipped.
void CallEachAgent(AgentRegistry& agents, const std::set<std::string>& names,
                   const std::function<void(const std::string&, v1::Agent::StubInterface&)>& call) {
  // Side by side: an agent that does not answer costs one deadline, not one per agent.
  std::vector<std::thread> calls;
  for (const std::string& agent : names) {
    if (agent.empty()) continue;
    auto stub = agents.Stub(agent);
    if (!stub) continue;
    calls.emplace_back([stub, agent, &call] {
      ScopedLogAgent about(agent);  // what `call` logs is about this agent
      call(agent, *stub);
    });
  }
  for (auto& t : calls) t.join();
}

}  // namespace

void Scheduler::EndCampaignOnAgents(const CampaignRow& row,
                                    const std::vector<Placement>& placements) {
  std::set<std::string> servers;
  for (const Placement& p : placements) servers.insert(p.server_agent);
  v1::EndCampaignRequest req;
  req.set_campaign(AgentCampaignKey(row.name, row.id));
  CallEachAgent(
      agents_, servers, [&req, &row](const std::string& agent, v1::Agent::StubInterface& stub) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        v1::EndCampaignReply reply;
        grpc::Status status = stub.EndCampaign(&ctx, req, &reply);
        if (!status.ok()) {
          // Its services stop when idle instead (docs/services.md, "Lifetime").
          spdlog::warn("campaign {}: telling agent {} it ended: {}", row.name, agent,
                       status.error_message());
        } else if (reply.services_stopped() > 0 || reply.services_in_use() > 0) {
          spdlog::info("campaign {}: agent {} stopped {} side service(s){}", row.name, agent,
                       reply.services_stopped(),
                       reply.services_in_use() > 0
                           ? ", " + std::to_string(reply.services_in_use()) + " still in use"
                           : "");
        }
      });
}

void Scheduler::RefreshHostFacts(const CampaignRow& row, const std::vector<Placement>& placements) {
  std::set<std::string> names;
  for (const Placement& p : placements) {
    names.insert(p.server_agent);
    names.insert(p.load_agent);
    names.insert(p.load_agents.begin(), p.load_agents.end());
  }
  CallEachAgent(
      agents_, names, [this, &row](const std::string& agent, v1::Agent::StubInterface& stub) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        v1::DescribeHostReply reply;
        grpc::Status status = stub.DescribeHost(&ctx, v1::DescribeHostRequest(), &reply);
        if (!status.ok()) {
          spdlog::warn(
              "campaign {}: agent {} did not describe its host ({}); its registration's host facts "
              "stand",
              row.name, agent, status.error_message());
          return;
        }
        // From the network: checked as a registration's are (docs/fleet.md, "Limits").
        if (Status valid = CheckHostFacts(reply.host()); !valid.ok()) {
          spdlog::warn("campaign {}: agent {} described its host out of bounds: {}", row.name,
                       agent, valid.message());
          return;
        }
        agents_.SetHostFacts(agent, reply.host());
      });
}

namespace {

// How many times a window cut off by a coordinator restart or a lost agent is measured again on
// its own before it is left failed.
constexpr int kMaxAutomaticAttempts = 5;

// A failed window cut off by a coordinator restart or a lost agent, to be measured again.
bool RequeuedByReason(const WindowRow& w) {
  return w.verdict == VerdictName(Verdict::kFailed) &&
         MeasuredAgain(ParseOutcome(w.outcome, w.reasons));
}

bool LostAnAgent(const std::vector<WindowReason>& reasons) {
  return std::any_of(reasons.begin(), reasons.end(),
                     [](const WindowReason& r) { return r.kind == ReasonKind::kAgentLost; });
}

// Where a campaign runs, as the campaigns table keeps it (docs/store.md): one pair
// {"server": "s1", "load": ["l1", "l2"]}, or for a fleet {"pairs": [["s1", "l1"], ...]}.
nlohmann::json PlacementJson(const AgentRegistry::Placement& p) {
  nlohmann::json load = nlohmann::json::array();
  for (const auto& name : p.load_agents) load.push_back(name);
  if (load.empty()) load.push_back(p.load_agent);
  return nlohmann::json{{"server", p.server_agent}, {"load", load}};
}

// The load agents of a placement joined as windows.load_agent stores them ("l1,l2").
std::string LoadAgents(const AgentRegistry::Placement& p) {
  std::string names;
  for (const auto& name : p.load_agents) names += (names.empty() ? "" : ",") + name;
  return names.empty() ? p.load_agent : names;
}

}  // namespace

Result<std::vector<PendingWindow>> Scheduler::Pending(int64_t campaign_id, const Campaign& campaign,
                                                      const std::string& name,
                                                      const std::vector<PlannedWindow>& plan,
                                                      const std::string& pair) {
  WindowFilter filter;
  filter.campaign = name;
  auto stored = store_.ListWindows(filter);
  if (!stored.ok()) return stored.status();
  std::map<WindowKey, WindowRow> newest;
  double first_start = kNaN;  // of any window of the campaign, on any pair
  for (auto& w : *stored) {
    const double start = ParseIsoSeconds(w.started_at);
    if (std::isfinite(start) && !(first_start <= start)) first_start = start;
    if (w.pair != pair) continue;
    auto [it, fresh] = newest.try_emplace(w.Key(), w);
    if (!fresh && w.attempt > it->second.attempt) it->second = w;
  }
  auto reruns = store_.ListRerunRequests(campaign_id);
  if (!reruns.ok()) return reruns.status();
  std::set<WindowKey> asked(reruns->begin(), reruns->end());
  std::vector<PlannedState> state(plan.size());
  std::vector<int> attempt(plan.size(), 1);
  for (size_t i = 0; i < plan.size(); ++i) {
    WindowKey key = KeyOf(plan[i]);
    key.pair = pair;
    auto it = newest.find(key);
    if (it == newest.end()) {
      state[i].pending = true;
      continue;
    }
    state[i].newest = ToMeasurement(it->second);
    if (asked.count(key) ||
        (RequeuedByReason(it->second) && it->second.attempt < kMaxAutomaticAttempts)) {
      state[i].pending = true;
      attempt[i] = it->second.attempt + 1;
    }
  }
  // [stats] max_duration: no new round once this long has passed since the first window, on the
  // coordinator's clock (the registry's).
  const bool budget_spent = BudgetSpent(campaign, first_start, agents_.clock().WallNow());
  std::vector<PendingWindow> pending;
  for (size_t i : SelectAdaptive(campaign, plan, state, budget_spent)) {
    pending.push_back({plan[i], attempt[i]});
  }
  return pending;
}

bool Scheduler::Cancelled(int64_t campaign_id) {
  auto row = store_.FindCampaignById(campaign_id);
  return row.ok() && row->has_value() && (*row)->Is(CampaignState::kCancelled);
}

std::optional<AgentRegistry::Placement> Scheduler::WaitForPlacement(
    const CampaignRow& row, const PlacementSpec& spec, const std::vector<std::string>& targets) {
  std::optional<AgentRegistry::Placement> placement;
  WaitForAgents(row, [&](std::string* why) {
    placement = agents_.Place(spec, targets, why);
    return placement.has_value();
  });
  return placement;
}

void Scheduler::WaitForAgents(const CampaignRow& row,
                              const std::function<bool(std::string* why)>& place) {
  std::string why, last_why;
  while (!stopping() && !Cancelled(row.id) && !place(&why)) {
    if (why != last_why) {
      spdlog::info("campaign {} waits for agents: {}", row.name, why);
      SetWaiting(row.id, why);
    }
    last_why = why;
    uint64_t seen = version();
    WaitForChange(seen, std::chrono::milliseconds(200));
  }
  if (!last_why.empty()) SetWaiting(row.id, "");
}

namespace {

// The campaign file of a stored campaign, with what its submission overrode (`--gates`,
// `--profile`).
Result<Campaign> ParseCampaignRow(const CampaignRow& row) {
  auto campaign = ParseCampaignText(row.spec_toml, row.source, "");
  if (!campaign.ok()) return campaign;
  if (row.gates_mode == "warn") campaign->gates.mode = GateMode::kWarn;
  if (row.gates_mode == "enforce") campaign->gates.mode = GateMode::kEnforce;
  if (row.profile) campaign->profile = true;
  return campaign;
}

// The strings of a JSON array; none for anything else.
std::vector<std::string> JsonStrings(const nlohmann::json& list) {
  std::vector<std::string> out;
  if (list.is_array()) {
    for (const auto& l : list) {
      if (l.is_string()) out.push_back(l.get<std::string>());
    }
  }
  return out;
}

// Where a campaign runs: the pairs it ran on before (`placed`, its stored placement: a resume, a
// re-run), else what the file asks; one spec per pair, a single one without a fleet, each with
// its [host] requirements. None and `all_pairs` set for pairs = "all".
std::vector<PlacementSpec> StoredPlacementSpecs(const nlohmann::json& placed,
                                                const Campaign& campaign, bool& all_pairs) {
  std::vector<PlacementSpec> specs;
  all_pairs = false;
  if (placed.is_object() && placed.contains("pairs")) {
    for (const auto& p : placed["pairs"]) {
      auto both = JsonStrings(p);
      if (both.size() == 2) specs.push_back({{both[0]}, {both[1]}});
    }
  } else if (placed.is_object() && placed.contains("server") && placed["server"].is_string()) {
    specs.push_back({{placed["server"].get<std::string>()},
                     JsonStrings(placed.value("load", nlohmann::json()))});
  } else if (!campaign.placement_pairs.empty()) {
    for (const auto& [server, load] : campaign.placement_pairs) specs.push_back({{server}, {load}});
  } else if (campaign.all_pairs) {
    all_pairs = true;
  } else {
    specs.push_back({campaign.placement_server, campaign.placement_load});
  }
  // [host] require holds wherever the campaign runs, the pairs it ran on before included.
  for (PlacementSpec& spec : specs) spec.host_require = campaign.host_require;
  return specs;
}

}  // namespace

void Scheduler::RunCampaign(const CampaignRow& row) {
  ScopedLogContext log_context(row.name, "");
  auto campaign = ParseCampaignRow(row);
  if (!campaign.ok()) return FailCampaign(row, campaign.status().message());
  const std::vector<PlannedWindow> plan = ExpandMatrix(*campaign);

  // The catalogue targets a server agent must hold ([[target]] of, else the name).
  const std::vector<std::string> target_names = CatalogueNames(*campaign);
  // Where it runs: the pairs it ran on before (a resume, a re-run), else what the file asks.
  const nlohmann::json placed = nlohmann::json::parse(row.placement, nullptr, false);
  bool all_pairs = false;
  const std::vector<PlacementSpec> specs = StoredPlacementSpecs(placed, *campaign, all_pairs);
  const std::vector<Placement> placements = all_pairs
                                                ? WaitForAllPairs(row, *campaign, target_names)
                                                : WaitForPlacements(row, specs, target_names);
  if (placements.empty()) return;  // stopping, cancelled while waiting, or no pair to place
  // pairs = "all" runs the whole plan on every pair it finds: the limit Submit checked for one
  // pair applies to all of them, so that a large fleet cannot multiply a plan past it.
  if (all_pairs) {
    Status size = CheckPlanSize(*campaign, max_windows_, placements.size());
    if (!size.ok()) return FailCampaign(row, size.message());
  }

  const bool fleet = campaign->Fleet() || placed.contains("pairs");
  if (std::string error = MarkRunning(row, placements, fleet, plan.size()); !error.empty()) {
    return FailCampaign(row, error);
  }
  const std::vector<std::string> errors =
      RunOnPairs(row, *campaign, plan, placements, fleet, target_names);
  if (!stopping()) EndCampaignOnAgents(row, placements);
  for (const std::string& error : errors) {
    if (!error.empty()) return FailCampaign(row, error);
  }
  if (stopping()) return;
  if (Cancelled(row.id)) {
    spdlog::info("campaign {} cancelled", row.name);
    Bump();
    return;
  }
  MarkDone(row);
}

void Scheduler::FailCampaign(const CampaignRow& row, const std::string& error) {
  spdlog::error("campaign {} failed: {}", row.name, error);
  if (Status st = store_.SetCampaignState(row.id, CampaignState::kFailed, error); !st.ok()) {
    spdlog::error("campaign {}: recording that it failed: {}", row.name, st.ToString());
  }
  Bump();
}

std::vector<Placement> Scheduler::WaitForPlacements(const CampaignRow& row,
                                                    const std::vector<PlacementSpec>& specs,
                                                    const std::vector<std::string>& targets) {
  std::vector<Placement> placements;
  for (const PlacementSpec& spec : specs) {
    auto placement = WaitForPlacement(row, spec, targets);
    if (!placement) return {};
    placements.push_back(*placement);
  }
  return placements;
}

std::vector<Placement> Scheduler::WaitForAllPairs(const CampaignRow& row, const Campaign& campaign,
                                                  const std::vector<std::string>& targets) {
  PlacementSpec spec{campaign.placement_server, campaign.placement_load, campaign.host_require};
  std::vector<Placement> placements;
  WaitForAgents(row, [&](std::string* why) {
    placements = agents_.PlacePairs(spec, targets, why);
    return !placements.empty();
  });
  return placements;
}

std::string Scheduler::MarkRunning(const CampaignRow& row, const std::vector<Placement>& placements,
                                   bool fleet, size_t plan_size) {
  Status running = store_.SetCampaignState(row.id, CampaignState::kRunning);
  if (!running.ok()) return running.message();
  RefreshHostFacts(row, placements);
  nlohmann::json where;
  if (fleet) {
    where["pairs"] = nlohmann::json::array();
    for (const auto& p : placements) where["pairs"].push_back({p.server_agent, p.load_agent});
  } else {
    where = PlacementJson(placements[0]);
  }
  if (Status st = store_.SetCampaignPlacement(row.id, where.dump(),
                                              static_cast<int>(plan_size * placements.size()));
      !st.ok()) {
    // A resume would place the campaign again from its file, perhaps on other agents.
    return "recording where the campaign runs: " + st.message();
  }
  Bump();
  return "";
}

std::vector<std::string> Scheduler::RunOnPairs(const CampaignRow& row, const Campaign& campaign,
                                               const std::vector<PlannedWindow>& plan,
                                               const std::vector<Placement>& placements, bool fleet,
                                               const std::vector<std::string>& target_names) {
  // One thread per pair; each runs the whole matrix on its pair, one window at a time.
  std::vector<std::string> errors(placements.size());
  auto run_pair = [&](size_t i) {
    const std::string pair = fleet ? placements[i].server_agent : "";
    bool cancelled = false;  // Cancelled() tells, after every pair's end
    errors[i] = RunOnPair(row, campaign, plan, placements[i], pair, target_names, cancelled);
  };
  if (placements.size() == 1) {
    run_pair(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < placements.size(); ++i) threads.emplace_back(run_pair, i);
    for (auto& t : threads) t.join();
  }
  return errors;
}

void Scheduler::MarkDone(const CampaignRow& row) {
  Status done_state = store_.SetCampaignState(row.id, CampaignState::kDone);
  if (done_state.ok()) {
    spdlog::info("campaign {} done", row.name);
  } else {
    spdlog::error("campaign {}: {}", row.name, done_state.message());
  }
  // A re-run asked for while the last window ran would otherwise wait for the next request.
  auto late = store_.ListRerunRequests(row.id);
  if (!late.ok()) {
    spdlog::error("campaign {}: listing re-runs: {}", row.name, late.status().ToString());
  } else if (!late->empty()) {
    if (Status st = store_.SetCampaignState(row.id, CampaignState::kQueued); !st.ok()) {
      spdlog::error("campaign {}: queueing {} late re-run(s): {}", row.name, late->size(),
                    st.ToString());
    }
  }
  Bump();
}

std::string Scheduler::RunOnPair(const CampaignRow& row, const Campaign& campaign,
                                 const std::vector<PlannedWindow>& plan,
                                 AgentRegistry::Placement placement, const std::string& pair,
                                 const std::vector<std::string>& target_names, bool& cancelled) {
  ScopedLogContext log_context(row.name, "");  // a fleet's pairs run on threads of their own
  auto busy = [&](bool on) {
    agents_.SetBusy(placement.server_agent, on);
    for (const auto& load : placement.load_agents) agents_.SetBusy(load, on);
    agents_.SetBusy(placement.load_agent, on);
  };
  busy(true);
  spdlog::info("campaign {} runs on server agent {} and load agent {}", row.name,
               placement.server_agent, placement.load_agent);
  Calibration calibration;
  TargetSession session;
  std::string error;
  // A window a gate refused is measured again at once, within its round, so that paired rounds
  // keep both sides (docs/gates.md, "A refusal costs a window, not a round"); the budget is the
  // campaign's on this pair, less what earlier runs of it (before a resume) already spent.
  int remeasure_left = RemeasureBudget(campaign.gates, static_cast<int>(plan.size()));
  {
    WindowFilter filter;
    filter.campaign = row.name;
    if (auto stored = store_.ListWindows(filter); stored.ok()) {
      std::erase_if(*stored, [&](const WindowRow& w) { return w.pair != pair; });
      remeasure_left -= CountRemeasured(*stored).windows;
    }
  }
  // Pass after pass until nothing is pending: re-runs asked for meanwhile join the next pass.
  while (!stopping() && !cancelled && error.empty()) {
    auto pending = Pending(row.id, campaign, row.name, plan, pair);
    if (!pending.ok()) {
      error = pending.status().message();
      break;
    }
    if (pending->empty()) break;
    bool lost_agent = false;
    for (const PendingWindow& first : *pending) {
      PendingWindow p = first;
      for (int remeasures = 0;; ++remeasures) {
        if (stopping()) break;
        if ((cancelled = Cancelled(row.id))) break;
        const PlannedWindow& planned = p.planned;
        WindowKey key = KeyOf(planned);
        key.pair = pair;
        WindowClaim claim{row.id,
                          key,
                          planned.noise,
                          planned.connections,
                          p.attempt,
                          placement.server_agent,
                          LoadAgents(placement),
                          ""};
        if (Status st = store_.ClaimWindow(claim); !st.ok()) {
          error = "claiming window: " + st.message();
          break;
        }
        Bump();  // watchers show the window now running
        const std::string token =
            WindowToken(store_.lab_secret(), SpoolKey(row.id, planned, p.attempt));
        const auto claimed = std::chrono::steady_clock::now();
        WindowOutcome outcome = RunWindow(agents_, placement, campaign, row.id, planned, p.attempt,
                                          token, calibration, session);
        outcome.row.campaign_id = row.id;
        outcome.row.pair = pair;
        // What the report shows of each host's selftest_drift threshold; the windows do not
        // depend on it, so a failure to keep it is logged, not the campaign's.
        for (const SelftestCalibrationRow& calibrated : outcome.calibrations) {
          if (Status st = store_.PutSelftestCalibration(calibrated); !st.ok()) {
            spdlog::error("campaign {}: {}", row.name, st.message());
          }
        }
        auto id = store_.InsertWindow(outcome.row, outcome.samples, outcome.services,
                                      outcome.probes, outcome.profile);
        if (!id.ok()) {
          error = "storing window: " + id.status().message();
          break;
        }
        if (metrics_) {
          metrics_->RecordWindow(
              outcome.row.verdict, outcome.reasons,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - claimed).count());
        }
        Acknowledge(outcome.spooled);
        spdlog::info("window {}/{} {} {} {} round {}{}{}: {} {:.0f} req/s", planned.index + 1,
                     plan.size(), planned.target, planned.scenario, LoadLevelLabel(planned),
                     planned.round, p.attempt > 1 ? " attempt " + std::to_string(p.attempt) : "",
                     pair.empty() ? "" : " on " + pair, outcome.row.verdict, outcome.row.rps);
        Bump();
        if (LostAnAgent(outcome.reasons)) {
          // The window goes back in the queue; this pair waits for its agents to come back.
          EndSession(agents_, placement, session);
          busy(false);
          PlacementSpec same{
              {placement.server_agent}, placement.load_agents, campaign.host_require};
          if (same.load.empty()) same.load = {placement.load_agent};
          auto back = WaitForPlacement(row, same, target_names);
          if (!back) break;
          placement = *back;
          busy(true);
          lost_agent = true;
          break;  // recompute what is pending
        }
        if (outcome.row.verdict != VerdictName(Verdict::kInvalid) ||
            remeasures >= kRemeasuresPerWindow || remeasure_left <= 0) {
          break;
        }
        --remeasure_left;
        ++p.attempt;
        spdlog::info("window {}/{} measured again at once: {}", planned.index + 1, plan.size(),
                     outcome.reasons.empty() ? std::string("refused") : outcome.reasons[0].text);
      }
      if (lost_agent || !error.empty() || cancelled || stopping()) break;
    }
  }
  EndSession(agents_, placement, session);
  busy(false);
  return error;
}

}  // namespace benchlab
