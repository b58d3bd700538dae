// The statistics of reports against hand-computed fixtures. The arithmetic is written beside each
// expectation so a reader can check it without running anything.
#include "analysis/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace benchlab {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Ratios as RoundRatios would make them, for the verdict tests: target = ratio, baseline = 1.
std::vector<RoundRatio> Rounds(const std::vector<double>& ratios) {
  std::vector<RoundRatio> out;
  int round = 1;
  for (double r : ratios) out.push_back({round++, r, 1, r});
  return out;
}

std::optional<NoiseFloor> Floor(const std::vector<double>& noise) {
  return MeasureNoiseFloor(noise);
}

// --- Summarize ------------------------------------------------------------------------------

TEST(StatsSummarize, OddCountTakesTheMiddleValue) {
  // sorted: 98000 100000 102000 -> median 100000; spread (102000 - 98000) / 100000 = 4%.
  const Summary s = Summarize({102000, 98000, 100000});
  EXPECT_EQ(s.n, 3);
  EXPECT_EQ(s.ignored, 0);
  EXPECT_DOUBLE_EQ(s.median, 100000);
  EXPECT_DOUBLE_EQ(s.min, 98000);
  EXPECT_DOUBLE_EQ(s.max, 102000);
  EXPECT_DOUBLE_EQ(s.spread_pct, 4);
}

TEST(StatsSummarize, EvenCountAveragesTheTwoMiddleValues) {
  // sorted: 10 20 30 40 -> median (20 + 30) / 2 = 25; spread (40 - 10) / 25 = 120%.
  const Summary s = Summarize({40, 10, 30, 20});
  EXPECT_EQ(s.n, 4);
  EXPECT_DOUBLE_EQ(s.median, 25);
  EXPECT_DOUBLE_EQ(s.min, 10);
  EXPECT_DOUBLE_EQ(s.max, 40);
  EXPECT_DOUBLE_EQ(s.spread_pct, 120);
}

TEST(StatsSummarize, OneValueHasNoSpread) {
  const Summary s = Summarize({7});
  EXPECT_EQ(s.n, 1);
  EXPECT_DOUBLE_EQ(s.median, 7);
  EXPECT_DOUBLE_EQ(s.spread_pct, 0);
}

TEST(StatsSummarize, EmptyIsAllNaN) {
  const Summary s = Summarize({});
  EXPECT_EQ(s.n, 0);
  EXPECT_TRUE(std::isnan(s.median));
  EXPECT_TRUE(std::isnan(s.min));
  EXPECT_TRUE(std::isnan(s.max));
  EXPECT_TRUE(std::isnan(s.spread_pct));
}

TEST(StatsSummarize, NonFiniteValuesAreLeftOutAndCounted) {
  // finite: 1 3 5 -> median 3; spread (5 - 1) / 3 = 133.33%; NaN and inf ignored (2).
  const Summary s = Summarize({kNaN, 5, kInf, 1, 3});
  EXPECT_EQ(s.n, 3);
  EXPECT_EQ(s.ignored, 2);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_NEAR(s.spread_pct, 400.0 / 3, 1e-9);

  const Summary none = Summarize({kNaN, -kInf});
  EXPECT_EQ(none.n, 0);
  EXPECT_EQ(none.ignored, 2);
  EXPECT_TRUE(std::isnan(none.median));
}

TEST(StatsSummarize, SpreadAroundAZeroMedian) {
  // All equal: no spread at all, even at 0.
  EXPECT_DOUBLE_EQ(Summarize({0, 0}).spread_pct, 0);
  // -1 0 1: median 0, range 2; nothing to express it against -> NaN.
  EXPECT_TRUE(std::isnan(Summarize({-1, 0, 1}).spread_pct));
}

// --- round-by-round ratios ------------------------------------------------------------------

TEST(StatsRatios, SameRoundOnlyAndAMissingRoundHasNoRatio) {
  // round 1: 105000 / 100000 = 1.05; round 2: 99840 / 96000 = 1.04;
  // round 3: 108120 / 102000 = 1.06; round 4: the baseline has no window -> no ratio;
  // round 5: only the baseline -> no ratio.
  const RoundValues target = {{1, 105000}, {2, 99840}, {3, 108120}, {4, 100000}};
  const RoundValues baseline = {{1, 100000}, {2, 96000}, {3, 102000}, {5, 90000}};
  const std::vector<RoundRatio> r = RoundRatios(target, baseline);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].round, 1);
  EXPECT_DOUBLE_EQ(r[0].target, 105000);
  EXPECT_DOUBLE_EQ(r[0].baseline, 100000);
  EXPECT_DOUBLE_EQ(r[0].ratio, 1.05);
  EXPECT_EQ(r[1].round, 2);
  EXPECT_DOUBLE_EQ(r[1].ratio, 1.04);
  EXPECT_EQ(r[2].round, 3);
  EXPECT_DOUBLE_EQ(r[2].ratio, 1.06);
}

TEST(StatsRatios, UnusableFiguresHaveNoRatio) {
  // round 1: NaN target; round 2: baseline 0 (no scale); round 3: infinite baseline;
  // round 4: 50 / 200 = 0.25.
  const RoundValues target = {{1, kNaN}, {2, 10}, {3, 10}, {4, 50}};
  const RoundValues baseline = {{1, 10}, {2, 0}, {3, kInf}, {4, 200}};
  const std::vector<RoundRatio> r = RoundRatios(target, baseline);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].round, 4);
  EXPECT_DOUBLE_EQ(r[0].ratio, 0.25);
}

