// Bisection of a regression to its commit on the embedded lab (docs/methodology.md,
// "Bisection"; docs/cli.md, `benchlab bisect`): the commits from a good to a bad build of one
// target, each candidate measured against both ends by campaigns of its own (the server agent
// builds each commit, docs/agent.md "Builds") until Decide (analysis/bisect.h) calls it like
// good, like bad or undecided, the search and every step stored in the bisections and
// bisect_steps tables (docs/store.md).
#pragma once

#include <cstdint>
#include <string>

#include "cli/progress_mode.h"
#include "common/git_rev.h"

namespace benchlab {

struct BisectJob {
  std::string campaign_path;  // the campaign file whose target and cell are bisected
  // Or a confirmed change (a confirmations row of `db`): its line, figure and the versions its
  // two builds recorded, which must be revisions of the target's source, and the newest
  // campaign's stored file; {campaign_dir} in it is `campaign_dir`.
  int64_t change = 0;
  // Or a stored search of `db` that stopped (interrupted, or its process killed): it goes on
  // from its last decided step, by the rule and campaign file it began with.
  int64_t resume = 0;
  std::string campaign_dir = ".";
  std::string target;
  std::string good;  // revisions of the target's `source`
  std::string bad;
  std::string cell;    // "SCENARIO/LEVEL"; empty: the campaign's only cell
  std::string figure;  // --figure text (analysis/figure.h ParseFigure)
  std::string db;
  int max_rounds = 30;  // of one candidate
  size_t max_commits = kMaxRangeCommits;
  bool json = false;  // the outcome as one JSON object on stdout (progress on stderr)
  bool keep_work_dir = false;
  ProgressMode progress = ProgressMode::kAuto;
};

// Runs the search and prints its steps and outcome. Returns kExitOk when it ended (found,
// unsplittable, the ends did not differ or an end did not build: the outcome says which),
// kExitUsage for bad input (a revision that names no commit, a target without a build recipe, a
// cell the campaign lacks), kExitInterrupted when interrupted (the search is then stored as
// cancelled), kExitFailure when a lab or the store failed.
int RunBisection(const BisectJob& job);

// Prints a stored bisection (text, or JSON with `json`). kExitUsage when the database has none
// of that id.
int ShowBisection(const std::string& db, int64_t id, bool json);

}  // namespace benchlab
