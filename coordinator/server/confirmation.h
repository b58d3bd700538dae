// Confirmation by re-measurement (docs/history.md, "Confirmation by re-measurement"): a suspected
// change of a series is measured again as a campaign of its own, in which the build before the
// change (the old campaign's target) and the newest build (the newest campaign's target) run in
// alternate windows of one cell on the same machines, round after round, until the confirmation
// rule of analysis/changepoint.h decides or the round limit is reached. This file plans that
// campaign from the two campaigns' stored files, judges what it measured, and lays the recorded
// outcomes over the changes a series search finds. Pure functions; the store and the lab are the
// caller's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/changepoint.h"
#include "analysis/regressions.h"
#include "analysis/stats.h"
#include "coordinator/store.h"

namespace benchlab {

// How a re-measurement is run and judged. The defaults are docs/history.md's: at least 5 rounds,
// at most 30, every look of the adaptive plan together at confidence 0.90 (one-sided 0.95).
struct RemeasureSettings {
  int min_rounds = 5;
  int max_rounds = 30;
  double confidence = 0.90;
};

// The re-measurement campaign of one change (one line: target, cell, and pair).
struct ConfirmationPlan {
  std::string name;        // the campaign's name
  std::string text;        // its campaign file (TOML)
  std::string new_target;  // the newest build's target in it: the line's target
  std::string old_target;  // the old build's target in it: "<target>-old", the baseline
  double margin = 0.02;    // the newest campaign's [stats] margin, which judges the change
};

// Plans the re-measurement of `change` (a change on one line, found in the series whose newest
// campaign is `newest`) from the files stored with `old_build` and `newest`: the newest file's
// settings, gates, services and scenario, restricted to the change's cell; its target and the old
// file's target of the same name, renamed "<target>-old" and made the baseline; an adaptive plan
// of settings.min_rounds to max_rounds rounds deciding on `figures`; and a series of its own
// (`name`), so that it never joins the history it checks. `campaign_dir` fills {campaign_dir}.
// FailedPrecondition, with a sentence a person can act on, when the builds cannot be run from the
// stored files: a fleet line (its builds live in agents' catalogues), a target whose env was
// stored redacted, or a file that does not parse.
Result<ConfirmationPlan> PlanConfirmation(const SeriesChange& change, const CampaignRow& old_build,
                                          const CampaignRow& newest,
                                          const std::vector<Metric>& figures,
                                          const std::string& name, const std::string& campaign_dir,
                                          const RemeasureSettings& settings);

// What the re-measurement campaign's windows say about `change` on its figure: the ratios new /
// old of the cell's rounds (valid newest attempts, both targets present), their interval at the
// adaptive plan's level for that many rounds, and the decision of DecideConfirmation. The row's
// line, figure and campaigns are filled from `change`; its campaign is plan.name.
ConfirmationRow JudgeConfirmation(const std::string& series, const SeriesChange& change,
                                  const ConfirmationPlan& plan,
                                  const std::vector<Measurement>& windows,
                                  const RemeasureSettings& settings);

// The row saying that `change` could not be re-measured, and why.
ConfirmationRow NotMeasured(const SeriesChange& change, const std::string& series,
                            const std::string& why);

// The margin a series' changes are searched and judged with: its newest campaign's [stats]
// margin (the default 0.02 when that file cannot be read), so that `benchlab regressions` finds
// the changes the re-measurement judged.
double SeriesMargin(const CampaignRow& newest);

// Sets each change's status and re-measurement from the row recorded for it (same line, figure
// and first campaign after the change); a change without one stays "suspected".
void ApplyConfirmations(std::vector<SeriesChange>& changes,
                        const std::vector<ConfirmationRow>& rows);

}  // namespace benchlab