TEST(StatsRatios, RoundsWonInBothDirections) {
  // ratios 1.05, 0.98, 1.00, 1.10: higher is better -> 1.05 and 1.10 win (2);
  // lower is better -> 0.98 wins (1); 1.00 is a tie and counts for neither.
  const std::vector<RoundRatio> r = Rounds({1.05, 0.98, 1.0, 1.10});
  EXPECT_EQ(RoundsWon(r, Better::kHigher), 2);
  EXPECT_EQ(RoundsWon(r, Better::kLower), 1);
  EXPECT_EQ(RoundsWon({}, Better::kHigher), 0);
}

// --- the noise floor ------------------------------------------------------------------------

TEST(StatsNoiseFloor, RangeOverMedianOfTheNoiseWindows) {
  // sorted: 98000 99000 100000 101000 102000 -> median 100000;
  // floor (102000 - 98000) / 100000 = 0.04.
  const std::optional<NoiseFloor> f = Floor({99000, 101000, 100000, 102000, 98000});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->values.n, 5);
  EXPECT_DOUBLE_EQ(f->values.median, 100000);
  EXPECT_DOUBLE_EQ(f->fraction, 0.04);
}

TEST(StatsNoiseFloor, NoNoiseFloorIsNotZero) {
  EXPECT_FALSE(Floor({}).has_value());           // no noise phase
  EXPECT_FALSE(Floor({100000}).has_value());     // one window has no spread to measure
  EXPECT_FALSE(Floor({kNaN, 100}).has_value());  // one usable window
  EXPECT_FALSE(Floor({-1, 0, 1}).has_value());   // a spread with no scale
  // Identical noise windows are a measured floor of 0, which is not the same as none.
  const std::optional<NoiseFloor> zero = Floor({100, 100});
  ASSERT_TRUE(zero.has_value());
  EXPECT_DOUBLE_EQ(zero->fraction, 0);
}

// --- the verdict ----------------------------------------------------------------------------

TEST(StatsVerdict, WithinTheNoiseFloorIsClose) {
  // ratios 1.02 1.03 1.04: median 1.03, |1.03 - 1| = 0.03 <= floor 0.04 -> close, although
  // every round is above 1. Without the floor the same rounds are ahead.
  const auto rounds = Rounds({1.02, 1.03, 1.04});
  const auto floor = Floor({99000, 101000, 100000, 102000, 98000});  // 0.04
  const Judgement j = Judge(rounds, Better::kHigher, floor);
  EXPECT_EQ(j.verdict, ComparisonVerdict::kClose);
  EXPECT_NE(j.reason.find("within the noise floor"), std::string::npos) << j.reason;
  EXPECT_EQ(Judge(rounds, Better::kHigher, std::nullopt).verdict, ComparisonVerdict::kBetter);
}

TEST(StatsVerdict, OnTheNoiseFloorIsClose) {
  // floor from 75 100 100: (100 - 75) / 100 = 0.25. Ratios 1.25 1.25: |1.25 - 1| = 0.25 <= 0.25.
  const auto floor = Floor({75, 100, 100});
  ASSERT_TRUE(floor.has_value());
  EXPECT_DOUBLE_EQ(floor->fraction, 0.25);
  EXPECT_EQ(Judge(Rounds({1.25, 1.25}), Better::kHigher, floor).verdict, ComparisonVerdict::kClose);
  // 1.5 1.5: 0.5 > 0.25 and no straddle -> ahead.
  EXPECT_EQ(Judge(Rounds({1.5, 1.5}), Better::kHigher, floor).verdict, ComparisonVerdict::kBetter);
}

TEST(StatsVerdict, RatiosThatStraddleOneAreClose) {
  // ratios 0.97 1.06 1.08: median 1.06, |1.06 - 1| = 0.06 > floor 0.04, but
  // min 0.97 < 1 < max 1.08 -> close, in either direction and with or without a floor.
  const auto rounds = Rounds({0.97, 1.06, 1.08});
  const auto floor = Floor({99000, 101000, 100000, 102000, 98000});
  const Judgement j = Judge(rounds, Better::kHigher, floor);
  EXPECT_EQ(j.verdict, ComparisonVerdict::kClose);
  EXPECT_NE(j.reason.find("straddle"), std::string::npos) << j.reason;
  EXPECT_EQ(Judge(rounds, Better::kLower, floor).verdict, ComparisonVerdict::kClose);
  EXPECT_EQ(Judge(rounds, Better::kHigher, std::nullopt).verdict, ComparisonVerdict::kClose);
}

TEST(StatsVerdict, AheadAndBehindFollowTheDirection) {
  const auto floor = Floor({99000, 101000, 100000, 102000, 98000});  // 0.04
  // ratios 1.04 1.05 1.06: median 1.05, 0.05 > 0.04, all above 1.
  // req/s (higher is better): ahead; CPU per request (lower is better): behind.
  const auto above = Rounds({1.05, 1.04, 1.06});
  EXPECT_EQ(Judge(above, Better::kHigher, floor).verdict, ComparisonVerdict::kBetter);
  EXPECT_EQ(Judge(above, Better::kLower, floor).verdict, ComparisonVerdict::kWorse);
  // ratios 0.90 0.92 0.95: median 0.92, |0.92 - 1| = 0.08 > 0.04, all below 1.
  const auto below = Rounds({0.90, 0.92, 0.95});
  const Judgement j = Judge(below, Better::kHigher, floor);
  EXPECT_EQ(j.verdict, ComparisonVerdict::kWorse);
  EXPECT_NE(j.reason.find("beyond the noise floor 4.0%"), std::string::npos) << j.reason;
  EXPECT_EQ(Judge(below, Better::kLower, floor).verdict, ComparisonVerdict::kBetter);
}

