// Confirmation by re-measurement on a coordinator (docs/history.md, "On a coordinator"): the
// coordinator daemon re-measures a series' suspected changes itself, on the pair of agents each
// line ran on. A line's targets there are names in its server agent's catalogue, so the old build
// is the catalogue entry whose registered version is the one the old campaign's windows recorded
// (FindOldBuildEntry), and the newest build is the line's target, which must still run the
// newest campaign's version. The re-measurement is a campaign of its own, queued behind what is
// queued; its rows say "measuring" until it ends, when its windows are judged.
#pragma once

#include <cstdint>

#include "coordinator/server/confirmation.h"
#include "coordinator/store.h"

namespace benchlab {

class AgentRegistry;
class Scheduler;

class SeriesRemeasure {
 public:
  // Submits re-measurement campaigns to `scheduler`, finds catalogues in `agents`.
  SeriesRemeasure(Store& store, AgentRegistry& agents, Scheduler& scheduler,
                  RemeasureSettings settings);

  // After campaign `id` ended (Scheduler::OnCampaignEnded): judges the changes it re-measured,
  // if it is a re-measurement; then, if it is done and its series' newest campaign, queues the
  // re-measurement of each change that needs one, or records why it cannot be re-measured.
  // Errors are logged: a campaign's end is not the place to fail.
  void CampaignEnded(int64_t id);

 private:
  void Judge(const CampaignRow& remeasurement);
  void QueueRemeasurements(const CampaignRow& newest);

  Store& store_;
  AgentRegistry& agents_;
  Scheduler& scheduler_;
  const RemeasureSettings settings_;
};

}  // namespace benchlab
