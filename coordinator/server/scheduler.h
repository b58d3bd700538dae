// Scheduler: turns submitted campaigns into windows. Campaigns queue in the store; one scheduler
// thread takes them in order, places them on a server/load agent pair, runs their windows in
// plan order and writes each window (with its samples) in one transaction. The state lives in the
// store: before a window starts it is claimed, and a claim found at start-up (the coordinator
// stopped mid-window) becomes a failed attempt (coordinator_restart) that is measured again. A
// campaign found "running" resumes with the windows still pending; windows already stored are
// never measured twice. Re-runs asked for (Store::RequestReruns) are pending windows too, and a
// cancelled campaign stops before its next window. Submit and the watchers' calls are
// thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/status.h"
#include "coordinator/campaign.h"
#include "coordinator/plan.h"
#include "coordinator/server/placement.h"
#include "coordinator/server/window_runner.h"
#include "coordinator/store.h"

namespace benchlab {

class AgentRegistry;
class CoordinatorMetrics;

// A window of the plan that must be measured, and the attempt it will be.
struct PendingWindow {
  PlannedWindow planned;
  int attempt = 1;
};

struct Submission {
  int64_t campaign_id = 0;
  std::string name;
  int total_windows = 0;
};

// What Scheduler::Check found (docs/cli.md, "benchlab check").
struct CampaignCheck {
  std::vector<std::string> problems;  // "<source>: placement: no registered server agent ..."
  int total_windows = 0;
  // Every problem is one an agent's registration may fix (AgentRegistry::PlacementProblems).
  bool awaits_registration = false;
};

class Scheduler {
 public:
  // Campaigns whose plan holds more than `max_windows` windows are refused by Submit. Each
  // stored window is counted in `metrics` when given (docs/metrics.md).
  Scheduler(Store& store, AgentRegistry& agents, uint64_t max_windows = kDefaultMaxWindows,
            CoordinatorMetrics* metrics = nullptr);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void Start();
  // Finishes the window in progress, then returns; the campaign stays "running" and resumes on
  // the next start.
  void Stop();

  // Validates the whole campaign before anything is stored. InvalidArgument (file:line errors,
  // a plan over max_windows, counted before it is built) or AlreadyExists (name taken). The
  // stored text has its targets' env values redacted (RedactCampaignText).
  // gates_mode "warn" or "enforce" overrides the file's [gates] mode (`--gates`); "" keeps it.
  // profile (`--profile`) profiles every window whatever the file's [profile] enabled says.
  // A campaign that the registered agents can never run (no server agent can start a target,
  // unmet host requirements: Check) is refused with FailedPrecondition listing why; one that
  // waits for an agent not registered yet is queued.
  Result<Submission> Submit(const std::string& spec_toml, const std::string& source,
                            const std::string& campaign_dir, const std::string& gates_mode = "",
                            bool profile = false);
  // What would keep the campaign from running here, without storing anything: the file's
  // errors as Submit returns them, then where it would be placed among the agents registered
  // now, whatever their state (AgentRegistry::PlacementProblems), one problem per pair.
  Result<CampaignCheck> Check(const std::string& spec_toml, const std::string& source,
                              const std::string& campaign_dir);
  // Why the campaign waits for agents before it can run ("no ready server agent has targets
  // nginx: srv1 is busy"); "" when it does not wait.
  std::string WaitingFor(int64_t campaign_id);

  // A counter that grows whenever a window is stored or a campaign changes state; watchers wait
  // for it to move past what they have seen.
  uint64_t version();
  // Wakes the scheduler and watchers (e.g. an agent registered).
  void Notify() { Bump(); }
  void WaitForChange(uint64_t seen, std::chrono::milliseconds timeout);

  // Called on the scheduler's thread, between campaigns, with the id of each campaign that has
  // just ended (done, failed or cancelled; not one a stop interrupts). What runs after a campaign
  // (the series' re-measurement, coordinator/server/series_remeasure.h) hangs here. Before Start.
  void OnCampaignEnded(std::function<void(int64_t campaign_id)> hook) {
    on_ended_ = std::move(hook);
  }