TEST(StatsVerdict, WithoutANoiseFloorOnlyTheStraddleRuleApplies) {
  // ratios 1.01 1.02: median 1.015. A floor of 0.04 would call it close; with none it is ahead.
  const auto rounds = Rounds({1.01, 1.02});
  const Judgement j = Judge(rounds, Better::kHigher, std::nullopt);
  EXPECT_EQ(j.verdict, ComparisonVerdict::kBetter);
  EXPECT_NE(j.reason.find("no noise floor"), std::string::npos) << j.reason;
  EXPECT_EQ(Judge(rounds, Better::kHigher, Floor({98, 100, 102})).verdict,
            ComparisonVerdict::kClose);
}

TEST(StatsVerdict, TooFewRoundsIsNotApplicable) {
  const auto floor = Floor({99000, 101000, 100000, 102000, 98000});
  // One ratio of 1.5 is far outside the floor, but one round is not a comparison.
  const Judgement one = Judge(Rounds({1.5}), Better::kHigher, floor);
  EXPECT_EQ(one.verdict, ComparisonVerdict::kNotApplicable);
  EXPECT_NE(one.reason.find("fewer than 2"), std::string::npos) << one.reason;
  EXPECT_EQ(Judge({}, Better::kHigher, std::nullopt).verdict, ComparisonVerdict::kNotApplicable);
}

TEST(StatsVerdict, ExactTieIsClose) {
  // 1.0 1.0: no floor, no straddle, median exactly 1 -> neither ahead nor behind.
  EXPECT_EQ(Judge(Rounds({1.0, 1.0}), Better::kHigher, std::nullopt).verdict,
            ComparisonVerdict::kClose);
}

TEST(StatsVerdict, Names) {
  EXPECT_STREQ(ComparisonVerdictName(ComparisonVerdict::kNotApplicable), "n/a");
  EXPECT_STREQ(ComparisonVerdictName(ComparisonVerdict::kClose), "close");
  EXPECT_STREQ(ComparisonVerdictName(ComparisonVerdict::kBetter), "ahead");
  EXPECT_STREQ(ComparisonVerdictName(ComparisonVerdict::kWorse), "behind");
}

// One verdict, two wordings: the report's (and a series') ahead/behind, compare's better/worse;
// the other three read alike, so a report and a comparison of the same interval agree.
TEST(StatsVerdict, OneVerdictTwoWordings) {
  const std::pair<ComparisonVerdict, const char*> compare[] = {
      {ComparisonVerdict::kNotApplicable, "n/a"},
      {ComparisonVerdict::kClose, "close"},
      {ComparisonVerdict::kBetter, "better"},
      {ComparisonVerdict::kWorse, "worse"},
      {ComparisonVerdict::kInconclusive, "inconclusive"}};
  for (const auto& [v, word] : compare) {
    EXPECT_STREQ(ComparisonVerdictName(v, VerdictWords::kBetterWorse), word);
  }
  EXPECT_STREQ(ComparisonVerdictName(ComparisonVerdict::kInconclusive), "inconclusive");
  // The interval's judgement is one function for both: better on a req/s interval above 1 + m.
  RatioInterval above;
  above.n = 3;
  above.low = 1.05;
  above.high = 1.10;
  EXPECT_EQ(JudgeInterval(above, Better::kHigher, 0.02), ComparisonVerdict::kBetter);
  EXPECT_EQ(JudgeInterval(above, Better::kLower, 0.02), ComparisonVerdict::kWorse);
}

TEST(StatsCompare, TheWorkedExampleOfMethodology) {
  // docs/methodology.md: ratios 1.05 1.04 1.06 (round 4 has no baseline): median 1.05,
  // range 1.04 to 1.06, won 3 of 3; floor 0.04 < 0.05 and no straddle -> ahead.
  const RoundValues hello = {{1, 105000}, {2, 99840}, {3, 108120}, {4, 100000}};
  const RoundValues nginx = {{1, 100000}, {2, 96000}, {3, 102000}};
  const Comparison c =
      Compare(hello, nginx, Better::kHigher, Floor({99000, 101000, 100000, 102000, 98000}));
  ASSERT_EQ(c.rounds.size(), 3u);
  EXPECT_EQ(c.ratio.n, 3);
  EXPECT_DOUBLE_EQ(c.ratio.median, 1.05);
  EXPECT_DOUBLE_EQ(c.ratio.min, 1.04);
  EXPECT_DOUBLE_EQ(c.ratio.max, 1.06);
  EXPECT_EQ(c.rounds_won, 3);
  EXPECT_EQ(c.rounds_lost, 0);
  ASSERT_TRUE(c.noise_floor.has_value());
  EXPECT_DOUBLE_EQ(*c.noise_floor, 0.04);
  // The interval: 1.025 to 1.075 at 95% (tests/unit/analysis/interval_test.cc), beyond the
  // margin of 2%: ahead; the noise-floor rule agrees.
  EXPECT_EQ(c.verdict, ComparisonVerdict::kBetter);
  EXPECT_NEAR(c.interval.low, 1.02542, 1e-5);
  EXPECT_EQ(c.noise_rule.verdict, ComparisonVerdict::kBetter);
  // From the baseline's side the same rounds are lost, and it is behind.
  const Comparison back =
      Compare(nginx, hello, Better::kHigher, Floor({99000, 101000, 100000, 102000, 98000}));
  EXPECT_EQ(back.rounds_won, 0);
  EXPECT_EQ(back.rounds_lost, 3);
  EXPECT_EQ(back.verdict, ComparisonVerdict::kWorse);
  EXPECT_EQ(back.noise_rule.verdict, ComparisonVerdict::kWorse);
}

