// Bisection of a confirmed regression to the commit that caused it (docs/methodology.md,
// "Bisection"): the range of commits between a known good and a known bad build with what is
// known of each commit, the commit to measure next, and the decision read from paired rounds at
// a candidate. Pure functions and a plain value type, no I/O: the caller builds and measures,
// stores every decision (the bisect_steps table, docs/store.md) and, after a restart, rebuilds
// the range from them with ReplayBisect.
//
// The decision rule (Decide): every round measures the candidate c, the good end g and the bad
// end b interleaved, and gives the candidate's ratio to the geometric midpoint of the ends,
// q = c / sqrt(g * b). ln q is -s/2 for a candidate at the good end's level and +s/2 for one at
// the bad end's, s = ln(b / g) the regression. The t interval of the q's (LogRatioInterval, as
// every paired comparison of the lab is judged) at the look's level of an adaptive plan says
// "like bad" when it lies wholly on the bad side of 1, "like good" when it lies wholly on the
// good side. A wrong answer needs the interval to miss the true mean by s/2 or more, so one
// step errs with probability at most 1 - step confidence over all its looks; the whole search
// is right with probability at least 1 - the sum of its decided steps' error bounds (a union
// bound), and the step confidence is set so that the search's planned steps keep that at the
// stated confidence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/interval.h"
#include "analysis/stats.h"
#include "common/status.h"

namespace benchlab {

// What is known of one commit of the range.
enum class CommitState {
  kUntested,     // neither built nor measured yet
  kGood,         // measured like the good end
  kBad,          // measured like the bad end
  kBuildFailed,  // could not be built: no figure
  kUndecided,    // measured to the round limit without telling good from bad
};
// "untested", "good", "bad", "build failed", "undecided".
const char* CommitStateName(CommitState state);
std::optional<CommitState> ParseCommitState(std::string_view text);

struct BisectCommit {
  std::string oid;
  std::string subject;
};

enum class BisectOutcome {
  kRunning,       // commits between the last good and the first bad are still to be measured
  kFound,         // the first bad commit follows the last good one directly
  kUnsplittable,  // every commit between them failed to build or stayed undecided
};
const char* BisectOutcomeName(BisectOutcome outcome);  // "running", "found", "unsplittable"

struct BisectResult {
  BisectOutcome outcome = BisectOutcome::kRunning;
  size_t last_good = 0;           // index of the newest good commit before the first bad one
  size_t first_bad = 0;           // index of the oldest bad commit
  std::optional<size_t> culprit;  // kFound: first_bad
  // kUnsplittable: the commits between last_good and first_bad (all failed or undecided), any
  // one of which may be the culprit.
  std::vector<size_t> unsplittable;
  std::string reason;  // one line a person can check
};

// One recorded decision: the commit (by oid) and what it was found to be (not kUntested).
struct BisectStep {
  std::string oid;
  CommitState state = CommitState::kUntested;
};

class BisectRange;
// A range over `commits` (oldest first). InvalidArgument when there are fewer than 2 commits,
// an oid is empty, or two commits have the same oid.
Result<BisectRange> MakeBisectRange(std::vector<BisectCommit> commits);

// The commits of a bisection, oldest first: index 0 is the known good end, size() - 1 the known
// bad end; every other commit starts untested. Made by MakeBisectRange or ReplayBisect.
class BisectRange {
 public:
  size_t size() const { return commits_.size(); }
  const BisectCommit& commit(size_t i) const { return commits_[i]; }
  CommitState state(size_t i) const { return states_[i]; }
  std::optional<size_t> Find(std::string_view oid) const;

  // Records what commit i was found to be. InvalidArgument for an index out of range, either
  // end, or kUntested; FailedPrecondition when commit i is not untested any more (a commit is
  // decided once; a replay applies each recorded step once).
  Status Mark(size_t i, CommitState state);

  // The oldest bad commit, and the newest good commit before it.
  size_t FirstBad() const;
  size_t LastGood() const;