 private:
  void Loop();
  // Runs a campaign taken from the queue (or resumed) to its end: places it, runs its plan on
  // each pair, records how it ended.
  void RunCampaign(const CampaignRow& row);
  // Records that the campaign failed, with `error` as why.
  void FailCampaign(const CampaignRow& row, const std::string& error);
  // Waits until each spec's agents are ready; none when stopping or the campaign was cancelled.
  std::vector<Placement> WaitForPlacements(const CampaignRow& row,
                                           const std::vector<PlacementSpec>& specs,
                                           const std::vector<std::string>& targets);
  // pairs = "all": waits until a pair can be formed, then takes as many as the ready agents
  // allow (AgentRegistry::PlacePairs); none when stopping or the campaign was cancelled.
  std::vector<Placement> WaitForAllPairs(const CampaignRow& row, const Campaign& campaign,
                                         const std::vector<std::string>& targets);
  // Records the campaign running on `placements` (the host facts refreshed first) and its
  // number of windows; returns an error that fails the campaign, or "".
  std::string MarkRunning(const CampaignRow& row, const std::vector<Placement>& placements,
                          bool fleet, size_t plan_size);
  // Runs the plan on every pair at once (RunOnPair); each pair's error, or "".
  std::vector<std::string> RunOnPairs(const CampaignRow& row, const Campaign& campaign,
                                      const std::vector<PlannedWindow>& plan,
                                      const std::vector<Placement>& placements, bool fleet,
                                      const std::vector<std::string>& target_names);
  // Records the campaign done, and queued again when re-runs were asked for meanwhile.
  void MarkDone(const CampaignRow& row);
  // The plan's windows to measure in the next pass, in plan order: never measured, asked to be
  // re-run, or cut off by a coordinator restart or a lost agent (a new attempt each). For an
  // adaptive plan, only the next round of the cells still undecided (SelectAdaptive).
  Result<std::vector<PendingWindow>> Pending(int64_t campaign_id, const Campaign& campaign,
                                             const std::string& name,
                                             const std::vector<PlannedWindow>& plan,
                                             const std::string& pair);
  // Runs what is pending of the plan on one pair until nothing is; returns an error that fails
  // the campaign, or "" (also when stopping or cancelled, which `cancelled` tells).
  std::string RunOnPair(const CampaignRow& row, const Campaign& campaign,
                        const std::vector<PlannedWindow>& plan, Placement placement,
                        const std::string& pair, const std::vector<std::string>& target_names,
                        bool& cancelled);
  bool Cancelled(int64_t campaign_id);
  // Calls `place` until it succeeds, stopping or the campaign's cancellation; while it fails,
  // says why (a log line and CampaignEvent.waiting) each time the reason changes.
  void WaitForAgents(const CampaignRow& row, const std::function<bool(std::string* why)>& place);
  // Waits until the agents are ready; nullopt when stopping or the campaign was cancelled.
  std::optional<Placement> WaitForPlacement(const CampaignRow& row, const PlacementSpec& spec,
                                            const std::vector<std::string>& targets);
  // Tells the agents their spooled results for a stored window may go, each with the window token
  // it was spooled under.
  void Acknowledge(const std::vector<SpoolEntry>& spooled);
  // The campaign ended on every pair (done, cancelled or failed): each server agent it ran on
  // stops the side services it started for it (EndCampaign), at once rather than after its idle
  // timeout. Best effort, each call with a deadline; not called when the coordinator is stopping,
  // since the campaign resumes then.
  void EndCampaignOnAgents(const CampaignRow& row, const std::vector<Placement>& placements);
  // At a campaign's start, each agent it was placed on describes its host again (DescribeHost):
  // the host check's findings of that moment (docs/host.md) are what the registry, `benchlab
  // agents` and the campaign's windows then carry. Best effort, side by side, each call with a
  // deadline; an agent that does not answer keeps what it registered with.
  void RefreshHostFacts(const CampaignRow& row, const std::vector<Placement>& placements);
  void Bump();
  // Check of a campaign already parsed (Submit's and Check's one parse).
  Result<CampaignCheck> CheckParsed(const Campaign& campaign);
  // Records why the campaign waits ("" once it does not) and wakes the watchers.
  void SetWaiting(int64_t campaign_id, const std::string& why);
  bool stopping() const { return stopping_.load(); }

  Store& store_;
  AgentRegistry& agents_;
  const uint64_t max_windows_;
  CoordinatorMetrics* const metrics_;  // may be null
  std::function<void(int64_t)> on_ended_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t version_ = 0;
  std::map<int64_t, std::string> waiting_;  // under mu_: campaign id -> why it waits
};

}  // namespace benchlab