// --- efficiency and metrics -----------------------------------------------------------------

TEST(StatsEfficiency, RequestsPerCpuSecondAndCpuPerRequest) {
  Measurement m;
  m.requests = 1200000;
  m.server_cpu_s = 3.0;
  m.cpu_us_per_request = 2.5;  // 3.0 s * 1e6 / 1200000 = 2.5 us
  // 1200000 / 3.0 = 400000 requests per CPU-second (= 1e6 / 2.5).
  EXPECT_DOUBLE_EQ(MetricValue(m, Metric::kRequestsPerCpuSecond), 400000);
  EXPECT_DOUBLE_EQ(MetricValue(m, Metric::kCpuUsPerRequest), 2.5);
  // No CPU time measured: left out (NaN), never infinite.
  m.server_cpu_s = 0;
  EXPECT_TRUE(std::isnan(MetricValue(m, Metric::kRequestsPerCpuSecond)));
}

// Side services (docs/services.md): their CPU per request, and the target's plus theirs.
TEST(StatsEfficiency, ServiceFiguresAreLeftOutWithoutServices) {
  Measurement m;
  m.requests = 1000;
  m.server_cpu_s = 0.01;  // 10 us per request
  m.cpu_us_per_request = 10;
  // A target without services has no database cost to count: NaN, never 0.
  EXPECT_TRUE(std::isnan(MetricValue(m, Metric::kServiceCpuUsPerRequest)));
  EXPECT_TRUE(std::isnan(MetricValue(m, Metric::kTotalCpuUsPerRequest)));
  // Even a stray figure is not read while the window has no services.
  m.services_cpu_s = 0.5;
  EXPECT_TRUE(std::isnan(MetricValue(m, Metric::kServiceCpuUsPerRequest)));
  EXPECT_TRUE(std::isnan(MetricValue(m, Metric::kTotalCpuUsPerRequest)));
}

TEST(StatsEfficiency, ServiceFiguresOfAWindowWithServices) {
  Measurement m;
  m.requests = 1000;
  m.server_cpu_s = 0.01;
  m.cpu_us_per_request = 10;
  m.has_services = true;
  // Two services, 0.003 + 0.001 s user and 0.0015 + 0.0005 s system: 0.006 s together.
  m.services_cpu_s = 0.003 + 0.0015 + 0.001 + 0.0005;
  // 0.006 s * 1e6 / 1000 = 6 us; total (0.01 + 0.006) * 1e6 / 1000 = 16 us.
  EXPECT_NEAR(MetricValue(m, Metric::kServiceCpuUsPerRequest), 6, 1e-9);
  EXPECT_NEAR(MetricValue(m, Metric::kTotalCpuUsPerRequest), 16, 1e-9);
  // Idle services cost nothing, and that is a measurement: 0, and the total is the target's.
  m.services_cpu_s = 0;
  EXPECT_DOUBLE_EQ(MetricValue(m, Metric::kServiceCpuUsPerRequest), 0);
  EXPECT_DOUBLE_EQ(MetricValue(m, Metric::kTotalCpuUsPerRequest), 10);
  // The target's own CPU not measured: the total would understate the cost, so it is left out.
  m.services_cpu_s = 0.006;
  m.server_cpu_s = 0;
  EXPECT_NEAR(MetricValue(m, Metric::kServiceCpuUsPerRequest), 6, 1e-9);
  EXPECT_TRUE(std::isnan(MetricValue(m, Metric::kTotalCpuUsPerRequest)));
  // No request: nothing per request.
  m.server_cpu_s = 0.01;
  m.requests = 0;
  EXPECT_TRUE(std::isnan(MetricValue(m, Metric::kServiceCpuUsPerRequest)));
  EXPECT_TRUE(std::isnan(MetricValue(m, Metric::kTotalCpuUsPerRequest)));
}

