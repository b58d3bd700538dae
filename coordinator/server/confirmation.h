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
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/changepoint.h"
#include "analysis/regressions.h"
#include "analysis/stats.h"
#include "coordinator/server/remeasure_settings.h"
#include "coordinator/store.h"

namespace benchlab {

// The re-measurement campaign of one change (one line: target, cell, and pair).
struct ConfirmationPlan {
  std::string name;        // the campaign's name
  std::string text;        // its campaign file (TOML)
  std::string new_target;  // the newest build's target in it: the line's target
  std::string old_target;  // the old build's target in it: "<target>-old", the baseline
  double margin = 0.02;    // the newest campaign's [stats] margin, which judges the change
};

// Where a line's builds live when its targets are names in an agent's catalogue (a coordinator's
// campaigns, fleets among them): the pair the line ran on, and the catalogue entry of its server
// agent that runs the old build (FindOldBuildEntry). The re-measurement runs there, on that pair.
struct CatalogueBuilds {
  std::string server_agent;
  std::string load_agent;
  std::string old_entry;
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
// With `catalogue`, the line's target is a catalogue name: the old build is the entry
// catalogue->old_entry, the baseline, and the campaign is placed on the catalogue's pair.
Result<ConfirmationPlan> PlanConfirmation(const SeriesChange& change, const CampaignRow& old_build,
                                          const CampaignRow& newest,
                                          const std::vector<Metric>& figures,
                                          const std::string& name, const std::string& campaign_dir,
                                          const RemeasureSettings& settings,
                                          const CatalogueBuilds* catalogue = nullptr);

// Whether `newest`'s file names `target` from an agent's catalogue (no command of its own).
bool TargetFromCatalogue(const CampaignRow& newest, const std::string& target);

// The version `windows` recorded for `target` on `pair` (the agent's `version` command, as each
// window's StartTarget reported it). FailedPrecondition when none did, or they disagree.
Result<std::string> RecordedVersion(const std::vector<WindowRow>& windows,
                                    const std::string& target, const std::string& pair,
                                    const std::string& campaign);

// The entry of a server agent's catalogue (`versions`: entry -> the version it registered) that
// runs the build `old_version`, for a re-measurement of `target`, whose entry must still run
// `new_version` (the newest campaign's build). An entry other than `target` is taken first; the
// first by name when several match. FailedPrecondition, with the sentence a person acts on, when
// the agent no longer runs the newest build as `target` or keeps no entry of the old one.
Result<std::string> FindOldBuildEntry(const std::map<std::string, std::string>& versions,
                                      const std::string& agent, const std::string& target,
                                      const std::string& old_version,
                                      const std::string& new_version);

// The server and load agent of the pair whose server agent is `pair` ("" outside fleets: the
// campaign's one pair) in a campaign's placement JSON (CampaignRow::placement: {"server", "load":
// [...]} or {"pairs": [[server, load], ...]}). nullopt when the placement does not name it.
std::optional<std::pair<std::string, std::string>> PairAgents(const std::string& placement_json,
                                                              const std::string& pair);

// The plan a stored re-measurement campaign was made from (its name, the two targets, and the
// margin), read back from its file: the baseline is the old build, the other target the new one.
Result<ConfirmationPlan> PlanOfCampaign(const CampaignRow& row);

// What the re-measurement campaign's windows say about `change` on its figure: the ratios new /
// old of the cell's rounds (valid newest attempts, both targets present), their interval at the
// adaptive plan's level for that many rounds, and the decision of DecideConfirmation. The row's
// line, figure and campaigns are filled from `change`; its campaign is plan.name.
ConfirmationRow JudgeConfirmation(const std::string& series, const SeriesChange& change,
                                  const ConfirmationPlan& plan,
                                  const std::vector<Measurement>& windows,
                                  const RemeasureSettings& settings);

// One line on a recorded re-measurement: "re-measured json c64 hello cpu_us_per_request
// (regression, from nightly-6): confirmed: new/old +6.1% [+2.3%, +10.0%] over 11 round(s) (...)".
std::string DescribeConfirmation(const SeriesChange& change, const ConfirmationRow& row);

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
