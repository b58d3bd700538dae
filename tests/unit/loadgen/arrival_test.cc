// The open-loop schedule as a pure function: exact constant slots, the split among workers,
// and the Poisson process's rate, spread and determinism.
#include "loadgen/arrival.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace benchlab {
namespace {

TEST(ArrivalTest, ConstantSlotsAreExact) {
  EXPECT_EQ(ConstantSlotNs(1000, 1000, 0), 1000);
  EXPECT_EQ(ConstantSlotNs(1000, 1000, 1), 1000 + 1'000'000);
  EXPECT_EQ(ConstantSlotNs(0, 3, 3), 1'000'000'000);  // 3 * (1/3 s), no rounding drift
  EXPECT_EQ(ConstantSlotNs(0, 3, 1), 333'333'333);    // rounded down
  EXPECT_EQ(ConstantSlotNs(0, 0.5, 1), 2'000'000'000);
  EXPECT_EQ(ConstantSlotNs(0, 50'000, 50'000ull * 3600), 3600'000'000'000);  // an hour later
}

TEST(ArrivalTest, ConstantScheduleTakesEveryNthSlotPerWorker) {
  const int64_t t0 = 5'000'000'000;
  std::vector<int64_t> merged;
  for (int worker = 0; worker < 3; ++worker) {
    ArrivalSchedule s(Arrival::kConstant, 20'000, t0, worker, 3, 1);
    int64_t last = 0;
    for (int i = 0; i < 1000; ++i) {
      const int64_t t = s.Next();
      EXPECT_EQ(t, ConstantSlotNs(t0, 20'000, static_cast<uint64_t>(worker + 3 * i)));
      EXPECT_GE(t, last);
      last = t;
      merged.push_back(t);
    }
  }
  std::sort(merged.begin(), merged.end());
  for (size_t k = 0; k < merged.size(); ++k) {
    ASSERT_EQ(merged[k], t0 + static_cast<int64_t>(k) * 50'000) << k;  // one slot every 50 us
  }
}

TEST(ArrivalTest, ConstantScheduleHasRateSlotsPerSecond) {
  ArrivalSchedule s(Arrival::kConstant, 1000, 0, 0, 1, 1);
  int in_first_second = 0;
  while (s.Next() < 1'000'000'000) ++in_first_second;
  EXPECT_EQ(in_first_second, 1000);
}

TEST(ArrivalTest, PoissonHasTheRateAndExponentialGaps) {
  const double rate = 10'000;
  ArrivalSchedule s(Arrival::kPoisson, rate, 0, 0, 1, 42);
  const int n = 200'000;
  std::vector<double> gaps;
  int64_t last = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t t = s.Next();
    ASSERT_GE(t, last);
    gaps.push_back(static_cast<double>(t - last));
    last = t;
  }
  double mean = 0;
  for (double g : gaps) mean += g;
  mean /= n;
  double var = 0;
  for (double g : gaps) var += (g - mean) * (g - mean);
  const double cv = std::sqrt(var / n) / mean;
  EXPECT_NEAR(mean, 1e9 / rate, 0.01 * 1e9 / rate);
  EXPECT_NEAR(cv, 1.0, 0.02);  // exponential gaps: standard deviation equals the mean
  // Memorylessness, roughly: P(gap > mean) = 1/e.
  const double above = static_cast<double>(std::count_if(gaps.begin(), gaps.end(),
                                                         [&](double g) { return g > mean; })) /
                       n;
  EXPECT_NEAR(above, std::exp(-1.0), 0.01);
}

TEST(ArrivalTest, PoissonIsDeterministicPerSeedAndWorker) {
  auto first = [](uint64_t seed, int worker) {
    ArrivalSchedule s(Arrival::kPoisson, 1000, 0, worker, 2, seed);
    std::vector<int64_t> v;
    for (int i = 0; i < 100; ++i) v.push_back(s.Next());
    return v;
  };
  EXPECT_EQ(first(7, 0), first(7, 0));
  EXPECT_NE(first(7, 0), first(8, 0));
  EXPECT_NE(first(7, 0), first(7, 1));  // workers run independent processes
}

TEST(ArrivalTest, PoissonWorkersTogetherKeepTheRate) {
  int64_t total = 0;
  for (int worker = 0; worker < 4; ++worker) {
    ArrivalSchedule s(Arrival::kPoisson, 8000, 0, worker, 4, 3);
    while (s.Next() < 10'000'000'000) ++total;  // ten seconds
  }
  EXPECT_NEAR(static_cast<double>(total), 80'000, 5 * std::sqrt(80'000.0));
}

}  // namespace
}  // namespace benchlab