TEST(StatsEfficiency, DirectionsAndNames) {
  EXPECT_EQ(MetricBetter(Metric::kRps), Better::kHigher);
  EXPECT_EQ(MetricBetter(Metric::kRequestsPerCpuSecond), Better::kHigher);
  EXPECT_EQ(MetricBetter(Metric::kCpuUsPerRequest), Better::kLower);
  EXPECT_EQ(MetricBetter(Metric::kP99Us), Better::kLower);
  EXPECT_EQ(MetricBetter(Metric::kStartupMs), Better::kLower);
  EXPECT_EQ(MetricBetter(Metric::kRssPeakKb), Better::kLower);
  EXPECT_STREQ(MetricName(Metric::kRps), "rps");
  EXPECT_STREQ(MetricName(Metric::kRequestsPerCpuSecond), "requests_per_cpu_s");
  EXPECT_STREQ(MetricName(Metric::kIdleRssKb), "idle_rss_kb");
  EXPECT_EQ(MetricBetter(Metric::kServiceCpuUsPerRequest), Better::kLower);
  EXPECT_EQ(MetricBetter(Metric::kTotalCpuUsPerRequest), Better::kLower);
  EXPECT_STREQ(MetricName(Metric::kServiceCpuUsPerRequest), "service_cpu_us_per_request");
  EXPECT_STREQ(MetricName(Metric::kTotalCpuUsPerRequest), "total_cpu_us_per_request");
  for (int i = 0; i < kMetricCount; ++i) {
    EXPECT_EQ(static_cast<int>(kAllMetrics[i]), i);
    EXPECT_EQ(IsServiceMetric(kAllMetrics[i]), kAllMetrics[i] == Metric::kServiceCpuUsPerRequest ||
                                                   kAllMetrics[i] == Metric::kTotalCpuUsPerRequest);
  }
}

// --- windows, cells, campaigns ------------------------------------------------------------

// A valid matrix window of a 10 s interval: requests = rps * 10, CPU per request as given, so
// server_cpu_s = requests * cpu_us / 1e6 and requests per CPU-second = 1e6 / cpu_us.
Measurement Window(const std::string& target, int round, double rps, double cpu_us,
                   const std::string& pair = "") {
  Measurement m;
  m.pair = pair;
  m.target = target;
  m.scenario = "plaintext";
  m.load_level = "c64";
  m.round = round;
  m.position = round;  // any: it only tells windows apart
  m.valid = true;
  m.rps = rps;
  m.requests = rps * 10;
  m.cpu_us_per_request = cpu_us;
  m.server_cpu_s = m.requests * cpu_us / 1e6;
  return m;
}

Measurement NoiseWindow(int ordinal, double rps, const std::string& pair = "") {
  Measurement m = Window("nginx", 0, rps, 10, pair);
  m.noise = true;
  m.position = ordinal;
  return m;
}

TEST(StatsGrouping, NewestAttemptOfEachWindowCounts) {
  Measurement a1 = Window("hello", 2, 50000, 10);
  a1.valid = false;
  Measurement a3 = Window("hello", 2, 99840, 10);
  a3.attempt = 3;
  Measurement a2 = Window("hello", 2, 70000, 10);
  a2.attempt = 2;
  // Two noise windows share target and round 0 but not their position: two windows.
  const std::vector<Measurement> kept =
      NewestAttempts({a1, a3, NoiseWindow(0, 1), a2, NoiseWindow(1, 2)});
  ASSERT_EQ(kept.size(), 3u);
  // Ordered by name: "hello" before "nginx"; positions 0 then 1.
  EXPECT_EQ(kept[0].target, "hello");
  EXPECT_EQ(kept[0].attempt, 3);
  EXPECT_DOUBLE_EQ(kept[0].rps, 99840);
  EXPECT_EQ(kept[1].position, 0);
  EXPECT_EQ(kept[2].position, 1);
}

TEST(StatsGrouping, CellsByPairScenarioAndLevelWithoutNoiseWindows) {
  Measurement json = Window("nginx", 1, 1, 1);
  json.scenario = "json";
  Measurement r5000 = Window("nginx", 1, 1, 1);
  r5000.load_level = "r5000";
  const auto cells = GroupByCell({Window("nginx", 1, 1, 1, "srv2"), Window("hello", 1, 1, 1), json,
                                  r5000, NoiseWindow(0, 1), Window("hello", 2, 1, 1)});
  // Keys in order: ("", json, c64), ("", plaintext, c64), ("", plaintext, r5000),
  // ("srv2", plaintext, c64); the noise window is in none of them.
  ASSERT_EQ(cells.size(), 4u);
  auto it = cells.begin();
  EXPECT_EQ(it->first, (CellKey{"", "json", "c64"}));
  EXPECT_EQ((++it)->first, (CellKey{"", "plaintext", "c64"}));
  EXPECT_EQ(it->second.size(), 2u);  // hello rounds 1 and 2
  EXPECT_EQ((++it)->first, (CellKey{"", "plaintext", "r5000"}));
  EXPECT_EQ((++it)->first, (CellKey{"srv2", "plaintext", "c64"}));
}