  // The commit to measure next: of the untested commits strictly between LastGood() and
  // FirstBad(), the one nearest their middle (failed and undecided commits are skipped, so the
  // nearest untested one on either side is taken); of two equally near, the older. nullopt
  // when none is left (Done()).
  std::optional<size_t> Next() const;
  // Up to k commits worth building and measuring ahead, in the order they would be wanted:
  // Next(), then the commits Next() would be after either decision (the midpoints of both
  // halves), then theirs, breadth first.
  std::vector<size_t> Ahead(size_t k) const;

  bool Done() const { return !Next().has_value(); }
  BisectResult Result() const;

  // Commits measured to a decision (good, bad or undecided), ends excluded.
  int Measured() const;

 private:
  friend ::benchlab::Result<BisectRange> MakeBisectRange(std::vector<BisectCommit> commits);
  // The untested commit nearest the middle of (lo, hi), exclusive.
  std::optional<size_t> MidpointOf(size_t lo, size_t hi) const;

  std::vector<BisectCommit> commits_;
  std::vector<CommitState> states_;
};

// The range after `steps`, applied in order: what a search whose process stopped goes on from.
// InvalidArgument naming the step (1-based) whose oid is not in the range, or that Mark refuses.
Result<BisectRange> ReplayBisect(std::vector<BisectCommit> commits,
                                 const std::vector<BisectStep>& steps);

// --- deciding one candidate ------------------------------------------------------------------

// One round at a candidate: the figure of the candidate and of both ends, measured interleaved.
struct BisectRound {
  double candidate = kNaN;
  double good = kNaN;
  double bad = kNaN;
};

enum class BisectDecision {
  kLikeGood,    // the candidate's level lies on the good end's side of the ends' midpoint
  kLikeBad,     // on the bad end's side
  kMoreRounds,  // not decided yet: measure another round
  kUndecided,   // not decided at the round limit, or the ends no longer differ by the margin
};
// "like good", "like bad", "more rounds", "undecided".
const char* BisectDecisionName(BisectDecision decision);

// The rule of one bisection: the whole search's confidence and the margin ([stats] of the
// campaign, StatsOptions), the rounds of one step, the figure's direction and the steps planned.
struct BisectRule {
  double confidence = 0.95;        // of the whole search being right (union bound over its steps)
  double margin = 0.02;            // the ends must differ by more than this
  int min_rounds = 3;              // first look at a candidate
  int max_rounds = 30;             // a candidate still undecided here is undecided
  Better better = Better::kLower;  // the figure's: the bad end is the worse one
  int planned_steps = 6;           // ceil(log2(commits - 1)): the decisions a search takes

  // 1 - (1 - confidence) / planned_steps: each step's share of the error budget.
  double StepConfidence() const;
  // The looks at one candidate: after every round from min to max at one level
  // (AdaptiveLookLevel), so that all looks together hold the truth at StepConfidence().
  LookPlan StepPlan() const;
};

// A rule for a range of `commits` commits (ends included) from a campaign's statistics: its
// confidence and margin; planned_steps = ceil(log2(commits - 1)), at least 1.
BisectRule BisectRuleFor(const StatsOptions& options, size_t commits, Better better);

struct StepDecision {
  BisectDecision decision = BisectDecision::kMoreRounds;
  int rounds = 0;                    // rounds with all three figures usable (finite and > 0)
  RatioInterval position;            // candidate / sqrt(good * bad), at the look's level
  RatioInterval step;                // bad / good, at the look's level
  std::optional<int> rounds_needed;  // kMoreRounds: about how many rounds would decide it
  // Decided (like good or like bad): 1 - StepConfidence(), the bound on this decision being
  // wrong; 0 otherwise (an undecided commit names no side, so it cannot name the wrong one).
  double error_bound = 0;
  std::string reason;  // one line a person can check
};

// The decision after the rounds measured so far at one candidate (docs/methodology.md,
// "Bisection"). Rounds with a figure that is not finite and above 0 are left out. Fewer than
// min_rounds usable rounds: kMoreRounds.
StepDecision Decide(const std::vector<BisectRound>& rounds, const BisectRule& rule);

// The whole search's confidence after the decisions of `steps` (each StepDecision's
// error_bound): 1 - their sum, at least 0.
double SearchConfidence(const std::vector<double>& step_error_bounds);

}  // namespace benchlab
