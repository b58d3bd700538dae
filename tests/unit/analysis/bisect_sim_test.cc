// The bisection's decision rule on simulated ranges (bench/bisect_sim/sim.h; the full table is in
// bench/README.md): at fewer bisections, what the table shows must hold.
#include <gtest/gtest.h>

#include "bench/bisect_sim/sim.h"

namespace benchlab::bisect_sim {
namespace {

BisectRule SimRule() { return BisectRuleFor(StatsOptions{}, 64, Better::kLower); }

Setting At(double step, int culprit) {
  Setting s;
  s.step = step;
  s.culprit = culprit;
  return s;
}

TEST(BisectSimTest, TwentyAndTenPercentAreFoundAndNeverMisnamed) {
  for (const Setting& s : {At(0.20, 32), At(0.20, 1), At(0.10, 16), At(0.10, 63)}) {
    const Tally t = Simulate(s, SimRule(), 100, 11);
    EXPECT_EQ(t.wrong, 0) << s.step << " at " << s.culprit;
    EXPECT_EQ(t.wrong_steps, 0) << s.step << " at " << s.culprit;
    EXPECT_GE(t.RightShare(), 0.97) << s.step << " at " << s.culprit;
    EXPECT_LE(t.MeanMeasured(), 6.5) << s.step << " at " << s.culprit;
    EXPECT_LE(t.max_measured, 8) << s.step << " at " << s.culprit;
    EXPECT_GE(t.min_confidence, 0.95 - 1e-9);
  }
}

TEST(BisectSimTest, FivePercentIsUndecidedRatherThanWrong) {
  const Tally t = Simulate(At(0.05, 47), SimRule(), 150, 23);
  EXPECT_LE(t.wrong, t.unsplittable);
  EXPECT_LE(t.WrongShare(), 0.01);
  EXPECT_GE(t.RightShare(), 0.9);
  // It takes more rounds than a 20% regression does.
  const Tally big = Simulate(At(0.20, 47), SimRule(), 50, 23);
  EXPECT_GT(t.MeanRounds(), big.MeanRounds());
}

TEST(BisectSimTest, BuildFailuresLeaveTheCulpritAmongTheCommitsNamed) {
  Setting s = At(0.20, 32);
  s.build_failure = 0.25;
  const Tally t = Simulate(s, SimRule(), 100, 5);
  EXPECT_EQ(t.wrong, 0);
  EXPECT_GT(t.unsplittable, 0) << "a quarter of the commits failing must leave some unsplit";
  EXPECT_EQ(t.unsplittable_open, t.unsplittable);
  EXPECT_EQ(t.right + t.unsplittable, t.bisections);
}

TEST(BisectSimTest, TheSameSeedGivesTheSameTallyOnAnyNumberOfThreads) {
  const Tally one = Simulate(At(0.05, 16), SimRule(), 40, 3, 1);
  const Tally two = Simulate(At(0.05, 16), SimRule(), 40, 3, 2);
  EXPECT_EQ(one.right, two.right);
  EXPECT_EQ(one.rounds, two.rounds);
  EXPECT_EQ(one.measured, two.measured);
}

}  // namespace
}  // namespace benchlab::bisect_sim