// The worked example of docs/methodology.md as stored windows.
//   round  nginx req/s  hello req/s  ratio   nginx CPU us  hello CPU us  ratio
//   1      100000       105000       1.05    10            8             0.8
//   2       96000        99840       1.04    12.5          10            0.8
//   3      102000       108120       1.06    8             6.4           0.8
// Five noise windows of nginx: 99000 101000 100000 102000 98000 req/s, all 10 CPU us.
std::vector<Measurement> WorkedExample() {
  std::vector<Measurement> w = {Window("nginx", 1, 100000, 10),
                                Window("hello", 1, 105000, 8),
                                Window("nginx", 2, 96000, 12.5),
                                Window("hello", 2, 99840, 10),
                                Window("nginx", 3, 102000, 8),
                                Window("hello", 3, 108120, 6.4),
                                NoiseWindow(0, 99000),
                                NoiseWindow(1, 101000),
                                NoiseWindow(2, 100000),
                                NoiseWindow(3, 102000),
                                NoiseWindow(4, 98000)};
  // Start-up, first request and memory of each window (nginx, then hello).
  const double startup[] = {5, 20, 7, 30, 6, 25};
  const double idle[] = {4000, 9000, 4000, 9100, 4200, 8900};
  const double peak[] = {6000, 12000, 6400, 12500, 6200, 12100};
  for (int i = 0; i < 6; ++i) {
    w[i].startup_ms = startup[i];
    w[i].first_request_ms = startup[i] / 10;
    w[i].idle_rss_kb = idle[i];
    w[i].rss_peak_kb = peak[i];
  }
  // hello's round 2 was invalid at first (a cron job), then re-run: the re-run counts.
  Measurement spoilt = Window("hello", 2, 50000, 20);
  spoilt.valid = false;
  spoilt.startup_ms = 1000;
  w.push_back(spoilt);
  w[3].attempt = 2;
  // A sixth noise window that was invalid: counted, not measured from.
  Measurement bad_noise = NoiseWindow(5, 10);
  bad_noise.valid = false;
  w.push_back(bad_noise);
  return w;
}

TEST(StatsCampaign, WorkedExample) {
  const CampaignStats s = AnalyseCampaign(WorkedExample(), "nginx", {"nginx", "hello"});
  EXPECT_EQ(s.baseline, "nginx");
  ASSERT_EQ(s.pairs, std::vector<std::string>{""});

  const NoiseFloors& noise = s.noise.at("");
  EXPECT_EQ(noise.windows, 6);
  EXPECT_EQ(noise.valid, 5);
  ASSERT_TRUE(noise.of(Metric::kRps).has_value());
  EXPECT_DOUBLE_EQ(noise.of(Metric::kRps)->fraction, 0.04);  // (102000 - 98000) / 100000
  // Every noise window cost 10 us per request: a measured floor of 0.
  ASSERT_TRUE(noise.of(Metric::kCpuUsPerRequest).has_value());
  EXPECT_DOUBLE_EQ(noise.of(Metric::kCpuUsPerRequest)->fraction, 0);

  ASSERT_EQ(s.cells.size(), 1u);
  const CellStats& cell = s.cells[0];
  EXPECT_EQ(cell.cell, (CellKey{"", "plaintext", "c64"}));
  ASSERT_EQ(cell.targets.size(), 2u);
  const TargetStats& nginx = cell.targets[0];
  const TargetStats& hello = cell.targets[1];
  EXPECT_EQ(nginx.target, "nginx");
  EXPECT_EQ(hello.target, "hello");
  EXPECT_EQ(hello.windows, 3);  // newest attempts only: the spoilt one is history
  EXPECT_EQ(hello.valid, 3);

  // req/s: nginx 96000 100000 102000 -> median 100000, spread 6000 / 100000 = 6%;
  // hello 99840 105000 108120 -> median 105000, spread 8280 / 105000 = 7.886%.
  EXPECT_DOUBLE_EQ(nginx.of(Metric::kRps).median, 100000);
  EXPECT_DOUBLE_EQ(nginx.of(Metric::kRps).spread_pct, 6);
  EXPECT_DOUBLE_EQ(hello.of(Metric::kRps).median, 105000);
  EXPECT_NEAR(hello.of(Metric::kRps).spread_pct, 8280.0 / 105000 * 100, 1e-9);

  // Ratios 1.05 1.04 1.06: median 1.05, 0.05 > floor 0.04, all above 1 -> ahead, won 3.
  const Comparison& rps = hello.compared(Metric::kRps);
  EXPECT_NEAR(rps.ratio.median, 1.05, 1e-12);
  EXPECT_NEAR(rps.ratio.min, 1.04, 1e-12);
  EXPECT_NEAR(rps.ratio.max, 1.06, 1e-12);
  EXPECT_EQ(rps.rounds_won, 3);
  EXPECT_EQ(rps.verdict, ComparisonVerdict::kBetter);
  EXPECT_EQ(nginx.compared(Metric::kRps).verdict, ComparisonVerdict::kNotApplicable);
  EXPECT_EQ(nginx.compared(Metric::kRps).reason, "the baseline itself");

  // CPU per request: 8/10 = 10/12.5 = 6.4/8 = 0.8, lower is better -> won 3, ahead.
  const Comparison& cpu = hello.compared(Metric::kCpuUsPerRequest);
  EXPECT_NEAR(cpu.ratio.median, 0.8, 1e-12);
  EXPECT_EQ(cpu.rounds_won, 3);
  // Three equal ratios have no spread: the interval is the point 0.8, beyond the margin.
  EXPECT_EQ(cpu.verdict, ComparisonVerdict::kBetter);
  EXPECT_DOUBLE_EQ(cpu.interval.high, 0.8);
  // Requests per CPU-second: 1e6 / us -> nginx 100000 80000 125000 (median 100000),
  // hello 125000 100000 156250 (median 125000); ratios 1.25 each, higher is better -> ahead.
  EXPECT_NEAR(nginx.of(Metric::kRequestsPerCpuSecond).median, 100000, 1e-6);
  EXPECT_NEAR(hello.of(Metric::kRequestsPerCpuSecond).median, 125000, 1e-6);
  EXPECT_NEAR(hello.compared(Metric::kRequestsPerCpuSecond).ratio.median, 1.25, 1e-12);
  EXPECT_EQ(hello.compared(Metric::kRequestsPerCpuSecond).verdict, ComparisonVerdict::kBetter);

  // Per target: nginx start-up 5 7 6 -> 6 ms; hello 20 30 25 -> 25 ms (the spoilt attempt's
  // 1000 ms is not counted); idle RSS hello 8900 9000 9100 -> 9000; peak 12000 12100 12500
  // -> 12100.
  ASSERT_EQ(s.facts.size(), 2u);
  EXPECT_EQ(s.facts[0].target, "nginx");
  EXPECT_DOUBLE_EQ(s.facts[0].startup_ms.median, 6);
  EXPECT_EQ(s.facts[1].target, "hello");
  EXPECT_EQ(s.facts[1].startup_ms.n, 3);
  EXPECT_DOUBLE_EQ(s.facts[1].startup_ms.median, 25);
  EXPECT_DOUBLE_EQ(s.facts[1].first_request_ms.median, 2.5);
  EXPECT_DOUBLE_EQ(s.facts[1].idle_rss_kb.median, 9000);
  EXPECT_DOUBLE_EQ(s.facts[1].rss_peak_kb.median, 12100);
}

