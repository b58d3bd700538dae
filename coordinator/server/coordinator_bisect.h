// Bisections on a coordinator (docs/methodology.md, "On a coordinator"): the coordinator daemon
// runs the search itself, on one pair of agents. The server agent lists the range from its own
// source (ListCommits) and builds each commit by its catalogue's recipe; each look at a
// candidate is a campaign queued behind what is queued. The search's state is the store's
// alone: the bisection row (with the listed range), its decided steps and its looks' campaigns,
// named bisect-<id>-<commit>-<look>. Advance reads them and does the one thing that is due
// (wait for a look, judge the candidate, queue the next look, finish), so a coordinator killed
// at any point goes on from there when it starts again (ResumeAll).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "common/status.h"
#include "coordinator/server/bisect_plan.h"
#include "coordinator/store.h"

namespace benchlab {

class AgentRegistry;
class Scheduler;

struct BisectionRequest {
  int64_t change = 0;         // a confirmed change: its line, figure, builds and pair; or by hand:
  std::string campaign_toml;  // the campaign file whose [placement] names one pair
  std::string campaign_source;  // its name, for messages
  std::string target, good, bad, cell, figure;
  int max_rounds = 30;
};

struct StartedBisection {
  int64_t id = 0;
  int commits = 0;
  std::string summary;
};

class CoordinatorBisections {
 public:
  CoordinatorBisections(Store& store, AgentRegistry& agents, Scheduler& scheduler);

  // Checks the request, has the pair's server agent list the range, stores the search and
  // queues its first look. InvalidArgument for a field not of its form, NotFound for a change
  // that is not stored, FailedPrecondition when it cannot be bisected here (not confirmed, a
  // line of the embedded lab, a pair not registered, a target without a recipe), the agent's
  // error for a revision it cannot resolve.
  Result<StartedBisection> Start(const BisectionRequest& request);

  // After campaign `id` ended (Scheduler::OnCampaignEnded): advances the search it is a look of.
  void CampaignEnded(int64_t id);

  // Advances every search still running (at start-up, after a restart).
  void ResumeAll();

 private:
  // The one thing due for search `id`; errors are logged and, when the search cannot go on,
  // stored as its result.
  void Advance(int64_t id);
  Status AdvanceLocked(int64_t id);
  Status Submit(const BisectionRow& search, const std::string& text, const std::string& name);
  Status Finish(BisectionRow& search, const std::string& state, const std::string& result);

  Store& store_;
  AgentRegistry& agents_;
  Scheduler& scheduler_;
  // One step at a time: the scheduler's thread (a look's end) and a caller's (Start) must not
  // queue the same look twice.
  std::mutex mu_;
};

}  // namespace benchlab
