// Bisection of a regression: the range's order of candidates, its result, replay of recorded
// decisions, and the decision at one candidate (docs/methodology.md, "Bisection").
#include "analysis/bisect.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace benchlab {
namespace {

std::vector<BisectCommit> Commits(size_t n) {
  std::vector<BisectCommit> commits;
  for (size_t i = 0; i < n; ++i)
    commits.push_back({"c" + std::to_string(i), "subject " + std::to_string(i)});
  return commits;
}

BisectRange Range(size_t n) {
  Result<BisectRange> r = MakeBisectRange(Commits(n));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r).value();
}

// Bisects with a culprit at `culprit` (commits from it on are bad), returning the order of the
// commits measured.
std::vector<size_t> BisectTo(BisectRange& range, size_t culprit) {
  std::vector<size_t> order;
  while (std::optional<size_t> next = range.Next()) {
    order.push_back(*next);
    EXPECT_TRUE(range.Mark(*next, *next >= culprit ? CommitState::kBad : CommitState::kGood).ok());
    if (order.size() > range.size()) break;
  }
  return order;
}

TEST(BisectRangeTest, RefusesRangesItCannotBisect) {
  EXPECT_FALSE(MakeBisectRange(Commits(1)).ok());
  std::vector<BisectCommit> twice = Commits(4);
  twice[2].oid = twice[1].oid;
  Result<BisectRange> r = MakeBisectRange(twice);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("appears twice"), std::string::npos);
  std::vector<BisectCommit> empty = Commits(3);
  empty[1].oid.clear();
  EXPECT_FALSE(MakeBisectRange(empty).ok());
}

TEST(BisectRangeTest, EndsAreGoodAndBadAndCannotBeMarked) {
  BisectRange range = Range(8);
  EXPECT_EQ(range.state(0), CommitState::kGood);
  EXPECT_EQ(range.state(7), CommitState::kBad);
  EXPECT_EQ(range.state(3), CommitState::kUntested);
  EXPECT_FALSE(range.Mark(0, CommitState::kBad).ok());
  EXPECT_FALSE(range.Mark(7, CommitState::kGood).ok());
  EXPECT_FALSE(range.Mark(8, CommitState::kGood).ok());
  EXPECT_FALSE(range.Mark(3, CommitState::kUntested).ok());
  ASSERT_TRUE(range.Mark(3, CommitState::kGood).ok());
  EXPECT_EQ(range.Mark(3, CommitState::kBad).code(), StatusCode::kFailedPrecondition);
}

TEST(BisectRangeTest, MidpointOrderOnEightCommits) {
  // (0, 7): 3 and 4 are equally near the middle; the older is taken.
  BisectRange all_good = Range(8);
  EXPECT_EQ(all_good.Next(), 3u);
  EXPECT_EQ(BisectTo(all_good, 7), (std::vector<size_t>{3, 5, 6}));
  EXPECT_EQ(all_good.Result().culprit, 7u);

  BisectRange early = Range(8);
  EXPECT_EQ(BisectTo(early, 1), (std::vector<size_t>{3, 1}));
  EXPECT_EQ(early.Result().outcome, BisectOutcome::kFound);
  EXPECT_EQ(early.Result().culprit, 1u);

  BisectRange middle = Range(8);
  EXPECT_EQ(BisectTo(middle, 4), (std::vector<size_t>{3, 5, 4}));
  EXPECT_EQ(middle.Result().culprit, 4u);
  EXPECT_EQ(middle.Result().last_good, 3u);
  EXPECT_EQ(middle.Measured(), 3);
}