// The worked example with a database beside each target: nginx's costs 2 us per request in every
// round, hello's 1, 1.5 and 1.2 us (requests = rps * 10, so services_cpu_s = requests * us / 1e6).
TEST(StatsCampaign, ServicesCpuIsSummarisedAndTheTotalComparedRoundByRound) {
  std::vector<Measurement> w = WorkedExample();
  EXPECT_FALSE(AnalyseCampaign(w, "nginx", {"nginx", "hello"}).services);
  const CampaignStats plain = AnalyseCampaign(w, "nginx", {"nginx", "hello"});
  EXPECT_EQ(plain.cells[0].targets[1].of(Metric::kServiceCpuUsPerRequest).n, 0);
  EXPECT_EQ(plain.cells[0].targets[1].of(Metric::kTotalCpuUsPerRequest).n, 0);
  EXPECT_TRUE(plain.cells[0].targets[1].compared(Metric::kTotalCpuUsPerRequest).rounds.empty());

  for (Measurement& m : w) {
    if (m.noise) continue;
    const double us = m.target == "nginx" ? 2 : m.round == 1 ? 1 : m.round == 2 ? 1.5 : 1.2;
    m.has_services = true;
    m.services_cpu_s = m.requests * us / 1e6;
  }
  const CampaignStats s = AnalyseCampaign(w, "nginx", {"nginx", "hello"});
  EXPECT_TRUE(s.services);
  const TargetStats& nginx = s.cells[0].targets[0];
  const TargetStats& hello = s.cells[0].targets[1];
  EXPECT_NEAR(nginx.of(Metric::kServiceCpuUsPerRequest).median, 2, 1e-9);
  // hello: 1 1.5 1.2 -> median 1.2; totals 8 + 1, 10 + 1.5, 6.4 + 1.2 = 9 11.5 7.6 -> 9.
  EXPECT_NEAR(hello.of(Metric::kServiceCpuUsPerRequest).median, 1.2, 1e-9);
  EXPECT_NEAR(hello.of(Metric::kTotalCpuUsPerRequest).median, 9, 1e-9);
  // nginx's totals: round 1 10 + 2 = 12, round 2 12.5 + 2 = 14.5, round 3 8 + 2 = 10.
  // Ratios 9/12 = 0.75, 11.5/14.5 = 0.7931, 7.6/10 = 0.76; lower is better: won 3.
  const Comparison& total = hello.compared(Metric::kTotalCpuUsPerRequest);
  ASSERT_EQ(total.rounds.size(), 3u);
  EXPECT_NEAR(total.rounds[0].ratio, 0.75, 1e-9);
  EXPECT_NEAR(total.rounds[1].ratio, 11.5 / 14.5, 1e-9);
  EXPECT_NEAR(total.rounds[2].ratio, 0.76, 1e-9);
  EXPECT_EQ(total.rounds_won, 3);
  EXPECT_EQ(total.verdict, ComparisonVerdict::kBetter);
  EXPECT_EQ(nginx.compared(Metric::kTotalCpuUsPerRequest).reason, "the baseline itself");

  // A baseline without services has no total to compare with: no rounds, never a ratio to 0.
  for (Measurement& m : w) {
    if (m.target == "nginx") m.has_services = false;
  }
  const CampaignStats half = AnalyseCampaign(w, "nginx", {"nginx", "hello"});
  EXPECT_TRUE(half.services);
  EXPECT_EQ(half.cells[0].targets[0].of(Metric::kTotalCpuUsPerRequest).n, 0);
  EXPECT_EQ(half.cells[0].targets[0].of(Metric::kTotalCpuUsPerRequest).ignored, 3);
  const Comparison& none = half.cells[0].targets[1].compared(Metric::kTotalCpuUsPerRequest);
  EXPECT_TRUE(none.rounds.empty());
  EXPECT_EQ(none.verdict, ComparisonVerdict::kNotApplicable);
}

