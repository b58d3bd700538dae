// One step of a bisection, wherever its looks run (docs/methodology.md, "Bisection"): what the
// looks at a candidate say so far, and the step recorded once they decide it. The embedded lab
// (cli/bisect_run.cc) runs each look itself and the coordinator (coordinator_bisect.h) queues
// it; both judge and record a candidate here, so that a search decides alike in both.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/bisect.h"
#include "analysis/figure.h"
#include "analysis/report_format.h"
#include "common/status.h"
#include "coordinator/server/bisect_plan.h"
#include "coordinator/store.h"

namespace benchlab {

// The rule a search decides by, stored with it (bisections.rule) so that a search that goes on
// after a stop decides as it began; nullopt when the text is not such an object.
std::string BisectRuleJson(const BisectRule& rule);
std::optional<BisectRule> BisectRuleFromJson(const std::string& text);

// What the looks at one candidate say so far.
struct CandidateJudgement {
  enum class Kind {
    kMoreRounds,  // measure it again: another look
    kDecided,     // `step` is filled: good, bad, build failed or undecided
    kEndFailed,   // an end of the range did not build: the search stops, `why` says which
  };
  Kind kind = Kind::kMoreRounds;
  std::string why;
  StepDecision d;      // the rule's decision after the rounds so far (none for a failed build)
  BisectStepRow step;  // kDecided: build, decision, rounds, estimate and figures
  // kDecided undecided because the ends no longer differ by the margin: the search ends
  // "failed", as there is no regression between them to find.
  bool ends_equal = false;
};

// Judges the candidate of `search` from the windows of its looks so far (`looks`, oldest
// first), each a campaign planned by PlanBisectCampaign for `cell`, by `rule` on `figure`. A
// candidate whose windows all failed at the step "build" is decided "build failed"; one still
// short of a decision after rule.max_rounds rounds, or twice as many looks (looks whose windows
// the gates refused add no round), is decided undecided.
CandidateJudgement JudgeCandidate(const std::vector<ReportInput>& looks, const BisectionRow& search,
                                  const BisectCell& cell, Metric figure, const BisectRule& rule);

// Records a decided candidate, commit `i` of `range` measured by the looks `campaign_ids`: marks
// it in the range (unless the ends were found equal, which marks nothing), adds a decided side's
// error bound to `error_bounds`, the regression's size to `search`, and appends the step.
// Returns the step's number.
Result<int> RecordCandidate(Store& store, BisectionRow& search, BisectRange& range, size_t i,
                            const std::vector<int64_t>& campaign_ids, CandidateJudgement& judged,
                            std::vector<double>& error_bounds);

// "first bad commit: OID SUBJECT (after N commits measured, W windows; the search is right with
// probability at least P%)", the result line of a found search.
std::string FoundLine(const BisectCommit& culprit, int measured, int windows, double confidence);

// The error bounds of a stored search's decided steps, each 1 - rule.StepConfidence().
std::vector<double> StoredErrorBounds(const BisectionRecord& record, const BisectRule& rule);

}  // namespace benchlab
