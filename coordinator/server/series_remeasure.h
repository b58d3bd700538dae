// Confirmation by re-measurement on a coordinator (docs/history.md, "On a coordinator"): the
// coordinator daemon re-measures a series' suspected changes itself, on the pair of agents each
// line ran on. A line's targets there are names in its server agent's catalogue, so the old build
// is the catalogue entry whose registered version is the one the old campaign's windows recorded
// (FindOldBuildEntry), and the newest build is the line's target, which must still run the
// newest campaign's version. The re-measurement is a campaign of its own, queued behind what is
// queued; its rows say "measuring" until it ends, when its windows are judged.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "coordinator/server/confirmation.h"
#include "coordinator/store.h"

namespace benchlab {

class AgentRegistry;
class Scheduler;
struct ChangesToRemeasure;
struct RemeasureGroup;

// What a look at a series did for one line: queued its re-measurement ("measuring", `campaign`
// named), found it cannot be re-measured ("not measured", `detail` says why), left it for the
// series' next campaign ("waiting": its server agent is not registered), or for the embedded lab
// ("elsewhere": its target is a command). Only the first two are recorded in the store.
struct RemeasureNote {
  std::string line;  // SeriesKeyLabel (scenario, load level, target, pair), then the figures
  std::string status;
  std::string campaign;
  std::string detail;
};

class SeriesRemeasure {
 public:
  // Submits re-measurement campaigns to `scheduler`, finds catalogues in `agents`. `automatic`:
  // every campaign's end looks at its series (`benchlab coordinator` without --no-remeasure);
  // otherwise series are looked at only when asked (Look).
  SeriesRemeasure(Store& store, AgentRegistry& agents, Scheduler& scheduler,
                  RemeasureSettings settings, bool automatic = true);

  // After campaign `id` ended (Scheduler::OnCampaignEnded): judges the changes it re-measured,
  // if it is a re-measurement; then, if looks are automatic and it is done and its series'
  // newest, queues the re-measurement of each change that needs one, or records why it cannot be
  // re-measured. Errors are logged: a campaign's end is not the place to fail.
  void CampaignEnded(int64_t id);

  // Looks at `series` now, as the end of its newest campaign does (RemeasureSeries, `benchlab
  // remeasure --coordinator`), with at most `max_rounds` rounds per re-measurement (0: the
  // settings'). NotFound for no such series; FailedPrecondition while its newest campaign has not
  // ended done. One note per line looked at; none when no change awaits re-measurement.
  Result<std::vector<RemeasureNote>> Look(const std::string& series, int max_rounds = 0);

 private:
  // Agent name -> its catalogue: entry -> registered version.
  using CatalogueVersions = std::map<std::string, std::map<std::string, std::string>>;

  // All of these run under mu_.
  void Judge(const CampaignRow& remeasurement);
  // Queues the re-measurement of each line of `newest`'s series that needs one, or records why
  // it cannot be re-measured: one note per line, none unless `newest` is its series' newest.
  Result<std::vector<RemeasureNote>> QueueRemeasurements(const CampaignRow& newest,
                                                         const RemeasureSettings& settings);
  // A re-measurement cancelled (or failed) while it was queued never ran, so nothing judged it:
  // it is judged now (its rows then say why nothing was measured), before the series is
  // searched again.
  void JudgeUnjudgedRemeasurements(const std::string& series);
  // The changes of `newest`'s series that await a re-measurement (an error is logged).
  Result<std::unique_ptr<ChangesToRemeasure>> FindChangesToQueue(const CampaignRow& newest,
                                                                 const RemeasureSettings& settings);
  // One line: queues its re-measurement, or finds why it cannot be now; returns its note.
  RemeasureNote QueueLine(const CampaignRow& newest, const ChangesToRemeasure& work,
                          const RemeasureGroup& group, const CatalogueVersions& versions_of,
                          const RemeasureSettings& settings);
  // Records the line's rows "measuring", submits the planned campaign to the scheduler and
  // audits that; the rows say "not measured" when the submission fails.
  RemeasureNote SubmitRemeasurement(const CampaignRow& newest, const RemeasureGroup& group,
                                    const std::string& line, const ConfirmationPlan& plan,
                                    const CatalogueBuilds& builds);
  void AuditRemeasureSubmission(const CampaignRow& newest, const std::string& campaign,
                                const Status& submitted);
  // Records a row for each change of the line (`status`, `campaign`, `why`), except a change
  // already recorded not measured for the same reason; returns the line's note.
  RemeasureNote RecordLine(const CampaignRow& newest, const RemeasureGroup& group,
                           const std::string& line, const std::string& campaign,
                           const std::string& status, const std::string& why);

  Store& store_;
  AgentRegistry& agents_;
  Scheduler& scheduler_;
  const RemeasureSettings settings_;
  const bool automatic_;
  // One look at a time: the scheduler's thread (a campaign's end) and a caller's (Look) must not
  // queue the same change twice.
  std::mutex mu_;
};

}  // namespace benchlab