TEST(BisectRangeTest, SixtyFourCommitsTakeAtMostSixMeasurementsWhereverTheCulpritIs) {
  for (size_t culprit = 1; culprit < 64; ++culprit) {
    BisectRange range = Range(64);
    const std::vector<size_t> order = BisectTo(range, culprit);
    EXPECT_EQ(order.front(), 31u);  // (0 + 63) / 2 = 31.5: 31 and 32 tie, the older is taken
    EXPECT_LE(order.size(), 6u) << "culprit " << culprit;
    EXPECT_GE(order.size(), 5u) << "culprit " << culprit;
    const BisectResult result = range.Result();
    ASSERT_EQ(result.outcome, BisectOutcome::kFound) << result.reason;
    EXPECT_EQ(result.culprit, culprit);
  }
  BisectRange range = Range(64);
  EXPECT_EQ(BisectTo(range, 40), (std::vector<size_t>{31, 47, 39, 43, 41, 40}));
}

TEST(BisectRangeTest, ABuildFailedMidpointGivesWayToItsNeighbour) {
  BisectRange range = Range(8);
  ASSERT_TRUE(range.Mark(3, CommitState::kBuildFailed).ok());
  // 4 is as near the middle (3.5) as 3 was.
  EXPECT_EQ(range.Next(), 4u);
  ASSERT_TRUE(range.Mark(4, CommitState::kBuildFailed).ok());
  // 2 and 5 are 1.5 away: the older.
  EXPECT_EQ(range.Next(), 2u);

  BisectRange odd = Range(9);  // (0, 8): middle 4
  ASSERT_TRUE(odd.Mark(4, CommitState::kBuildFailed).ok());
  EXPECT_EQ(odd.Next(), 3u);  // 3 and 5 tie: the older
  ASSERT_TRUE(odd.Mark(3, CommitState::kUndecided).ok());
  EXPECT_EQ(odd.Next(), 5u);  // nearer than 2
}

TEST(BisectRangeTest, AFailedCommitBetweenLastGoodAndFirstBadIsUnsplittable) {
  BisectRange range = Range(8);
  ASSERT_TRUE(range.Mark(3, CommitState::kGood).ok());
  ASSERT_TRUE(range.Mark(5, CommitState::kBad).ok());
  EXPECT_EQ(range.Next(), 4u);
  ASSERT_TRUE(range.Mark(4, CommitState::kBuildFailed).ok());
  EXPECT_TRUE(range.Done());
  const BisectResult result = range.Result();
  EXPECT_EQ(result.outcome, BisectOutcome::kUnsplittable);
  EXPECT_EQ(result.last_good, 3u);
  EXPECT_EQ(result.first_bad, 5u);
  EXPECT_FALSE(result.culprit.has_value());
  EXPECT_EQ(result.unsplittable, (std::vector<size_t>{4}));
  EXPECT_NE(result.reason.find("1 failed to build"), std::string::npos) << result.reason;

  BisectRange mixed = Range(6);
  ASSERT_TRUE(mixed.Mark(2, CommitState::kBuildFailed).ok());
  ASSERT_TRUE(mixed.Mark(3, CommitState::kUndecided).ok());
  ASSERT_TRUE(mixed.Mark(1, CommitState::kGood).ok());
  EXPECT_EQ(mixed.Result().outcome, BisectOutcome::kRunning);
  EXPECT_EQ(mixed.Next(), 4u);
  ASSERT_TRUE(mixed.Mark(4, CommitState::kBad).ok());
  const BisectResult r = mixed.Result();
  EXPECT_EQ(r.outcome, BisectOutcome::kUnsplittable);
  EXPECT_EQ(r.unsplittable, (std::vector<size_t>{2, 3}));
  EXPECT_NE(r.reason.find("1 stayed undecided"), std::string::npos) << r.reason;
}

TEST(BisectRangeTest, AheadListsTheNextCommitThenBothHalvesMidpoints) {
  BisectRange range = Range(64);
  EXPECT_EQ(range.Ahead(1), (std::vector<size_t>{31}));
  // 31 bad leaves (0, 31): middle 15; 31 good leaves (31, 63): middle 47.
  EXPECT_EQ(range.Ahead(3), (std::vector<size_t>{31, 15, 47}));
  EXPECT_EQ(range.Ahead(7), (std::vector<size_t>{31, 15, 47, 7, 23, 39, 55}));
  // Each listed commit is what Next() gives after the decisions that lead to it.
  ASSERT_TRUE(range.Mark(31, CommitState::kGood).ok());
  EXPECT_EQ(range.Next(), 47u);
  ASSERT_TRUE(range.Mark(47, CommitState::kBad).ok());
  EXPECT_EQ(range.Next(), 39u);
  BisectRange small = Range(4);
  EXPECT_EQ(small.Ahead(10), (std::vector<size_t>{1, 2}));
}