TEST(StatsCampaign, FleetPairsAreJudgedApartWithTheirOwnNoiseFloor) {
  // The same ratios on two pairs: srv1 1.03 and 1.02 (103/100, 204/200), srv2 likewise
  // (206/200, 102/100). srv1's noise 95 100 105 gives a floor of 10/100 = 0.10 >= 0.025 ->
  // close; srv2 has no noise windows -> no floor, no straddle -> ahead. Were the pairs mixed,
  // each round would hold two windows per target.
  const std::vector<Measurement> w = {
      Window("nginx", 1, 100, 10, "srv1"), Window("hello", 1, 103, 10, "srv1"),
      Window("nginx", 2, 200, 10, "srv1"), Window("hello", 2, 204, 10, "srv1"),
      Window("nginx", 1, 200, 10, "srv2"), Window("hello", 1, 206, 10, "srv2"),
      Window("nginx", 2, 100, 10, "srv2"), Window("hello", 2, 102, 10, "srv2"),
      NoiseWindow(0, 95, "srv1"),          NoiseWindow(1, 100, "srv1"),
      NoiseWindow(2, 105, "srv1")};
  const CampaignStats s = AnalyseCampaign(w, "nginx", {"nginx", "hello"});
  EXPECT_EQ(s.pairs, (std::vector<std::string>{"srv1", "srv2"}));
  ASSERT_TRUE(s.noise.at("srv1").of(Metric::kRps).has_value());
  EXPECT_DOUBLE_EQ(s.noise.at("srv1").of(Metric::kRps)->fraction, 0.10);
  EXPECT_FALSE(s.noise.at("srv2").of(Metric::kRps).has_value());
  EXPECT_EQ(s.noise.at("srv2").windows, 0);

  ASSERT_EQ(s.cells.size(), 2u);
  EXPECT_EQ(s.cells[0].cell.pair, "srv1");
  EXPECT_EQ(s.cells[1].cell.pair, "srv2");
  const Comparison& one = s.cells[0].targets[1].compared(Metric::kRps);
  const Comparison& two = s.cells[1].targets[1].compared(Metric::kRps);
  EXPECT_NEAR(one.ratio.median, 1.025, 1e-12);  // (1.02 + 1.03) / 2
  EXPECT_NEAR(two.ratio.median, 1.025, 1e-12);
  EXPECT_EQ(one.noise_rule.verdict, ComparisonVerdict::kClose);
  EXPECT_EQ(two.noise_rule.verdict, ComparisonVerdict::kBetter);
  // Two rounds each: t(0.95, 1) = 12.71 makes the interval far wider than the margin, on
  // either pair: inconclusive, each judged from its own rounds.
  EXPECT_EQ(one.verdict, ComparisonVerdict::kInconclusive);
  EXPECT_EQ(two.verdict, ComparisonVerdict::kInconclusive);
  EXPECT_EQ(one.interval.n, 2);
  EXPECT_FALSE(two.noise_floor.has_value());
  // srv1's nginx: 100 and 200 -> median 150; srv2's likewise, from its own windows.
  EXPECT_DOUBLE_EQ(s.cells[0].targets[0].of(Metric::kRps).median, 150);
  EXPECT_EQ(s.cells[0].targets[0].of(Metric::kRps).n, 2);
  ASSERT_EQ(s.facts.size(), 4u);  // (srv1, nginx) (srv1, hello) (srv2, nginx) (srv2, hello)
  EXPECT_EQ(s.facts[2].pair, "srv2");
}

TEST(StatsCampaign, NoComparisonWithoutABaseline) {
  // hello's json cell has no nginx window; a target not in the order comes last, by name.
  Measurement json1 = Window("hello", 1, 100, 10);
  json1.scenario = "json";
  Measurement json2 = Window("hello", 2, 110, 10);
  json2.scenario = "json";
  Measurement skipped = Window("nginx", 1, 0, 0);
  skipped.scenario = "json";
  skipped.valid = false;  // e.g. skipped by the conformance gate
  const std::vector<Measurement> w = {json1, json2, skipped, Window("zeta", 1, 5, 1)};
  const CampaignStats s = AnalyseCampaign(w, "nginx", {"nginx", "hello"});
  ASSERT_EQ(s.cells.size(), 2u);  // json and plaintext
  const CellStats& json = s.cells[0];
  EXPECT_EQ(json.cell.scenario, "json");
  ASSERT_EQ(json.targets.size(), 3u);
  EXPECT_EQ(json.targets[0].target, "nginx");
  EXPECT_EQ(json.targets[0].windows, 1);
  EXPECT_EQ(json.targets[0].valid, 0);
  EXPECT_EQ(json.targets[0].of(Metric::kRps).n, 0);
  EXPECT_EQ(json.targets[2].target, "zeta");
  EXPECT_EQ(json.targets[2].windows, 0);
  const Comparison& c = json.targets[1].compared(Metric::kRps);
  EXPECT_EQ(c.verdict, ComparisonVerdict::kNotApplicable);
  EXPECT_EQ(c.reason, "no valid baseline window in this cell");
  EXPECT_DOUBLE_EQ(json.targets[1].of(Metric::kRps).median, 105);  // (100 + 110) / 2

  const CampaignStats none = AnalyseCampaign(w, "", {});
  EXPECT_EQ(none.cells[0].targets[0].target, "hello");  // no order given: by name
  EXPECT_EQ(none.cells[0].targets[0].compared(Metric::kRps).reason, "no baseline");
}

}  // namespace
}  // namespace benchlab
