// The campaigns of a bisection (docs/methodology.md, "Bisection"): each look at a candidate is
// a campaign of its own in which three builds of one target, the good end, the candidate and
// the bad end, run interleaved on one cell, round after round; and the rounds read back from
// its windows for Decide (analysis/bisect.h). Pure functions; the store and the lab are the
// caller's (cli/bisect_run.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/bisect.h"
#include "analysis/figure.h"
#include "analysis/profile_report.h"
#include "analysis/stats.h"
#include "common/status.h"
#include "coordinator/campaign.h"
#include "coordinator/store.h"

namespace benchlab {

// The cell a bisection measures: one scenario at one load level ("c64", "r5000").
struct BisectCell {
  std::string scenario;
  std::string load_level;
  std::string Label() const { return scenario + "/" + load_level; }
};

// The cell `text` names ("SCENARIO/LEVEL") in `campaign`; with `text` empty, its only cell.
// InvalidArgument naming --cell and what the campaign has when it names none of them, or when
// `text` is empty and the campaign has more than one cell.
Result<BisectCell> ChooseBisectCell(const Campaign& campaign, const std::string& text);

// The names of the three builds of `target` in a look's campaign.
struct BisectTargetNames {
  std::string good, candidate, bad;
};
BisectTargetNames BisectTargetsOf(const std::string& target);

// The agents a look runs on, on a coordinator ([placement] server and load); both empty: the
// embedded lab's one pair.
struct BisectPair {
  std::string server, load;
  bool empty() const { return server.empty(); }
  std::string Label() const { return server + "/" + load; }
};

// One look's campaign: the campaign file `campaign_text` (read from `source_name`, its
// {campaign_dir} `campaign_dir`) cut down to `cell`, with `target` three times, each a build of
// one commit (`of` the catalogue target, `commit` its oid), the good end as the baseline, the
// three in rotating order for `rounds` rounds, and a series of its own (`name`), so that it
// never joins the history it bisects. The file's [profile] holds for the three builds when it
// profiles `target` and is dropped otherwise; with `profile` the good end and the candidate are
// profiled whatever the file says (the culprit against its parent, whose profile diff the
// reports show). A target that runs a catalogue entry of another name (`of`) keeps it; with
// `pair`, the look is placed on that pair of agents, else the file's [placement] goes.
// FailedPrecondition, with a sentence a person can act on, when the file does not have the target
// or the cell, or the result does not parse.
Result<std::string> PlanBisectCampaign(const std::string& campaign_text,
                                       const std::string& source_name,
                                       const std::string& campaign_dir, const std::string& target,
                                       const BisectCell& cell, const std::string& good_oid,
                                       const std::string& candidate_oid, const std::string& bad_oid,
                                       int rounds, const std::string& name, bool profile = false,
                                       const BisectPair& pair = {});

// Where the CPU of a found culprit went: the profile diff of its parent (the good end of the
// search's culprit campaign) against it, in the search's cell (analysis/profile_report.h,
// DiffTargets). NotFound when the search has no culprit campaign or the campaign is gone;
// InvalidArgument when its windows were not profiled in pairs (DiffTargets').
Result<std::vector<CellProfileDiff>> CulpritProfileDiff(Store& store,
                                                        const BisectionRecord& record);

// The rounds of a look's windows on `figure`: for each round of the cell with a valid newest
// attempt of all three builds, their three figures (BisectRound), by round.
std::vector<BisectRound> BisectRoundsOf(const std::vector<Measurement>& windows,
                                        const std::string& target, const BisectCell& cell,
                                        Metric figure);

// Where a found culprit's CPU went, parent against culprit: after a search's result (`benchlab
// bisect`, its --status), the line naming the look's campaign and the diff, or why there is
// none; `in_report`, under a change of `benchlab regressions` (Markdown with `markdown`), the
// diff alone, nothing without one. "" when the search measured no culprit against its parent.
std::string CulpritProfileText(Store& store, const BisectionRecord& record, bool in_report = false,
                               bool markdown = false);

// A found culprit's profile diff against its parent in a search's JSON: "culprit_profile"
// ({"campaign", "headline", "cells"}, or {"campaign", "error"} when its windows have no paired
// profile); nothing when the search measured no culprit against its parent.
void AddCulpritProfileJson(Store& store, const BisectionRecord& record, nlohmann::json& out);

}  // namespace benchlab