TEST(BisectRangeTest, ReplayOfRecordedStepsGoesOnWhereTheSearchWas) {
  BisectRange live = Range(64);
  std::vector<BisectStep> steps;
  const std::vector<CommitState> outcomes = {CommitState::kGood, CommitState::kBuildFailed,
                                             CommitState::kBad, CommitState::kUndecided};
  for (CommitState s : outcomes) {
    const size_t next = *live.Next();
    ASSERT_TRUE(live.Mark(next, s).ok());
    steps.push_back({live.commit(next).oid, s});
  }
  Result<BisectRange> replayed = ReplayBisect(Commits(64), steps);
  ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
  EXPECT_EQ(replayed->Next(), live.Next());
  EXPECT_EQ(replayed->Ahead(5), live.Ahead(5));
  EXPECT_EQ(replayed->LastGood(), live.LastGood());
  EXPECT_EQ(replayed->FirstBad(), live.FirstBad());
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(replayed->state(i), live.state(i)) << i;

  std::vector<BisectStep> unknown = steps;
  unknown.push_back({"nope", CommitState::kGood});
  Result<BisectRange> bad = ReplayBisect(Commits(64), unknown);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("step 5"), std::string::npos) << bad.status().ToString();
  std::vector<BisectStep> twice = steps;
  twice.push_back(steps.front());
  EXPECT_FALSE(ReplayBisect(Commits(64), twice).ok());
}

TEST(BisectRangeTest, StateNamesRoundTrip) {
  for (CommitState s : {CommitState::kUntested, CommitState::kGood, CommitState::kBad,
                        CommitState::kBuildFailed, CommitState::kUndecided}) {
    EXPECT_EQ(ParseCommitState(CommitStateName(s)), s);
  }
  EXPECT_FALSE(ParseCommitState("maybe").has_value());
}

// --- Decide -------------------------------------------------------------------------------------

// Rounds with the good end at 10 µs, the bad end at 10 * (1 + step), and the candidate at
// `level` times the good end; `wobble` alternates each window by +/- that fraction so the
// rounds have a spread.
std::vector<BisectRound> Rounds(int n, double step, double level, double wobble) {
  std::vector<BisectRound> rounds;
  for (int r = 0; r < n; ++r) {
    const double sign = r % 2 == 0 ? 1 : -1;
    const double w = 1 + sign * wobble;
    const double w2 = 1 - sign * wobble * 0.5;
    rounds.push_back({10 * level * w, 10 * w2, 10 * (1 + step) * (r % 3 == 0 ? w : w2)});
  }
  return rounds;
}

BisectRule Rule() {
  BisectRule rule = BisectRuleFor(StatsOptions{}, 64, Better::kLower);
  return rule;
}

TEST(BisectDecideTest, RuleFromTheStatsOptions) {
  StatsOptions options;
  options.rule.confidence = 0.9;
  options.rule.margin = 0.05;
  BisectRule rule = BisectRuleFor(options, 64, Better::kLower);
  EXPECT_EQ(rule.planned_steps, 6);
  EXPECT_DOUBLE_EQ(rule.confidence, 0.9);
  EXPECT_DOUBLE_EQ(rule.margin, 0.05);
  EXPECT_NEAR(rule.StepConfidence(), 1 - 0.1 / 6, 1e-12);
  EXPECT_EQ(BisectRuleFor(options, 8, Better::kLower).planned_steps, 3);
  EXPECT_EQ(BisectRuleFor(options, 9, Better::kLower).planned_steps, 3);
  EXPECT_EQ(BisectRuleFor(options, 10, Better::kLower).planned_steps, 4);
  EXPECT_EQ(BisectRuleFor(options, 3, Better::kLower).planned_steps, 1);
  EXPECT_TRUE(rule.StepPlan().adaptive);
  EXPECT_GT(rule.StepPlan().LevelAt(5), rule.StepConfidence());
}

