// RunWindow: runs docs/architecture.md's window protocol for one window on a placed server
// agent and its load agents: start the target on the server agent, check conformance from the
// (first) load agent, run the load while the server agent samples exactly the measured interval,
// stop the target, apply the gates. Every step has a deadline; a step that fails or times out
// fails the window with the step and the agent named. Nothing here writes to the store. Called
// from the scheduler thread; with several load agents it starts one thread per extra agent for
// the length of the load and joins them before it returns.
//
// Several load agents (Placement::load_agents, docs/fleet.md): the level is their total, split
// as evenly as possible (SplitLoadLevel); their loads start together, the server's interval runs
// from the first agent's MEASURE_START to the last one's MEASURE_END, and their results merge
// into one window (counts and rates summed, histograms merged, percentiles recomputed).
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/campaign.h"
#include "coordinator/outcome.h"
#include "coordinator/plan.h"
#include "coordinator/server/placement.h"
#include "coordinator/store.h"

namespace benchlab {

class AgentRegistry;

// A result an agent spooled during a window: acknowledged with the token it was spooled under
// (the window's own, or for the server's figures of a kept process the token that started it)
// once the window is stored.
struct SpoolEntry {
  std::string agent;
  std::string key;     // "<spool key>.server", "<spool key>.load" or "<spool key>.<agent>.load"
  std::string window;  // the window token
  auto operator<=>(const SpoolEntry&) const = default;
};

struct WindowOutcome {
  WindowRow row;  // row.reasons and row.outcome are `reasons` rendered for the store
  std::vector<WindowReason> reasons;
  std::vector<SampleRow> samples;
  std::vector<ServiceRow> services;  // the target's side services over the interval
  std::vector<ProbeRow> probes;
  // With [profile] (or --profile): the measured interval's CPU profile, or why there is none.
  std::optional<ProfileRow> profile;
  std::vector<SpoolEntry> spooled;
  // The agents calibrated during this window (their first in the campaign), for the store.
  std::vector<SelftestCalibrationRow> calibrations;
};

// Self-tests an agent runs at the start of a campaign, before its first window's, to calibrate.
// Seven: the spread (below) is then the median of seven deviations, which up to three disturbed
// runs cannot inflate (of three runs' deviations, only one), and a less rough estimate; seven
// pinned self-tests of a few tens of ms, each after an untimed pass, take about a second.
inline constexpr int kCalibrationRuns = 7;
// Fewer successful calibration runs than this give no spread: the configured threshold alone.
inline constexpr int kMinSpreadRuns = 5;

// What an agent's self-tests at the campaign's start say about its host (docs/gates.md,
// "selftest_drift").
struct SelftestCalibration {
  int runs = 0;          // self-tests that ran (a time above 0)
  double median_ms = 0;  // their median; 0 when none ran
  // Fraction: 1.4826 x the median of |t / median_ms - 1| over the runs, the median absolute
  // deviation scaled to a standard deviation of normal noise, so robust to a few disturbed
  // runs. nullopt with fewer than kMinSpreadRuns runs.
  std::optional<double> spread;
};

// The calibration of `selftest_ms` (times that are not above 0 did not run and are left out).
SelftestCalibration CalibrateSelftest(const std::vector<double>& selftest_ms);

// One agent's self-test calibration in a campaign: `start` from its kCalibrationRuns self-tests
// at the campaign's start, whose spread sets the agent's selftest_drift threshold with the
// spread of its accepted self-tests (HostSpread; SelftestDriftThreshold, coordinator/gates.h);
// and its accepted self-tests (the start runs, then each window's that the gate did not
// refuse), the newest kRecentSelftests, whose median is the norm a window's self-test is judged
// against (docs/gates.md, "selftest_drift"). A median of recent runs, so a start disturbed by
// processes starting on the same CPU is forgotten after a few windows and one lucky fast run
// moves nothing.
struct AgentCalibration {
  SelftestCalibration start;
  std::deque<double> accepted;
};
// The self-tests the norm and the host's spread over the campaign are taken from: about the
// last quarter of an hour of a campaign of short windows. Fifteen, not fewer: a virtual
// machine's self-test may take one of two speeds for minutes at a time (7.7 ms or 11-12 ms on
// the 2-core development VM, neither changing the windows' req/s or CPU per request), and a
// norm of the last five followed the faster speed down, so that the slower one read +60% and
// was refused (7 and 2 of 30 windows of an A/A campaign, none of them earned by the gate audit).
inline constexpr size_t kRecentSelftests = 15;

// The spread a host's selftest_drift threshold is set from (docs/gates.md, "selftest_drift"): the
// larger of its start runs' spread and the spread of its accepted self-tests over the campaign.
// Seven back-to-back runs at the start share the host's state of that second; a virtual
// machine's speed wanders over minutes with its neighbours, which only self-tests minutes apart
// can show. A self-test the gate refused never joins, so a lasting slowdown cannot widen the
// threshold that refuses it. nullopt when the start gave no spread.
std::optional<double> HostSpread(const AgentCalibration& calibration);
// Per agent name. Owned by the scheduler, one per campaign and pair.
using Calibration = std::map<std::string, AgentCalibration>;

// An agent's calibration from the self-tests it ran at the campaign's start.
AgentCalibration Calibrate(const std::vector<double>& selftest_ms);

// A self-test's drift from the median of the agent's recent self-tests (0.12: 12% slower,
// -0.12: faster), then the self-test joins them (the oldest beyond kRecentSelftests leave),
// unless it is slower than the median by more than `refuse_above` (a fraction: the gate's
// threshold). A slowdown that lasts (a competing process on the pinned CPU) is then refused
// window after window instead of becoming the norm after a few; a faster run always joins, so a
// start disturbed by a slow calibration is still forgotten. nullopt when the agent has no
// calibration.
std::optional<double> SelfTestDrift(Calibration& calibration, const std::string& agent,
                                    double selftest_ms,
                                    std::optional<double> refuse_above = std::nullopt);

// A target process kept from one window to the next (fresh_process = "cell" | "round"). Empty
// handle: none is running. The scheduler owns one per pair and calls EndSession when a campaign
// stops, so no process outlives it.
struct TargetSession {
  std::string target;
  std::string handle;
  int port = 0;
  std::string window;  // the token of the window that started it: its StopTarget and Mark send it
  std::string tls_ca_pem;  // a target that serves HTTPS: its run directory's CA
};

// Runs one window. The target process is started unless `session` holds one of the same target
// and the plan does not ask for a fresh one; it is stopped afterwards when the plan says so or
// the window did not end valid/invalid, else left in `session`. The conformance gate runs once
// per fresh process. `window_token` is WindowToken(lab secret, SpoolKey(campaign_id, planned,
// attempt)) (coordinator/window_token.h): every call of the window to an agent carries it.
// "hello-r2-nginx-json-c32" ("-n3" after a noise window's name, 3 its position): the name a
// window's logs carry, at the agent (StartTargetRequest.window_label) and in JSON log lines.
std::string WindowLabel(const Campaign& campaign, const PlannedWindow& planned);

WindowOutcome RunWindow(AgentRegistry& agents, const Placement& placement, const Campaign& campaign,
                        int64_t campaign_id, const PlannedWindow& planned, int attempt,
                        const std::string& window_token, Calibration& calibration,
                        TargetSession& session);

// Stops the process a session holds, if any (best effort, with a deadline), with the token that
// started it.
void EndSession(AgentRegistry& agents, const Placement& placement, TargetSession& session);

// A load level's total (connections, or max_conns) split over `parts` load agents as evenly as
// possible: every part gets total / parts and the first total % parts get one more. With one
// part, the total itself.
std::vector<int> SplitLoadLevel(int total, size_t parts);

// The name of a window's attempt in the agents' spools:
// "<campaign id>-<target>-<scenario>-<load level>-r<round>[-n<noise position>]-a<attempt>".
// The server agent spools its figures as "<key>.server"; one load agent spools its result as
// "<key>.load", each of several as "<key>.<agent>.load".
std::string SpoolKey(int64_t campaign_id, const PlannedWindow& planned, int attempt);

// A campaign's key at the agents (StartTargetRequest.campaign, EndCampaignRequest.campaign):
// "<name>#<id>", so two runs of one campaign name (a series) never share a side service.
std::string AgentCampaignKey(const std::string& campaign_name, int64_t campaign_id);

// The store's name for a planned window.
WindowKey KeyOf(const PlannedWindow& planned);

}  // namespace benchlab
