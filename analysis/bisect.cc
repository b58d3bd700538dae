#include "analysis/bisect.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <set>
#include <utility>

#include "common/parse.h"

namespace benchlab {
namespace {

constexpr const char* kCommitStateNames[] = {"untested", "good", "bad", "build failed",
                                             "undecided"};

bool SkippedInBisect(CommitState s) {
  return s == CommitState::kBuildFailed || s == CommitState::kUndecided;
}

std::string BisectSpan(const RatioInterval& iv) {
  return FormatRatio(iv.estimate) + " (" + FormatRatio(iv.low) + "-" + FormatRatio(iv.high) + ")";
}

}  // namespace

const char* CommitStateName(CommitState state) {
  return kCommitStateNames[static_cast<int>(state)];
}

std::optional<CommitState> ParseCommitState(std::string_view text) {
  for (int i = 0; i < 5; ++i) {
    if (text == kCommitStateNames[i]) return static_cast<CommitState>(i);
  }
  return std::nullopt;
}

const char* BisectOutcomeName(BisectOutcome outcome) {
  switch (outcome) {
    case BisectOutcome::kRunning:
      return "running";
    case BisectOutcome::kFound:
      return "found";
    case BisectOutcome::kUnsplittable:
      return "unsplittable";
  }
  return "?";
}

const char* BisectDecisionName(BisectDecision decision) {
  switch (decision) {
    case BisectDecision::kLikeGood:
      return "like good";
    case BisectDecision::kLikeBad:
      return "like bad";
    case BisectDecision::kMoreRounds:
      return "more rounds";
    case BisectDecision::kUndecided:
      return "undecided";
  }
  return "?";
}

// --- the range -------------------------------------------------------------------------------

Result<BisectRange> MakeBisectRange(std::vector<BisectCommit> commits) {
  if (commits.size() < 2) {
    return Status::InvalidArgument("a bisection needs a good and a bad commit; got " +
                                   std::to_string(commits.size()) + " commit(s)");
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < commits.size(); ++i) {
    if (commits[i].oid.empty()) {
      return Status::InvalidArgument("commit " + std::to_string(i) + " of the range has no oid");
    }
    if (!seen.insert(commits[i].oid).second) {
      return Status::InvalidArgument("commit " + std::to_string(i) + " (" + commits[i].oid +
                                     ") appears twice in the range");
    }
  }
  BisectRange range;
  range.states_.assign(commits.size(), CommitState::kUntested);
  range.states_.front() = CommitState::kGood;
  range.states_.back() = CommitState::kBad;
  range.commits_ = std::move(commits);
  return range;
}

std::optional<size_t> BisectRange::Find(std::string_view oid) const {
  for (size_t i = 0; i < commits_.size(); ++i) {
    if (commits_[i].oid == oid) return i;
  }
  return std::nullopt;
}

Status BisectRange::Mark(size_t i, CommitState state) {
  if (i >= commits_.size()) {
    return Status::InvalidArgument("commit index " + std::to_string(i) +
                                   " is outside the range of " + std::to_string(commits_.size()));
  }
  if (i == 0 || i + 1 == commits_.size()) {
    return Status::InvalidArgument("commit " + commits_[i].oid +
                                   " is an end of the range; its state is given");
  }
  if (state == CommitState::kUntested) {
    return Status::InvalidArgument("commit " + commits_[i].oid + " cannot be marked untested");
  }
  if (states_[i] != CommitState::kUntested) {
    return Status::FailedPrecondition("commit " + commits_[i].oid + " is " +
                                      CommitStateName(states_[i]) + " already");
  }
  states_[i] = state;
  return Status::Ok();
}

size_t BisectRange::FirstBad() const {
  for (size_t i = 0; i < states_.size(); ++i) {
    if (states_[i] == CommitState::kBad) return i;
  }
  return states_.size() - 1;
}

size_t BisectRange::LastGood() const {
  const size_t bad = FirstBad();
  for (size_t i = bad; i-- > 0;) {
    if (states_[i] == CommitState::kGood) return i;
  }
  return 0;
}

std::optional<size_t> BisectRange::MidpointOf(size_t lo, size_t hi) const {
  std::optional<size_t> best;
  size_t best_distance = 0;
  // |2i - (lo + hi)| is twice the distance from the middle; scanning oldest first keeps the
  // older of two equally near commits.
  for (size_t i = lo + 1; i < hi; ++i) {
    if (states_[i] != CommitState::kUntested) continue;
    const size_t twice = 2 * i > lo + hi ? 2 * i - (lo + hi) : (lo + hi) - 2 * i;
    if (!best || twice < best_distance) {
      best = i;
      best_distance = twice;
    }
  }
  return best;
}

std::optional<size_t> BisectRange::Next() const { return MidpointOf(LastGood(), FirstBad()); }

std::vector<size_t> BisectRange::Ahead(size_t k) const {
  std::vector<size_t> out;
  std::deque<std::pair<size_t, size_t>> spans = {{LastGood(), FirstBad()}};
  while (out.size() < k && !spans.empty()) {
    const auto [lo, hi] = spans.front();
    spans.pop_front();
    std::optional<size_t> mid = MidpointOf(lo, hi);
    if (!mid) continue;
    out.push_back(*mid);
    spans.emplace_back(lo, *mid);  // the candidate bad: the older half remains
    spans.emplace_back(*mid, hi);  // the candidate good: the newer half remains
  }
  return out;
}

BisectResult BisectRange::Result() const {
  BisectResult r;
  r.first_bad = FirstBad();
  r.last_good = LastGood();
  const std::string span = commits_[r.last_good].oid + ".." + commits_[r.first_bad].oid;
  if (r.first_bad == r.last_good + 1) {
    r.outcome = BisectOutcome::kFound;
    r.culprit = r.first_bad;
    r.reason = commits_[r.first_bad].oid +
               " is the first bad commit: " + commits_[r.last_good].oid + " before it is good";
    return r;
  }
  bool untested = false;
  for (size_t i = r.last_good + 1; i < r.first_bad; ++i) {
    if (SkippedInBisect(states_[i])) {
      r.unsplittable.push_back(i);
    } else {
      untested = true;
    }
  }
  if (untested) {
    r.outcome = BisectOutcome::kRunning;
    r.unsplittable.clear();
    r.reason = std::to_string(r.first_bad - r.last_good - 1) + " commits between " + span +
               " left to split";
    return r;
  }
  r.outcome = BisectOutcome::kUnsplittable;
  int failed = 0, undecided = 0;
  for (size_t i : r.unsplittable) {
    (states_[i] == CommitState::kBuildFailed ? failed : undecided) += 1;
  }
  r.reason = "the first bad commit is one of the " + std::to_string(r.unsplittable.size() + 1) +
             " after " + commits_[r.last_good].oid + " through " + commits_[r.first_bad].oid +
             ": between them " + std::to_string(failed) + " failed to build and " +
             std::to_string(undecided) + " stayed undecided";
  return r;
}

int BisectRange::Measured() const {
  int n = 0;
  for (size_t i = 1; i + 1 < states_.size(); ++i) {
    n += states_[i] == CommitState::kGood || states_[i] == CommitState::kBad ||
         states_[i] == CommitState::kUndecided;
  }
  return n;
}

Result<BisectRange> ReplayBisect(std::vector<BisectCommit> commits,
                                 const std::vector<BisectStep>& steps) {
  Result<BisectRange> range = MakeBisectRange(std::move(commits));
  if (!range.ok()) return range.status();
  for (size_t s = 0; s < steps.size(); ++s) {
    const std::string where = "step " + std::to_string(s + 1);
    std::optional<size_t> i = range->Find(steps[s].oid);
    if (!i) {
      return Status::InvalidArgument(where + ": commit " + steps[s].oid + " is not in the range");
    }
    if (Status st = range->Mark(*i, steps[s].state); !st.ok()) {
      return Status::InvalidArgument(where + ": " + st.message());
    }
  }
  return range;
}

// --- deciding one candidate ------------------------------------------------------------------

double BisectRule::StepConfidence() const {
  return 1 - (1 - confidence) / std::max(1, planned_steps);
}

LookPlan BisectRule::StepPlan() const {
  return max_rounds > min_rounds ? LookPlan::Adaptive(min_rounds, max_rounds, StepConfidence())
                                 : LookPlan::Fixed(max_rounds, StepConfidence());
}

BisectRule BisectRuleFor(const StatsOptions& options, size_t commits, Better better) {
  BisectRule rule;
  rule.confidence = options.rule.confidence;
  rule.margin = options.rule.margin;
  rule.better = better;
  int steps = 1;
  while (commits > 2 && (size_t{1} << steps) < commits - 1) ++steps;
  rule.planned_steps = steps;
  return rule;
}

StepDecision Decide(const std::vector<BisectRound>& rounds, const BisectRule& rule) {
  StepDecision d;
  std::vector<double> positions, steps;
  for (const BisectRound& r : rounds) {
    const bool usable = std::isfinite(r.candidate) && r.candidate > 0 && std::isfinite(r.good) &&
                        r.good > 0 && std::isfinite(r.bad) && r.bad > 0;
    if (!usable) continue;
    positions.push_back(r.candidate / std::sqrt(r.good * r.bad));
    steps.push_back(r.bad / r.good);
  }
  d.rounds = static_cast<int>(positions.size());
  const LookPlan plan = rule.StepPlan();
  const double level = plan.LevelAt(d.rounds);
  d.position = LogRatioInterval(positions, level);
  d.step = LogRatioInterval(steps, level);
  if (d.rounds < rule.min_rounds || !d.position.ok() || !std::isfinite(d.position.low) ||
      !std::isfinite(d.step.low)) {
    d.decision = BisectDecision::kMoreRounds;
    d.rounds_needed = rule.min_rounds;
    d.reason = std::to_string(d.rounds) + " usable rounds; the first look is after " +
               std::to_string(rule.min_rounds);
    return d;
  }
  // +1: the bad end is above the good one (a figure better lower, such as CPU per request).
  const double worse = rule.better == Better::kLower ? 1.0 : -1.0;
  const std::string where = "candidate/midpoint " + BisectSpan(d.position) + ", bad/good " +
                            BisectSpan(d.step) + " after " + std::to_string(d.rounds) + " rounds";
  // The ends must still show the regression: a step interval wholly inside the margin, or on
  // the better side, leaves nothing to tell the candidate by.
  const double step_hi = worse * std::log(worse > 0 ? d.step.high : d.step.low);
  if (step_hi < std::log1p(rule.margin)) {
    d.decision = BisectDecision::kUndecided;
    d.reason = where + ": the ends differ by less than the margin (" +
               StrFormat("%.4g%%", rule.margin * 100) + ") or not the way of the regression";
    return d;
  }
  const double lo = worse * std::log(worse > 0 ? d.position.low : d.position.high);
  const double hi = worse * std::log(worse > 0 ? d.position.high : d.position.low);
  if (lo > 0) {
    d.decision = BisectDecision::kLikeBad;
    d.error_bound = 1 - rule.StepConfidence();
    d.reason = where + ": on the bad end's side of the midpoint";
    return d;
  }
  if (hi < 0) {
    d.decision = BisectDecision::kLikeGood;
    d.error_bound = 1 - rule.StepConfidence();
    d.reason = where + ": on the good end's side of the midpoint";
    return d;
  }
  if (d.rounds >= rule.max_rounds) {
    d.decision = BisectDecision::kUndecided;
    d.reason = where + ": the interval still holds the midpoint at the round limit";
    return d;
  }
  d.decision = BisectDecision::kMoreRounds;
  const double m = std::fabs(d.position.log_mean);
  if (std::isfinite(d.position.log_sd) && d.position.log_sd > 0 && m > 0) {
    for (int n = d.rounds + 1; n <= rule.max_rounds; ++n) {
      if (StudentT(plan.LevelAt(n), n - 1) * d.position.log_sd / std::sqrt(n) < m) {
        d.rounds_needed = n;
        break;
      }
    }
  }
  d.reason =
      where + ": the interval holds the midpoint; " +
      (d.rounds_needed ? "about " + std::to_string(*d.rounds_needed) + " rounds would decide it"
                       : "no number of rounds up to " + std::to_string(rule.max_rounds) +
                             " would decide it at this spread");
  return d;
}

double SearchConfidence(const std::vector<double>& step_error_bounds) {
  double sum = 0;
  for (double e : step_error_bounds) sum += e;
  return std::max(0.0, 1 - sum);
}

}  // namespace benchlab