TEST(BisectDecideTest, ClearlyGoodAndClearlyBad) {
  const BisectRule rule = Rule();
  const StepDecision good = Decide(Rounds(6, 0.20, 1.0, 0.02), rule);
  EXPECT_EQ(good.decision, BisectDecision::kLikeGood) << good.reason;
  EXPECT_LT(good.position.high, 1);
  EXPECT_NEAR(good.step.estimate, 1.2, 0.02);
  EXPECT_NEAR(good.error_bound, 0.05 / 6, 1e-12);

  const StepDecision bad = Decide(Rounds(6, 0.20, 1.2, 0.02), rule);
  EXPECT_EQ(bad.decision, BisectDecision::kLikeBad) << bad.reason;
  EXPECT_GT(bad.position.low, 1);

  // A figure better higher (req/s): the bad end is the lower one.
  BisectRule rps = BisectRuleFor(StatsOptions{}, 64, Better::kHigher);
  const StepDecision slow = Decide(Rounds(6, -0.2, 0.8, 0.02), rps);
  EXPECT_EQ(slow.decision, BisectDecision::kLikeBad) << slow.reason;
  const StepDecision fast = Decide(Rounds(6, -0.2, 1.0, 0.02), rps);
  EXPECT_EQ(fast.decision, BisectDecision::kLikeGood) << fast.reason;
}

TEST(BisectDecideTest, TooCloseToTellIsMoreRoundsThenUndecided) {
  const BisectRule rule = Rule();
  // A candidate half way between the ends (in log terms) never leaves the midpoint.
  const double half = std::sqrt(1.1);
  const StepDecision early = Decide(Rounds(6, 0.10, half, 0.03), rule);
  EXPECT_EQ(early.decision, BisectDecision::kMoreRounds) << early.reason;
  EXPECT_EQ(early.error_bound, 0);
  const StepDecision limit = Decide(Rounds(rule.max_rounds, 0.10, half, 0.03), rule);
  EXPECT_EQ(limit.decision, BisectDecision::kUndecided) << limit.reason;
  EXPECT_EQ(limit.error_bound, 0);

  // Before the first look nothing is judged, however clear.
  const StepDecision first = Decide(Rounds(2, 0.20, 1.0, 0.01), rule);
  EXPECT_EQ(first.decision, BisectDecision::kMoreRounds);
  EXPECT_EQ(first.rounds_needed, rule.min_rounds);

  // Ends that no longer differ by the margin leave nothing to decide by.
  const StepDecision flat = Decide(Rounds(12, 0.0, 1.0, 0.002), rule);
  EXPECT_EQ(flat.decision, BisectDecision::kUndecided) << flat.reason;
}

TEST(BisectDecideTest, AnUnusableRoundIsLeftOut) {
  std::vector<BisectRound> rounds = Rounds(6, 0.20, 1.0, 0.02);
  rounds.push_back({kNaN, 10, 12});
  rounds.push_back({10, 0, 12});
  const StepDecision d = Decide(rounds, Rule());
  EXPECT_EQ(d.rounds, 6);
  EXPECT_EQ(d.decision, BisectDecision::kLikeGood);
}

TEST(BisectDecideTest, SearchConfidenceIsAUnionBound) {
  EXPECT_DOUBLE_EQ(SearchConfidence({}), 1.0);
  EXPECT_NEAR(SearchConfidence({0.01, 0.01, 0.0, 0.02}), 0.96, 1e-12);
  EXPECT_EQ(SearchConfidence(std::vector<double>(30, 0.05)), 0.0);
  // A search of its planned steps keeps the rule's confidence.
  const BisectRule rule = Rule();
  EXPECT_NEAR(SearchConfidence(std::vector<double>(6, 1 - rule.StepConfidence())), 0.95, 1e-12);
}

}  // namespace
}  // namespace benchlab
