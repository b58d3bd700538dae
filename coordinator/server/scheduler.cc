#include "coordinator/server/scheduler.h"

#include <map>
#include <set>

#include <grpcpp/client_context.h>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/parse.h"
#include "coordinator/campaign.h"
#include "coordinator/plan.h"
#include "coordinator/server/window_runner.h"
#include "spdlog/spdlog.h"

namespace benchlab {

Scheduler::Scheduler(Store& store, AgentRegistry& agents) : store_(store), agents_(agents) {}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Start() {
  stopping_ = false;
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

void Scheduler::WaitForChange(uint64_t seen, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return version_ != seen || stopping_.load(); });
}

Result<Submission> Scheduler::Submit(const std::string& spec_toml, const std::string& source,
                                     const std::string& campaign_dir) {
  auto campaign = ParseCampaignText(spec_toml, source, campaign_dir);
  if (!campaign.ok()) return campaign.status();
  CampaignRow row;
  row.name = campaign->name;
  row.state = "queued";
  row.baseline = campaign->baseline;
  row.spec_toml = spec_toml;
  row.source = source;
  row.created_at = FormatIsoTime(std::chrono::system_clock::now());
  row.total_windows = static_cast<int>(ExpandMatrix(*campaign).size());
  std::vector<TargetRow> targets;
  for (const auto& t : campaign->targets) {
    targets.push_back({t.name, nlohmann::json(t.command).dump(), FormatCpuList(t.cpus)});
  }
  std::vector<ScenarioRow> scenarios;
  auto add = [&](const ScenarioDef& s, const char* kind) {
    scenarios.push_back({s.name, kind, s.method, s.path, s.expect.status,
                         s.expect.body.value_or("")});
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
        if (c.state == "running") {
          next = &c;
          break;
        }
      }
      for (const auto& c : *campaigns) {
        if (next == nullptr && c.state == "queued") next = &c;
      }
      if (next != nullptr) {
        RunCampaign(*next);
        continue;
      }
    }
    uint64_t seen = version();
    WaitForChange(seen, std::chrono::milliseconds(500));
  }
}

void Scheduler::Acknowledge(const std::vector<std::pair<std::string, std::string>>& spooled) {
  std::map<std::string, v1::AcknowledgeRequest> by_agent;
  for (const auto& [agent, key] : spooled) by_agent[agent].add_keys(key);
  for (const auto& [agent, req] : by_agent) {
    auto stub = agents_.Stub(agent);
    if (!stub) continue;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::AcknowledgeReply reply;
    grpc::Status status = stub->Acknowledge(&ctx, req, &reply);
    // Not fatal: the agent offers the result again when it next registers, and it is kept then.
    if (!status.ok()) {
      spdlog::warn("acknowledging {} results to agent {}: {}", req.keys_size(), agent,
                   status.error_message());
    }
  }
}

void Scheduler::RunCampaign(const CampaignRow& row) {
  auto fail = [&](const std::string& error) {
    spdlog::error("campaign {} failed: {}", row.name, error);
    (void)store_.SetCampaignState(row.id, "failed", error);
    Bump();
  };
  auto campaign = ParseCampaignText(row.spec_toml, row.source, "");
  if (!campaign.ok()) return fail(campaign.status().message());

  std::vector<std::string> target_names;
  for (const auto& t : campaign->targets) target_names.push_back(t.name);
  std::optional<AgentRegistry::Placement> placement;
  std::string why, last_why;
  while (!stopping() && !(placement = agents_.Place(target_names, &why))) {
    if (why != last_why) spdlog::info("campaign {} waits for agents: {}", row.name, why);
    last_why = why;
    uint64_t seen = version();
    WaitForChange(seen, std::chrono::milliseconds(200));
  }
  if (stopping()) return;

  Status running = store_.SetCampaignState(row.id, "running");
  if (!running.ok()) return fail(running.message());
  Bump();
  agents_.SetBusy(placement->server_agent, true);
  agents_.SetBusy(placement->load_agent, true);
  spdlog::info("campaign {} runs on server agent {} and load agent {}", row.name,
               placement->server_agent, placement->load_agent);

  WindowFilter filter;
  filter.campaign = row.name;
  auto stored = store_.ListWindows(filter);
  std::set<std::tuple<std::string, std::string, int, int>> done;
  if (stored.ok()) {
    for (const auto& w : *stored) done.insert({w.target, w.scenario, w.connections, w.round});
  }
  Calibration calibration;
  for (const auto& planned : ExpandMatrix(*campaign)) {
    if (stopping()) break;
    if (done.count({planned.target, planned.scenario, planned.connections, planned.round})) {
      continue;
    }
    WindowOutcome outcome =
        RunWindow(agents_, *placement, *campaign, row.id, planned, 1, calibration);
    outcome.row.campaign_id = row.id;
    auto id = store_.InsertWindow(outcome.row, outcome.samples);
    if (!id.ok()) {
      agents_.SetBusy(placement->server_agent, false);
      agents_.SetBusy(placement->load_agent, false);
      return fail("storing window: " + id.status().message());
    }
    Acknowledge(outcome.spooled);
    spdlog::info("window {}/{} {} {} c={} round {}: {} {:.0f} req/s", planned.index + 1,
                 row.total_windows, planned.target, planned.scenario, planned.connections,
                 planned.round, outcome.row.verdict, outcome.row.rps);
    Bump();
  }
  agents_.SetBusy(placement->server_agent, false);
  agents_.SetBusy(placement->load_agent, false);
  if (stopping()) return;
  Status done_state = store_.SetCampaignState(row.id, "done");
  if (!done_state.ok()) spdlog::error("campaign {}: {}", row.name, done_state.message());
  Bump();
}

}  // namespace benchlab
