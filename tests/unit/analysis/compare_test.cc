#include "analysis/compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace benchlab {
namespace {

using json = nlohmann::json;

// --- builders of small runs of record (only the keys compare reads) --------------------------

// A SUMMARY as the run of record writes it; n = 0 is "no valid value" (nulls).
struct Fig {
  int n = 3;
  double median = 0, min = 0, max = 0, spread_pct = 0;
};
json SummaryJson(const Fig& f) {
  if (f.n == 0) {
    return {{"n", 0},         {"ignored", 0},   {"median", nullptr},
            {"min", nullptr}, {"max", nullptr}, {"spread_pct", nullptr}};
  }
  return {{"n", f.n},     {"ignored", 0}, {"median", f.median},
          {"min", f.min}, {"max", f.max}, {"spread_pct", f.spread_pct}};
}

// Defaults: alike figures on both sides, so a test changes only what it is about.
const Fig kRps{3, 100000, 99000, 101000, 2.0};
const Fig kCpu{3, 10.0, 9.9, 10.1, 2.0};
const Fig kP99{3, 500, 495, 505, 2.0};

json Target(const std::string& name, Fig rps = kRps, Fig cpu = kCpu, Fig p99 = kP99) {
  return {{"target", name},
          {"baseline", false},
          {"windows", 3},
          {"valid", rps.n},
          {"metrics",
           {{"rps", SummaryJson(rps)},
            {"cpu_us_per_request", SummaryJson(cpu)},
            {"p99_us", SummaryJson(p99)}}}};
}

json Cell(const std::string& scenario, const std::string& level, std::vector<json> targets,
          const std::string& pair = "") {
  return {{"pair", pair}, {"scenario", scenario}, {"load_level", level}, {"targets", targets}};
}

// Noise floors by metric key ("rps", "cpu_us_per_request", "p99_us"); absent keys are null.
using Floors = std::map<std::string, double>;
json NoiseFloor(const Floors& floors, const std::string& pair = "") {
  json metrics = json::object();
  for (const char* key : {"rps", "cpu_us_per_request", "p99_us"}) {
    auto it = floors.find(key);
    metrics[key] = it == floors.end()
                       ? json()
                       : json{{"fraction", it->second}, {"values", SummaryJson({5, 1, 1, 1, 0})}};
  }
  return {{"pair", pair}, {"windows", 5}, {"valid", 5}, {"metrics", metrics}};
}

json Record(const std::string& name, std::vector<json> cells, std::vector<json> noise = {}) {
  return {{"format", "benchlab-run-of-record"},
          {"version", 1},
          {"generated_by", "benchlab 0.1.0"},
          {"campaign", {{"name", name}, {"state", "done"}, {"created_at", "2026-11-30T07:35:22Z"}}},
          {"targets", json::array()},
          {"hosts", json::array()},
          {"noise_floor", noise},
          {"cells", cells}};
}

// A matrix window of cell hello · c8 with its newest attempt (the keys RoundsOf reads).
json Window(const std::string& target, int round, double rps, double cpu = 10, double p99 = 500,
            const std::string& verdict = "valid") {
  return {{"pair", ""},
          {"target", target},
          {"scenario", "hello"},
          {"load_level", "c8"},
          {"round", round},
          {"noise", false},
          {"attempts",
           {{{"attempt", 1},
             {"newest", true},
             {"verdict", verdict},
             {"rps", rps},
             {"cpu_us_per_request", cpu},
             {"p99_us", p99}}}}};
}

// Windows of `target` for rounds 1, 2, ...: req/s 100,000 · e^x for each log offset x, CPU and
// p99 at cpu · e^y and 500 µs.
std::vector<json> RpsRounds(const std::string& target, const std::vector<double>& rps_logs,
                            const std::vector<double>& cpu_logs = {}) {
  std::vector<json> out;
  for (size_t i = 0; i < rps_logs.size(); ++i) {
    const double cpu = i < cpu_logs.size() ? 10 * std::exp(cpu_logs[i]) : 10;
    out.push_back(Window(target, static_cast<int>(i) + 1, 100000 * std::exp(rps_logs[i]), cpu));
  }
  return out;
}

// A record of cell hello · c8 with these windows (its SUMMARYs the defaults: the intervals come
// from the windows alone), its baseline, and its [stats].
json WindowRecord(const std::string& name, std::vector<json> windows,
                  const std::string& baseline = "", std::optional<StatsRule> stats = {}) {
  std::vector<json> targets;
  for (const json& w : windows) {
    const std::string t = w["target"];
    if (std::none_of(targets.begin(), targets.end(),
                     [&](const json& x) { return x["target"] == t; })) {
      targets.push_back(Target(t));
    }
  }
  json r = Record(name, {Cell("hello", "c8", targets)});
  r["windows"] = windows;
  r["campaign"]["baseline"] = baseline.empty() ? json() : json(baseline);
  if (stats) r["stats"] = {{"confidence", stats->confidence}, {"margin", stats->margin}};
  return r;
}

RecordComparison CompareWindows(std::vector<json> a, std::vector<json> b, CompareRule rule = {}) {
  return CompareRecords(WindowRecord("a", std::move(a)), WindowRecord("b", std::move(b)), "a.json",
                        "b.json", rule);
}

// One cell with one target on each side, the rest default.
RecordComparison CompareOne(Fig a_rps, Fig b_rps, Floors a_floor = {}, Floors b_floor = {},
                            Fig a_cpu = kCpu, Fig b_cpu = kCpu, Fig a_p99 = kP99,
                            Fig b_p99 = kP99) {
  std::vector<json> a_noise, b_noise;
  if (!a_floor.empty()) a_noise.push_back(NoiseFloor(a_floor));
  if (!b_floor.empty()) b_noise.push_back(NoiseFloor(b_floor));
  json a = Record("a", {Cell("hello", "c8", {Target("nginx", a_rps, a_cpu, a_p99)})}, a_noise);
  json b = Record("b", {Cell("hello", "c8", {Target("nginx", b_rps, b_cpu, b_p99)})}, b_noise);
  return CompareRecords(a, b, "a.json", "b.json");
}

const MetricDelta& Rps(const RecordComparison& c) { return c.cells.at(0).of(Metric::kRps); }

// --- the noise-floor rule (context beside the interval's verdict) ----------------------------

TEST(CompareTest, DeltaIsBOverAMinusOneOfTheMedians) {
  auto c = CompareOne({3, 100000, 99000, 101000, 2}, {3, 94000, 93000, 95000, 2.1}, {{"rps", 0.02}},
                      {{"rps", 0.03}});
  ASSERT_EQ(c.cells.size(), 1u);
  EXPECT_EQ(c.cells[0].presence, Presence::kBoth);
  EXPECT_NEAR(Rps(c).delta, -0.06, 1e-12);  // 94,000 / 100,000 - 1
  EXPECT_DOUBLE_EQ(Rps(c).a.median, 100000);
  EXPECT_DOUBLE_EQ(Rps(c).b.max, 95000);
}

TEST(CompareTest, BeyondBothNoiseFloorsAndApartIsWorse) {
  // |-6%| > 3% (B's floor, the larger of 2% and 3%); ranges 99k-101k and 93k-95k are apart.
  auto c = CompareOne({3, 100000, 99000, 101000, 2}, {3, 94000, 93000, 95000, 2.1}, {{"rps", 0.02}},
                      {{"rps", 0.03}});
  EXPECT_EQ(Rps(c).noise_rule.verdict, ComparisonVerdict::kWorse);
  EXPECT_DOUBLE_EQ(Rps(c).noise_rule.threshold, 0.03);
  EXPECT_EQ(Rps(c).noise_rule.threshold_from, "noise floor of B");
  EXPECT_EQ(Rps(c).noise_rule.reason,
            "Δ -6.0% beyond 3.0% (noise floor of B), ranges apart (A 99,000 to 101,000, B "
            "93,000 to 95,000)");
}

TEST(CompareTest, HigherReqPerSecondBeyondTheFloorIsBetter) {
  auto c = CompareOne({3, 100000, 99000, 101000, 2}, {3, 106000, 105000, 107000, 1.9},
                      {{"rps", 0.02}}, {{"rps", 0.02}});
  EXPECT_EQ(Rps(c).noise_rule.verdict, ComparisonVerdict::kBetter);
  EXPECT_EQ(Rps(c).noise_rule.threshold_from, "noise floors of A and B");
}

TEST(CompareTest, WithinTheLargerNoiseFloorIsClose) {
  // The same -6% is within B's floor of 7%, though beyond A's 2%: the larger floor rules.
  auto c = CompareOne({3, 100000, 99000, 101000, 2}, {3, 94000, 93000, 95000, 2.1}, {{"rps", 0.02}},
                      {{"rps", 0.07}});
  EXPECT_EQ(Rps(c).noise_rule.verdict, ComparisonVerdict::kClose);
  EXPECT_DOUBLE_EQ(Rps(c).noise_rule.threshold, 0.07);
  EXPECT_EQ(Rps(c).noise_rule.reason, "|Δ| 6.0% within 7.0% (noise floor of B)");
  // And A's floor counts as much as B's.
  auto d = CompareOne({3, 100000, 99000, 101000, 2}, {3, 94000, 93000, 95000, 2.1}, {{"rps", 0.07}},
                      {{"rps", 0.02}});
  EXPECT_EQ(Rps(d).noise_rule.verdict, ComparisonVerdict::kClose);
  EXPECT_EQ(Rps(d).noise_rule.threshold_from, "noise floor of A");
}

TEST(CompareTest, OnlyOneSideWithANoiseFloorStillJudgesAgainstIt) {
  auto c = CompareOne({3, 100000, 99000, 101000, 2}, {3, 94000, 93000, 95000, 2.1},
                      {{"rps", 0.065}}, {});
  EXPECT_EQ(Rps(c).noise_rule.verdict, ComparisonVerdict::kClose);
  EXPECT_DOUBLE_EQ(Rps(c).noise_rule.threshold, 0.065);
}

TEST(CompareTest, DeltaEqualToTheFloorIsClose) {
  // 104,000 / 100,000 - 1 is a hair above 0.04 in binary floating point.
  auto c = CompareOne({3, 100000, 99000, 101000, 2}, {3, 104000, 103000, 105000, 1.9},
                      {{"rps", 0.04}}, {{"rps", 0.04}});
  EXPECT_EQ(Rps(c).noise_rule.verdict, ComparisonVerdict::kClose);
}

TEST(CompareTest, OverlappingRangesAreCloseBeyondTheFloor) {
  // -6% is beyond both 1% floors, but B's best round (97,000) beat A's worst (96,000).
  auto c = CompareOne({3, 100000, 96000, 104000, 8}, {3, 94000, 93000, 97000, 4.3}, {{"rps", 0.01}},
                      {{"rps", 0.01}});
  EXPECT_EQ(Rps(c).noise_rule.verdict, ComparisonVerdict::kClose);
  EXPECT_EQ(Rps(c).noise_rule.reason, "ranges overlap (A 96,000 to 104,000, B 93,000 to 97,000)");
  // Ranges that only touch still overlap.
  auto d = CompareOne({3, 100000, 96000, 104000, 8}, {3, 94000, 93000, 96000, 3.2}, {{"rps", 0.01}},
                      {{"rps", 0.01}});
  EXPECT_EQ(Rps(d).noise_rule.verdict, ComparisonVerdict::kClose);
  auto e = CompareOne({3, 100000, 96000, 104000, 8}, {3, 94000, 93000, 95999, 3.2}, {{"rps", 0.01}},
                      {{"rps", 0.01}});
  EXPECT_EQ(Rps(e).noise_rule.verdict, ComparisonVerdict::kWorse);
}

TEST(CompareTest, WithoutNoiseFloorsTheLargerSpreadIsTheThreshold) {
  // A 99,000-107,000 around 100,000: spread 8%; B 93,500-95,380: 2%. -6% is within 8%.
  auto c = CompareOne({3, 100000, 99000, 107000, 8}, {3, 94000, 93500, 95380, 2});
  EXPECT_EQ(Rps(c).noise_rule.verdict, ComparisonVerdict::kClose);
  EXPECT_DOUBLE_EQ(Rps(c).noise_rule.threshold, 0.08);
  EXPECT_EQ(Rps(c).noise_rule.threshold_from, "spread of A");
  EXPECT_EQ(Rps(c).noise_rule.reason, "|Δ| 6.0% within 8.0% (spread of A)");
  // With A's spread 5% (99,000-104,000) the same -6% is beyond it, and the ranges are apart.
  auto d = CompareOne({3, 100000, 99000, 104000, 5}, {3, 94000, 93500, 95380, 2});
  EXPECT_EQ(Rps(d).noise_rule.verdict, ComparisonVerdict::kWorse);
  EXPECT_EQ(Rps(d).noise_rule.threshold_from, "spread of A");
}

TEST(CompareTest, AFloorOfOneMetricDoesNotServeAnother) {
  // A req/s floor of 10% leaves CPU without a floor: CPU falls back to the spreads (2%).
  auto c = CompareOne(kRps, kRps, {{"rps", 0.10}}, {{"rps", 0.10}}, {3, 10, 9.9, 10.1, 2},
                      {3, 11, 10.9, 11.1, 1.8});
  const MetricDelta& cpu = c.cells[0].of(Metric::kCpuUsPerRequest);
  EXPECT_EQ(cpu.noise_rule.threshold_from, "spread of A");
  EXPECT_EQ(cpu.noise_rule.verdict, ComparisonVerdict::kWorse);
}

TEST(CompareTest, OneRoundEachWithoutAFloorIsNotApplicable) {
  auto c = CompareOne({1, 100000, 100000, 100000, 0}, {1, 80000, 80000, 80000, 0});
  EXPECT_EQ(Rps(c).noise_rule.verdict, ComparisonVerdict::kNotApplicable);
  EXPECT_NEAR(Rps(c).delta, -0.2, 1e-12);  // the delta is still shown
  // A noise floor gives one round something to be judged against.
  auto d = CompareOne({1, 100000, 100000, 100000, 0}, {1, 80000, 80000, 80000, 0}, {{"rps", 0.05}});
  EXPECT_EQ(Rps(d).noise_rule.verdict, ComparisonVerdict::kWorse);
}

TEST(CompareTest, NoValidValueIsNotApplicable) {
  auto c = CompareOne(kRps, Fig{0});
  EXPECT_EQ(Rps(c).noise_rule.verdict, ComparisonVerdict::kNotApplicable);
  EXPECT_TRUE(std::isnan(Rps(c).delta));
  EXPECT_EQ(Rps(c).noise_rule.reason, "no valid value in B");
  EXPECT_EQ(Rps(CompareOne(Fig{0}, kRps)).noise_rule.reason, "no valid value in A");
  EXPECT_EQ(Rps(CompareOne(Fig{0}, Fig{0})).noise_rule.reason, "no valid value in A or B");
  EXPECT_EQ(Rps(CompareOne({3, 0, 0, 0, 0}, kRps)).noise_rule.verdict,
            ComparisonVerdict::kNotApplicable);
}

TEST(CompareTest, LowerCpuAndP99AreBetterHigherAreWorse) {
  // CPU 10 -> 8 µs/req (-20%), p99 500 -> 600 µs (+20%), both beyond their 2% spreads.
  auto c = CompareOne(kRps, kRps, {}, {}, {3, 10, 9.9, 10.1, 2}, {3, 8, 7.9, 8.1, 2.5},
                      {3, 500, 495, 505, 2}, {3, 600, 594, 606, 2});
  EXPECT_EQ(c.cells[0].of(Metric::kCpuUsPerRequest).noise_rule.verdict, ComparisonVerdict::kBetter);
  EXPECT_NEAR(c.cells[0].of(Metric::kCpuUsPerRequest).delta, -0.2, 1e-12);
  EXPECT_EQ(c.cells[0].of(Metric::kP99Us).noise_rule.verdict, ComparisonVerdict::kWorse);
  EXPECT_NEAR(c.cells[0].of(Metric::kP99Us).delta, 0.2, 1e-12);
  auto d = CompareOne(kRps, kRps, {}, {}, {3, 8, 7.9, 8.1, 2.5}, {3, 10, 9.9, 10.1, 2},
                      {3, 600, 594, 606, 2}, {3, 500, 495, 505, 2});
  EXPECT_EQ(d.cells[0].of(Metric::kCpuUsPerRequest).noise_rule.verdict, ComparisonVerdict::kWorse);
  EXPECT_EQ(d.cells[0].of(Metric::kP99Us).noise_rule.verdict, ComparisonVerdict::kBetter);
}

// --- matching cells --------------------------------------------------------------------------

TEST(CompareTest, RowsOnOneSideAreListedNotDropped) {
  json a = Record("a", {Cell("hello", "c8", {Target("nginx"), Target("caddy")}),
                        Cell("json", "c8", {Target("nginx")})});
  json b = Record("b", {Cell("hello", "c8", {Target("nginx"), Target("h2o")}),
                        Cell("hello", "c32", {Target("nginx")})});
  auto c = CompareRecords(a, b, "a.json", "b.json");
  ASSERT_EQ(c.cells.size(), 5u);
  auto row = [&](size_t i) {
    return c.cells[i].scenario + "/" + c.cells[i].load_level + "/" + c.cells[i].target;
  };
  EXPECT_EQ(row(0), "hello/c8/nginx");
  EXPECT_EQ(c.cells[0].presence, Presence::kBoth);
  EXPECT_EQ(row(1), "hello/c8/caddy");
  EXPECT_EQ(c.cells[1].presence, Presence::kOnlyA);
  EXPECT_EQ(row(2), "hello/c8/h2o");  // B's addition stays with its cell
  EXPECT_EQ(c.cells[2].presence, Presence::kOnlyB);
  EXPECT_EQ(row(3), "json/c8/nginx");
  EXPECT_EQ(c.cells[3].presence, Presence::kOnlyA);
  EXPECT_EQ(row(4), "hello/c32/nginx");
  EXPECT_EQ(c.cells[4].presence, Presence::kOnlyB);
  EXPECT_EQ(c.cells[1].of(Metric::kRps).verdict, ComparisonVerdict::kNotApplicable);
  EXPECT_DOUBLE_EQ(c.cells[1].of(Metric::kRps).a.median, 100000);

  const std::string text = FormatCompareText(c, {});
  EXPECT_NE(text.find("only in A"), std::string::npos) << text;
  EXPECT_NE(text.find("only in B"), std::string::npos) << text;
  EXPECT_NE(text.find("Summary: 1 in both, 2 only in A, 2 only in B."), std::string::npos) << text;
}

TEST(CompareTest, NoiseFloorsAreTakenFromTheCellsPair) {
  json a = Record("a",
                  {Cell("hello", "c8", {Target("nginx", {3, 100000, 99000, 101000, 2})}, "srv1"),
                   Cell("hello", "c8", {Target("nginx", {3, 100000, 99000, 101000, 2})}, "srv2")},
                  {NoiseFloor({{"rps", 0.10}}, "srv1"), NoiseFloor({}, "srv2")});
  json b = Record("b",
                  {Cell("hello", "c8", {Target("nginx", {3, 94000, 93000, 95000, 2.1})}, "srv1"),
                   Cell("hello", "c8", {Target("nginx", {3, 94000, 93000, 95000, 2.1})}, "srv2")},
                  {NoiseFloor({}, "srv1"), NoiseFloor({}, "srv2")});
  auto c = CompareRecords(a, b, "a.json", "b.json");
  ASSERT_EQ(c.cells.size(), 2u);
  EXPECT_EQ(c.cells[0].pair, "srv1");
  EXPECT_EQ(c.cells[0].of(Metric::kRps).noise_rule.verdict,
            ComparisonVerdict::kClose);  // 6% <= 10%
  EXPECT_EQ(c.cells[1].pair, "srv2");
  EXPECT_EQ(c.cells[1].of(Metric::kRps).noise_rule.verdict,
            ComparisonVerdict::kWorse);  // spreads 2.1%
}

// --- the Welch interval -----------------------------------------------------------------------

// t quantiles at fractional degrees of freedom are Student's (boost::math), checked against an
// independent computation (the regularised incomplete beta function, 30 digits).

TEST(CompareWelch, EqualSpreadsAndSizes) {
  // ln A = L + {-0.01, 0, 0.01}, ln B = L + {0.04, 0.05, 0.06}: difference of means 0.05.
  // s² = 0.0001 on each side, v = s² / 3 = 3.3333e-5; se = √(6.6667e-5) = 0.0081650.
  // df = (6.6667e-5)² / (2 · (3.3333e-5)² / 2) = 4; t(0.95, 4) = 2.776445; half 0.022670.
  // exp(0.05) = 1.051271, exp(0.05 - 0.022670) = 1.027707, exp(0.05 + 0.022670) = 1.075375.
  const double L = std::log(100000.0);
  auto vals = [&](std::vector<double> logs) {
    for (double& x : logs) x = std::exp(L + x);
    return logs;
  };
  const UnpairedInterval iv =
      WelchLogInterval(vals({-0.01, 0, 0.01}), vals({0.04, 0.05, 0.06}), 0.95);
  EXPECT_TRUE(iv.ok());
  EXPECT_EQ(iv.n_a, 3);
  EXPECT_EQ(iv.n_b, 3);
  EXPECT_EQ(iv.ratio.n, 6);
  EXPECT_NEAR(iv.df, 4, 1e-9);
  EXPECT_NEAR(iv.se, 0.0081650, 1e-7);
  EXPECT_DOUBLE_EQ(iv.ratio.level, 0.95);
  EXPECT_NEAR(iv.ratio.log_mean, 0.05, 1e-12);
  EXPECT_NEAR(iv.ratio.estimate, 1.051271, 1e-6);
  EXPECT_NEAR(iv.ratio.low, 1.027707, 1e-6);
  EXPECT_NEAR(iv.ratio.high, 1.075375, 1e-6);
  // At 99%: t(0.99, 4) = 4.604095, half 0.037592: 1.012485 to 1.091543.
  const UnpairedInterval wide =
      WelchLogInterval(vals({-0.01, 0, 0.01}), vals({0.04, 0.05, 0.06}), 0.99);
  EXPECT_NEAR(wide.ratio.low, 1.012485, 1e-6);
  EXPECT_NEAR(wide.ratio.high, 1.091543, 1e-6);
}

TEST(CompareWelch, UnequalSpreadsGiveFractionalDegreesOfFreedom) {
  // ln A = {-0.01, 0, 0.01} (s² 0.0001), ln B = {0.04, 0.06, 0.08} (s² 0.0004); difference 0.06.
  // v_a = 3.3333e-5, v_b = 1.3333e-4; se = √(1.6667e-4) = 0.012910.
  // df = (1.6667e-4)² / ((3.3333e-5)² / 2 + (1.3333e-4)² / 2) = 2.777778e-8 / 9.444444e-9
  //    = 2.941176 (the pooled t would say 4); t(0.95, 2.941176) = 3.218759; half 0.041554.
  // exp(0.06) = 1.061837, exp(0.018446) = 1.018617, exp(0.101554) = 1.106890.
  const UnpairedInterval iv = WelchLogInterval(
      {std::exp(-0.01), 1, std::exp(0.01)}, {std::exp(0.04), std::exp(0.06), std::exp(0.08)}, 0.95);
  EXPECT_NEAR(iv.df, 2.941176, 1e-6);
  EXPECT_NEAR(iv.se, 0.012910, 1e-6);
  EXPECT_NEAR(iv.ratio.estimate, 1.061837, 1e-6);
  EXPECT_NEAR(iv.ratio.low, 1.018617, 1e-6);
  EXPECT_NEAR(iv.ratio.high, 1.106890, 1e-6);
}

TEST(CompareWelch, UnequalSizes) {
  // ln A = {-0.02, -0.01, 0, 0.01, 0.02} (s² 0.00025, v 5e-5), ln B = {0.09, 0.10, 0.11}
  // (s² 0.0001, v 3.3333e-5); se = √(8.3333e-5) = 0.0091287.
  // df = (8.3333e-5)² / ((5e-5)² / 4 + (3.3333e-5)² / 2) = 6.944444e-9 / 1.180556e-9 = 5.882353;
  // t(0.95, 5.882353) = 2.458824; half 0.022446: exp(0.1) = 1.105171, 1.080641 to 1.130258.
  std::vector<double> a, b;
  for (double x : {-0.02, -0.01, 0.0, 0.01, 0.02}) a.push_back(std::exp(x));
  for (double x : {0.09, 0.10, 0.11}) b.push_back(std::exp(x));
  const UnpairedInterval iv = WelchLogInterval(a, b, 0.95);
  EXPECT_EQ(iv.n_a, 5);
  EXPECT_EQ(iv.n_b, 3);
  EXPECT_NEAR(iv.df, 5.882353, 1e-6);
  EXPECT_NEAR(iv.ratio.low, 1.080641, 1e-6);
  EXPECT_NEAR(iv.ratio.high, 1.130258, 1e-6);
}

TEST(CompareWelch, IsSymmetricUnderSwappingAAndB) {
  const std::vector<double> a{1.0, 1.02, 0.97, 1.01}, b{1.1, 1.05, 1.12};
  const UnpairedInterval ab = WelchLogInterval(a, b, 0.95), ba = WelchLogInterval(b, a, 0.95);
  EXPECT_NEAR(ba.ratio.low, 1 / ab.ratio.high, 1e-12);
  EXPECT_NEAR(ba.ratio.high, 1 / ab.ratio.low, 1e-12);
  EXPECT_NEAR(ba.df, ab.df, 1e-12);
}

TEST(CompareWelch, FewerThanTwoValuesOnASideHasNoInterval) {
  // 0, -5, NaN and +inf have no logarithm: A keeps one value.
  const UnpairedInterval iv =
      WelchLogInterval({100, 0, -5, std::nan(""), HUGE_VAL}, {90, 91, 92}, 0.95);
  EXPECT_EQ(iv.n_a, 1);
  EXPECT_EQ(iv.n_b, 3);
  EXPECT_FALSE(iv.ok());
  EXPECT_TRUE(std::isnan(iv.ratio.low));
  EXPECT_TRUE(std::isnan(iv.df));
  EXPECT_EQ(JudgeUnpaired(iv, Metric::kRps, 0.02), ComparisonVerdict::kNotApplicable);
}

TEST(CompareWelch, NoSpreadOnEitherSideIsTheEstimateAlone) {
  // ln B - ln A = ln 0.5 in every round and no spread: se 0, df 3 + 3 - 2 = 4, [0.5, 0.5].
  const UnpairedInterval iv = WelchLogInterval({100, 100, 100}, {50, 50, 50}, 0.95);
  EXPECT_DOUBLE_EQ(iv.se, 0);
  EXPECT_DOUBLE_EQ(iv.df, 4);
  EXPECT_NEAR(iv.ratio.low, 0.5, 1e-12);
  EXPECT_NEAR(iv.ratio.high, 0.5, 1e-12);
  EXPECT_EQ(JudgeUnpaired(iv, Metric::kRps, 0.02), ComparisonVerdict::kWorse);
}

// --- verdicts from the interval -----------------------------------------------------------------

TEST(CompareVerdict, EachVerdictFromTheWindows) {
  // A's req/s rounds at 100,000 · e^{-0.01, 0, 0.01}; margin 2%: 0.980 to 1.020.
  const std::vector<double> a{-0.01, 0, 0.01};
  // B at e^{0.04, 0.05, 0.06}: 1.027707 to 1.075375 (CompareWelch.EqualSpreadsAndSizes), all
  // above 1.02: better.
  auto better = CompareWindows(RpsRounds("nginx", a), RpsRounds("nginx", {0.04, 0.05, 0.06}));
  EXPECT_EQ(Rps(better).verdict, ComparisonVerdict::kBetter);
  EXPECT_EQ(Rps(better).basis, IntervalBasis::kAbsolute);
  EXPECT_EQ(Rps(better).reason,
            "B / A 1.051 (95% CI 1.028 to 1.075; Welch, 3 and 3 rounds, df 4.0) lies beyond the "
            "margin ±2%");
  // B at e^{-0.06, -0.05, -0.04}: exp(-0.05 ± 0.022670) = 0.929908 to 0.973040, below 0.98.
  auto worse = CompareWindows(RpsRounds("nginx", a), RpsRounds("nginx", {-0.06, -0.05, -0.04}));
  EXPECT_EQ(Rps(worse).verdict, ComparisonVerdict::kWorse);
  EXPECT_NEAR(Rps(worse).interval.ratio.high, 0.973040, 1e-6);
  // Both at e^{-0.001, 0, 0.001}: se = √(2 · 1e-6 / 3) = 8.165e-4, half 2.776445 · 8.165e-4 =
  // 0.002267: 0.997736 to 1.002270, inside the margin: close.
  auto close = CompareWindows(RpsRounds("nginx", {-0.001, 0, 0.001}),
                              RpsRounds("nginx", {-0.001, 0, 0.001}));
  EXPECT_EQ(Rps(close).verdict, ComparisonVerdict::kClose);
  EXPECT_EQ(Rps(close).reason,
            "B / A 1.000 (95% CI 0.998 to 1.002; Welch, 3 and 3 rounds, df 4.0) lies inside the "
            "margin 0.980 to 1.020");
  // B at e^{0.04, 0.06, 0.08}: 1.018617 to 1.106890 reaches across 1.02: inconclusive.
  auto unsure = CompareWindows(RpsRounds("nginx", a), RpsRounds("nginx", {0.04, 0.06, 0.08}));
  EXPECT_EQ(Rps(unsure).verdict, ComparisonVerdict::kInconclusive);
  EXPECT_EQ(Rps(unsure).reason,
            "B / A 1.062 (95% CI 1.019 to 1.107; Welch, 3 and 3 rounds, df 2.9) reaches across "
            "the margin ±2%");
  // One round in B: n/a, whatever the medians.
  auto one = CompareWindows(RpsRounds("nginx", a), RpsRounds("nginx", {0.5}));
  EXPECT_EQ(Rps(one).verdict, ComparisonVerdict::kNotApplicable);
  EXPECT_EQ(Rps(one).reason, "fewer than 2 rounds with a value in B (1)");
}

TEST(CompareVerdict, LowerCpuIsBetterHigherIsWorse) {
  // CPU µs/request at 10 · e^{-0.01, 0, 0.01} in A and 10 · e^{0.04, 0.05, 0.06} in B: the same
  // interval 1.027707 to 1.075375, but more CPU per request is worse.
  const std::vector<double> flat{0, 0, 0};
  auto up = CompareWindows(RpsRounds("nginx", flat, {-0.01, 0, 0.01}),
                           RpsRounds("nginx", flat, {0.04, 0.05, 0.06}));
  EXPECT_EQ(up.cells[0].of(Metric::kCpuUsPerRequest).verdict, ComparisonVerdict::kWorse);
  auto down = CompareWindows(RpsRounds("nginx", flat, {0.04, 0.05, 0.06}),
                             RpsRounds("nginx", flat, {-0.01, 0, 0.01}));
  EXPECT_EQ(down.cells[0].of(Metric::kCpuUsPerRequest).verdict, ComparisonVerdict::kBetter);
}

TEST(CompareVerdict, OnlyTheNewestValidMatrixAttemptCounts) {
  // A: rounds 1-3 at e^{-0.01, 0, 0.01}, plus an invalid round 4 at half, a noise window at
  // twice, and round 1's newer attempt replacing an old one at a tenth.
  std::vector<json> a = RpsRounds("nginx", {-0.01, 0, 0.01});
  a.push_back(Window("nginx", 4, 50000, 10, 500, "invalid"));
  json noise = Window("nginx", 0, 200000);
  noise["noise"] = true;
  a.push_back(noise);
  a[0]["attempts"] = json::array({{{"attempt", 1},
                                   {"newest", false},
                                   {"verdict", "valid"},
                                   {"rps", 10000},
                                   {"cpu_us_per_request", 10},
                                   {"p99_us", 500}},
                                  a[0]["attempts"][0]});
  auto c = CompareWindows(a, RpsRounds("nginx", {0.04, 0.05, 0.06}));
  EXPECT_EQ(Rps(c).interval.n_a, 3);
  EXPECT_NEAR(Rps(c).interval.ratio.low, 1.027707, 1e-6);  // as if only rounds 1-3 existed
  EXPECT_EQ(Rps(c).verdict, ComparisonVerdict::kBetter);
}

TEST(CompareVerdict, ConfidenceAndMarginComeFromBThenTheFlags) {
  // B's interval 1.027707 to 1.075375 at 95%: better at a 2% margin.
  const std::vector<json> a = RpsRounds("nginx", {-0.01, 0, 0.01});
  const std::vector<json> b = RpsRounds("nginx", {0.04, 0.05, 0.06});
  // B's [stats] confidence 0.99: 1.012485 to 1.091543, reaching across 1.02: inconclusive.
  auto from_b = CompareRecords(WindowRecord("a", a),
                               WindowRecord("b", b, "", StatsRule{0.99, 0.02}), "a.json", "b.json");
  EXPECT_DOUBLE_EQ(from_b.rule.confidence, 0.99);
  EXPECT_EQ(Rps(from_b).verdict, ComparisonVerdict::kInconclusive);
  // A's [stats] are not read: without B's, 0.95 and 0.02.
  auto from_a = CompareRecords(WindowRecord("a", a, "", StatsRule{0.99, 0.10}),
                               WindowRecord("b", b), "a.json", "b.json");
  EXPECT_DOUBLE_EQ(from_a.rule.confidence, 0.95);
  EXPECT_DOUBLE_EQ(from_a.rule.margin, 0.02);
  EXPECT_EQ(Rps(from_a).verdict, ComparisonVerdict::kBetter);
  // --confidence 0.95 overrides B's 0.99; --margin 0.03 puts 1.027707 inside 1.03: inconclusive.
  CompareRule rule;
  rule.confidence = 0.95;
  rule.margin = 0.03;
  auto flags = CompareRecords(WindowRecord("a", a), WindowRecord("b", b, "", StatsRule{0.99, 0.02}),
                              "a.json", "b.json", rule);
  EXPECT_EQ(Rps(flags).verdict, ComparisonVerdict::kInconclusive);
  // --margin 0.1: 1.027707 to 1.075375 lies inside 0.9 to 1.1: close.
  rule.margin = 0.1;
  auto wide = CompareRecords(WindowRecord("a", a), WindowRecord("b", b), "a.json", "b.json", rule);
  EXPECT_EQ(Rps(wide).verdict, ComparisonVerdict::kClose);
}

// A run where the machine moved: nginx (the baseline) at 100,000 · {1, 0.9, 1.1} per round, and
// hello at nginx's figure · e^{-0.001, 0, 0.001} in the same round; B the same 20% faster.
std::vector<json> DriftingRun(double speed) {
  std::vector<json> w;
  const double machine[] = {1.0, 0.9, 1.1};
  const double hello[] = {-0.001, 0, 0.001};
  for (int r = 0; r < 3; ++r) {
    w.push_back(Window("nginx", r + 1, 100000 * machine[r] * speed));
    w.push_back(Window("hello", r + 1, 100000 * machine[r] * speed * std::exp(hello[r])));
  }
  return w;
}

TEST(CompareVerdict, TheBaselineBasisCancelsWhatMovedBothTargets) {
  json a = WindowRecord("a", DriftingRun(1.0), "nginx");
  json b = WindowRecord("b", DriftingRun(1.2), "nginx");
  auto c = CompareRecords(a, b, "a.json", "b.json");  // --basis auto, a shared baseline
  EXPECT_EQ(c.baseline, "nginx");
  ASSERT_EQ(c.cells.size(), 2u);
  const CellDelta& hello = c.cells[1];
  ASSERT_EQ(hello.target, "hello");
  // hello / nginx per round: e^{-0.001, 0, 0.001} in both runs: difference 0, se 8.165e-4,
  // df 4, 0.997736 to 1.002270: close, though hello's own req/s rose by 20%.
  EXPECT_EQ(hello.of(Metric::kRps).basis, IntervalBasis::kBaseline);
  EXPECT_NEAR(hello.of(Metric::kRps).interval.ratio.low, 0.997736, 1e-6);
  EXPECT_EQ(hello.of(Metric::kRps).verdict, ComparisonVerdict::kClose);
  EXPECT_EQ(hello.of(Metric::kRps).reason.rfind("ratio to nginx B / A 1.000 (95% CI", 0), 0u)
      << hello.of(Metric::kRps).reason;
  // The baseline's own row stays absolute: its rounds spread over ±10%, so 1.2 is uncertain.
  const MetricDelta& nginx = c.cells[0].of(Metric::kRps);
  EXPECT_EQ(nginx.basis, IntervalBasis::kAbsolute);
  EXPECT_NEAR(nginx.interval.ratio.estimate, 1.2, 1e-9);
  EXPECT_EQ(nginx.verdict, ComparisonVerdict::kInconclusive);

  // --basis absolute: hello's own figures, as spread as the machine: inconclusive.
  CompareRule absolute;
  absolute.basis = BasisChoice::kAbsolute;
  auto d = CompareRecords(a, b, "a.json", "b.json", absolute);
  EXPECT_EQ(d.baseline, "");
  EXPECT_EQ(d.cells[1].of(Metric::kRps).basis, IntervalBasis::kAbsolute);
  EXPECT_EQ(d.cells[1].of(Metric::kRps).verdict, ComparisonVerdict::kInconclusive);

  // Different baselines: every row absolute under auto.
  json other = WindowRecord("b", DriftingRun(1.2), "hello");
  EXPECT_EQ(SharedBaseline(a, other), "");
  EXPECT_EQ(CompareRecords(a, other, "a.json", "b.json").cells[1].of(Metric::kRps).basis,
            IntervalBasis::kAbsolute);
}

TEST(CompareVerdict, TheNoiseRuleStaysAsContext) {
  // The noise rule calls -6% beyond both 1% floors with ranges apart worse; the windows' interval
  // (none here: no windows) says n/a, and the verdict is the interval's.
  auto c = CompareOne({3, 100000, 99500, 100500, 1}, {3, 94000, 93500, 94500, 1}, {{"rps", 0.01}},
                      {{"rps", 0.01}});
  EXPECT_EQ(Rps(c).noise_rule.verdict, ComparisonVerdict::kWorse);
  EXPECT_EQ(Rps(c).verdict, ComparisonVerdict::kNotApplicable);
  EXPECT_EQ(Rps(c).reason, "fewer than 2 rounds with a value in A (0) and in B (0)");
  EXPECT_NEAR(Rps(c).delta, -0.06, 1e-12);
}

// --- --fail-on-regression --------------------------------------------------------------------

// A at e^{-0.01, 0, 0.01}, B the same shifted by ln(1 - worse_by): the interval is
// (1 - worse_by) · e^{±0.022670} (se 0.0081650, df 4).
RecordComparison Slower(double worse_by) {
  std::vector<double> b;
  for (double x : {-0.01, 0.0, 0.01}) b.push_back(x + std::log(1 - worse_by));
  return CompareWindows(RpsRounds("nginx", {-0.01, 0, 0.01}), RpsRounds("nginx", b));
}

TEST(CompareTest, RegressionJustAboveThePercentFails) {
  // 10% slower: 0.9 · e^{±0.022670} = 0.879824 to 0.920638, below 0.98: worse; by 10% > 5%.
  auto c = Slower(0.10);
  ASSERT_EQ(Rps(c).verdict, ComparisonVerdict::kWorse);
  auto hits = FindRegressions(c, {kComparedMetrics.begin(), kComparedMetrics.end()}, 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].cell, "hello · c8 · nginx");
  EXPECT_EQ(hits[0].metric, Metric::kRps);
  EXPECT_NEAR(hits[0].change, -0.10, 1e-12);
  EXPECT_EQ(FindRegressions(c, {Metric::kRps}, 9.9).size(), 1u);
}

TEST(CompareTest, RegressionJustBelowOrAtThePercentPasses) {
  auto c = Slower(0.10);
  EXPECT_TRUE(FindRegressions(c, {Metric::kRps}, 10).empty());  // "more than" 10%
  EXPECT_TRUE(FindRegressions(c, {Metric::kRps}, 10.1).empty());
}

TEST(CompareTest, OnlyAWorseVerdictFails) {
  // 5% slower with B's rounds spread wide (e^{-0.1, 0, 0.1} · 0.95): the interval reaches across
  // 0.98, inconclusive, and never fails however far the estimate is.
  auto unsure = CompareWindows(
      RpsRounds("nginx", {-0.01, 0, 0.01}),
      RpsRounds("nginx", {std::log(0.95) - 0.1, std::log(0.95), std::log(0.95) + 0.1}));
  ASSERT_EQ(Rps(unsure).verdict, ComparisonVerdict::kInconclusive);
  EXPECT_TRUE(FindRegressions(unsure, {Metric::kRps}, 1).empty());
  // 1.5% slower, tight: 0.985 · e^{±0.002267} lies inside 0.98-1.02: close, never fails.
  auto close = CompareWindows(
      RpsRounds("nginx", {-0.001, 0, 0.001}),
      RpsRounds("nginx", {std::log(0.985) - 0.001, std::log(0.985), std::log(0.985) + 0.001}));
  ASSERT_EQ(Rps(close).verdict, ComparisonVerdict::kClose);
  EXPECT_TRUE(FindRegressions(close, {Metric::kRps}, 0).empty());
  // Nor does an n/a one (no windows), though the noise rule calls its -50% worse.
  auto na = CompareOne({3, 100000, 99000, 101000, 2}, {3, 50000, 49000, 51000, 4});
  ASSERT_EQ(Rps(na).noise_rule.verdict, ComparisonVerdict::kWorse);
  EXPECT_TRUE(FindRegressions(na, {Metric::kRps}, 5).empty());
}

TEST(CompareTest, CpuRegressesUpwardAndP99NeverGates) {
  // CPU at 10 · e^{0.1 + (-0.01, 0, 0.01)} against 10 · e^{-0.01, 0, 0.01}: estimate e^0.1 =
  // 1.105171, 1.077 to 1.134, worse by 10.5% > 5%. p99 doubles in every round: worse, not gated.
  std::vector<json> a = RpsRounds("nginx", {0, 0, 0}, {-0.01, 0, 0.01});
  std::vector<json> b = RpsRounds("nginx", {0, 0, 0}, {0.09, 0.10, 0.11});
  for (size_t i = 0; i < b.size(); ++i) {
    a[i]["attempts"][0]["p99_us"] = 500 + static_cast<double>(i);
    b[i]["attempts"][0]["p99_us"] = 1000 + static_cast<double>(i);
  }
  auto c = CompareWindows(a, b);
  ASSERT_EQ(c.cells[0].of(Metric::kP99Us).verdict, ComparisonVerdict::kWorse);
  auto hits = FindRegressions(c, {kComparedMetrics.begin(), kComparedMetrics.end()}, 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].metric, Metric::kCpuUsPerRequest);
  EXPECT_NEAR(hits[0].change, std::exp(0.1) - 1, 1e-12);
  // Left out with --metric rps,p99.
  EXPECT_TRUE(FindRegressions(c, {Metric::kRps, Metric::kP99Us}, 5).empty());
  EXPECT_TRUE(GatedMetrics({Metric::kP99Us}).empty());
}

TEST(CompareTest, BetterNeverFails) {
  auto c = Slower(-0.20);  // 20% faster
  ASSERT_EQ(Rps(c).verdict, ComparisonVerdict::kBetter);
  EXPECT_TRUE(FindRegressions(c, {Metric::kRps}, 0).empty());
}

// --- reading records ------------------------------------------------------------------------

TEST(CompareTest, ParseRunOfRecordChecksFormatAndVersion) {
  EXPECT_TRUE(ParseRunOfRecord(Record("a", {}).dump(), "a.json").ok());

  json wrong = Record("a", {});
  wrong["format"] = "benchlab-compare";
  auto r = ParseRunOfRecord(wrong.dump(), "a.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "a.json: not a benchlab run of record (format \"benchlab-compare\", expected "
            "\"benchlab-run-of-record\")");

  // Version 2 added intervals to the same summaries: both are read; a later one is not.
  json v2 = Record("a", {});
  v2["version"] = 2;
  EXPECT_TRUE(ParseRunOfRecord(v2.dump(), "b.json").ok());
  json v3 = Record("a", {});
  v3["version"] = 3;
  r = ParseRunOfRecord(v3.dump(), "b.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "b.json: run of record version 3; this benchlab reads versions 1 and 2");

  r = ParseRunOfRecord("{\"hello\": 1}", "c.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "c.json: not a benchlab run of record (no \"format\", expected "
            "\"benchlab-run-of-record\")");

  r = ParseRunOfRecord("{\"format\": ", "d.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("d.json: not JSON: ", 0), 0u) << r.status().message();

  json no_cells = Record("a", {});
  no_cells.erase("cells");
  r = ParseRunOfRecord(no_cells.dump(), "e.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "e.json: run of record without a \"cells\" array");
}

TEST(CompareTest, MetricNamesAndLoadLevels) {
  // compare compares three of the figures, by the names --figure takes anywhere.
  EXPECT_TRUE(IsCompared(*ParseFigure("rps")));
  EXPECT_TRUE(IsCompared(*ParseFigure("cpu")));
  EXPECT_TRUE(IsCompared(*ParseFigure("p99_us")));
  EXPECT_FALSE(IsCompared(*ParseFigure("p50_us")));
  EXPECT_EQ(LoadLevelWords("c64"), "64 connections");
  EXPECT_EQ(LoadLevelWords("r5000"), "open loop at 5,000 req/s");
}

// --- formats --------------------------------------------------------------------------------

RecordComparison Example() {
  json a = Record("before",
                  {Cell("hello", "c8",
                        {Target("nginx", {3, 100000, 99000, 101000, 2}, {3, 10, 9.9, 10.1, 2},
                                {3, 500, 495, 505, 2}),
                         Target("caddy")})},
                  {NoiseFloor({{"rps", 0.02}})});
  json b = Record("after", {Cell("hello", "c8",
                                 {Target("nginx", {3, 90000, 89000, 91000, 2.2},
                                         {3, 10.1, 10, 10.2, 2}, {3, 450, 445, 455, 2.2})})});
  // The rounds behind the intervals: req/s at 100,000 · e^{-0.01, 0, 0.01} in A and 90% of that
  // in B (0.9 · e^{±0.022670} = 0.880 to 0.921: worse); CPU at 10 · e^{-0.01, 0, 0.01} in both
  // (0.978 to 1.023: inconclusive); p99 500 µs in A and 450 µs in B in every round (0.900 alone:
  // better). caddy has no windows.
  a["windows"] = RpsRounds("nginx", {-0.01, 0, 0.01}, {-0.01, 0, 0.01});
  b["windows"] = RpsRounds("nginx", {std::log(0.9) - 0.01, std::log(0.9), std::log(0.9) + 0.01},
                           {-0.01, 0, 0.01});
  for (json& w : b["windows"]) w["attempts"][0]["p99_us"] = 450;
  return CompareRecords(a, b, "a.json", "bench.db");
}

TEST(CompareTest, TextShowsSidesTablesAndSummary) {
  CompareOptions options;
  options.fail_on_regression_pct = 5;
  const std::string text = FormatCompareText(Example(), options);
  // A row per target and figure; prose wrapped at 100 columns, the lines after a paragraph's
  // first indented.
  EXPECT_EQ(
      text,
      "A: before, 2026-11-30, done, from a.json; noise floor req/s 2.0%\n"
      "B: after, 2026-11-30, done, from bench.db; no noise floor\n"
      "B/A = exp(mean ln B − mean ln A) of the valid rounds' figures, with a Welch t interval at "
      "95%\n"
      "  (unpaired: the two runs' rounds were not measured together). Verdict against the margin "
      "±2%:\n"
      "  better/worse when the whole interval lies beyond it, close when inside it, else "
      "inconclusive.\n"
      "Δ = B / A − 1 of the medians. Noise-floor rule (context, not the verdict): |Δ| beyond the "
      "larger\n"
      "  noise floor (without one, the larger spread) and the ranges apart.\n"
      "\n"
      "hello · 8 connections\n"
      "target  figure                   A              B       Δ         B/A (95% CI)  verdict\n"
      "nginx   req/s       100,000 (2.0%)  90,000 (2.2%)  -10.0%  0.900 (0.880–0.921)  worse\n"
      "        CPU µs/req            10.0           10.1   +1.0%  1.000 (0.978–1.023)  "
      "inconclusive\n"
      "        p99                 500 µs         450 µs  -10.0%  0.900 (0.900–0.900)  better\n"
      "caddy   req/s       100,000 (2.0%)              —       —                    —  only in A\n"
      "        CPU µs/req            10.0              —       —                    —  only in A\n"
      "        p99                 500 µs              —       —                    —  only in A\n"
      "\n"
      "Summary: 1 in both, 1 only in A, 0 only in B. req/s: 0 better, 1 worse, 0 close, 0 "
      "inconclusive, 0\n"
      "  n/a. CPU µs/req: 0 better, 0 worse, 0 close, 1 inconclusive, 0 n/a. p99: 1 better, 0 "
      "worse, 0\n"
      "  close, 0 inconclusive, 0 n/a.\n"
      "Regressions worse than A by more than 5% (req/s, CPU µs/req): 1\n"
      "REGRESSION hello · c8 · nginx: req/s -10.0%, B / A 0.900 (95% CI 0.880 to 0.921; Welch, 3 "
      "and 3\n"
      "  rounds, df 4.0) lies beyond the margin ±2%\n");
}

// A realistic wide comparison: long target, campaign and pair names, every figure, a target on
// one side only. Every line of the text fits the width, the two targets stay apart and each
// header stands over its column.
TEST(CompareTest, TextFitsTheWidthWithLongNamesAndEveryFigure) {
  const std::string one = "actix-web-4.9-release-lto-thin-codegen-units-1";
  const std::string sixteen = "actix-web-4.9-release-lto-thin-codegen-units-16";
  auto record = [&](const std::string& name, double scale) {
    return Record(name, {Cell("json-serialization-large-payload", "c256",
                              {Target(one, {3, 118835 * scale, 110000, 120000, 12.5}),
                               Target(sixteen, {3, 60663 * scale, 60000, 61000, 0.8})},
                              "server-eu-west-1-bare-metal")});
  };
  const RecordComparison c =
      CompareRecords(record("nightly-2026-11-30-frameworks-all", 1.0),
                     record("nightly-2026-12-01-frameworks-all", 0.9),
                     "/var/lib/benchlab/exports/nightly-2026-11-30-frameworks-all.json",
                     "/var/lib/benchlab/lab.db");
  for (int width : {100, 72}) {
    CompareOptions options;
    options.width = width;
    const std::string text = FormatCompareText(c, options);
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
      lines.push_back(text.substr(start, end - start));
    }
    for (const std::string& line : lines) EXPECT_LE(TextColumns(line), size_t(width)) << line;
    auto column = [](const std::string& line, const std::string& part) {
      const size_t at = line.find(part);
      return at == std::string::npos ? at : TextColumns(line.substr(0, at));
    };
    const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
      return l.rfind("target ", 0) == 0;
    });
    ASSERT_NE(header, lines.end()) << text;
    const std::string& first = *(header + 1);
    const std::string& second = *(header + 4);
    EXPECT_NE(first.find("s-1 "), std::string::npos) << text;
    EXPECT_NE(second.find("s-16 "), std::string::npos) << text;
    EXPECT_NE(first.find("118,835"), std::string::npos) << text;
    EXPECT_NE((header + 2)->find("CPU µs/req"), std::string::npos) << text;
    EXPECT_NE((header + 3)->find("500 µs"), std::string::npos) << text;
    // B (right-aligned) ends where B's figure ends; the verdict starts under its header.
    EXPECT_EQ(column(*header, "verdict"), column(first, "n/a")) << text;
    EXPECT_EQ(column(*header, " B ") + 2, column(first, "106,952") + 7) << text;
  }
  CompareOptions wide;
  wide.width = 200;
  const std::string text = FormatCompareText(c, wide);
  EXPECT_NE(text.find(one + " "), std::string::npos) << text;
  EXPECT_NE(text.find("118,835 (12.5%)"), std::string::npos) << text;
}

TEST(CompareTest, TheHeaderNamesTheBaselineBasis) {
  json a = WindowRecord("a", DriftingRun(1.0), "nginx");
  json b = WindowRecord("b", DriftingRun(1.2), "nginx");
  CompareOptions wide;
  wide.width = kMaxTextWidth;  // the header line unwrapped
  const std::string text = FormatCompareText(CompareRecords(a, b, "a.json", "b.json"), wide);
  EXPECT_NE(text.find("of the valid rounds' figures, for every target but nginx of its per-round "
                      "ratio to nginx, with a Welch t interval at 95%"),
            std::string::npos)
      << text;
}

TEST(CompareTest, MetricOptionNarrowsTheTable) {
  CompareOptions options;
  options.metrics = {Metric::kCpuUsPerRequest};
  const std::string text = FormatCompareText(Example(), options);
  EXPECT_EQ(text.find("req/s (spread)"), std::string::npos) << text;
  EXPECT_EQ(text.find("p99"), std::string::npos) << text;
  EXPECT_NE(text.find("\nnginx   CPU µs/req  10.0  10.1"), std::string::npos) << text;
}

TEST(CompareTest, MarkdownHasATablePerCellAndTheReasons) {
  const std::string md = FormatCompareMarkdown(Example(), {});
  EXPECT_EQ(md.rfind("# benchlab compare: before → after\n", 0), 0u) << md;
  EXPECT_NE(md.find("\n## hello · 8 connections\n\n| target | A req/s (spread) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| ------ | ---------------: |"), std::string::npos) << md;
  EXPECT_NE(md.find("- nginx, req/s: worse, B / A 0.900 (95% CI 0.880 to 0.921; Welch, 3 and 3 "
                    "rounds, df 4.0) lies beyond the margin ±2%; noise-floor rule: worse, Δ "
                    "-10.0% beyond 2.0% (noise floor of A), ranges apart (A 99,000 to 101,000, B "
                    "89,000 to 91,000)\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- nginx, CPU µs/req: inconclusive, "), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.900 (0.880–0.921) | worse     |"), std::string::npos) << md;
  EXPECT_EQ(md.find("Regressions"), std::string::npos) << md;  // not asked

  CompareOptions options;
  options.fail_on_regression_pct = 5;
  const std::string gated = FormatCompareMarkdown(Example(), options);
  const std::string tail =
      "\n\nRegressions worse than A by more than 5% (req/s, CPU µs/req): 1\n\n"
      "- REGRESSION hello · c8 · nginx: req/s -10.0%, B / A 0.900 (95% CI 0.880 to 0.921; "
      "Welch, 3 and 3 rounds, df 4.0) lies beyond the margin ±2%\n";
  ASSERT_GE(gated.size(), tail.size());
  EXPECT_EQ(gated.substr(gated.size() - tail.size()), tail) << gated;
}

TEST(CompareTest, JsonCarriesEveryRowAndTheRegressions) {
  CompareOptions options;
  options.fail_on_regression_pct = 5;
  json out = json::parse(FormatCompareJson(Example(), options));
  EXPECT_EQ(out["format"], "benchlab-compare");
  EXPECT_EQ(out["version"], 2);
  EXPECT_EQ(out["stats"]["confidence"], 0.95);
  EXPECT_EQ(out["stats"]["margin"], 0.02);
  EXPECT_EQ(out["stats"]["basis"], "auto");
  EXPECT_TRUE(out["stats"]["baseline"].is_null());
  EXPECT_EQ(out["a"]["campaign"], "before");
  EXPECT_EQ(out["a"]["noise_floor"][0]["rps"], 0.02);
  EXPECT_TRUE(out["a"]["noise_floor"][0]["p99_us"].is_null());
  ASSERT_EQ(out["cells"].size(), 2u);
  const json& nginx = out["cells"][0];
  EXPECT_EQ(nginx["target"], "nginx");
  EXPECT_EQ(nginx["presence"], "both");
  EXPECT_NEAR(nginx["metrics"]["rps"]["delta"].get<double>(), -0.1, 1e-12);
  EXPECT_EQ(nginx["metrics"]["rps"]["verdict"], "worse");
  EXPECT_EQ(nginx["metrics"]["rps"]["basis"], "absolute");
  const json& iv = nginx["metrics"]["rps"]["interval"];
  EXPECT_EQ(iv["n_a"], 3);
  EXPECT_EQ(iv["n_b"], 3);
  EXPECT_NEAR(iv["df"].get<double>(), 4, 1e-9);
  EXPECT_EQ(iv["level"], 0.95);
  EXPECT_NEAR(iv["estimate"].get<double>(), 0.9, 1e-12);
  EXPECT_NEAR(iv["low"].get<double>(), 0.9 * std::exp(-0.022670), 1e-6);
  EXPECT_NEAR(iv["high"].get<double>(), 0.9 * std::exp(0.022670), 1e-6);
  EXPECT_EQ(nginx["metrics"]["rps"]["noise_rule"]["verdict"], "worse");
  EXPECT_EQ(nginx["metrics"]["rps"]["noise_rule"]["threshold"], 0.02);
  EXPECT_EQ(nginx["metrics"]["rps"]["noise_rule"]["threshold_from"], "noise floor of A");
  EXPECT_EQ(nginx["metrics"]["cpu_us_per_request"]["verdict"], "inconclusive");
  EXPECT_EQ(out["summary"]["cpu_us_per_request"]["inconclusive"], 1);
  EXPECT_EQ(nginx["metrics"]["rps"]["a"]["median"], 100000.0);
  EXPECT_EQ(out["cells"][1]["presence"], "only in A");
  EXPECT_TRUE(out["cells"][1]["metrics"]["rps"]["b"].is_null());
  EXPECT_EQ(out["summary"]["rps"]["worse"], 1);
  EXPECT_EQ(out["summary"]["only_in_a"], 1);
  ASSERT_EQ(out["regressions"].size(), 1u);
  EXPECT_EQ(out["regressions"][0]["target"], "nginx");
  EXPECT_EQ(out["regressions"][0]["metric"], "rps");
  EXPECT_NEAR(out["regressions"][0]["change"].get<double>(), -0.1, 1e-12);
  // Not asked: null, not an empty list that reads as "checked, none".
  EXPECT_TRUE(json::parse(FormatCompareJson(Example(), {}))["regressions"].is_null());
}

TEST(CompareTest, DifferentHostsAreWarnedAbout) {
  json a = Record("a", {Cell("hello", "c8", {Target("nginx")})});
  json b = a;
  a["hosts"] = json::array({{{"role", "server"},
                             {"agent", "s"},
                             {"facts", {{"cpu_model", "AMD EPYC"}, {"logical_cores", 2}}}}});
  b["hosts"] = json::array({{{"role", "server"},
                             {"agent", "s"},
                             {"facts", {{"cpu_model", "Intel Xeon"}, {"logical_cores", 8}}}}});
  CompareOptions wide;
  wide.width = kMaxTextWidth;  // the warning unwrapped
  const std::string text = FormatCompareText(CompareRecords(a, b, "a.json", "b.json"), wide);
  EXPECT_NE(text.find("Different hosts, absolute figures may not compare: A server: AMD EPYC, 2 "
                      "cores | B server: Intel Xeon, 8 cores"),
            std::string::npos)
      << text;
  EXPECT_EQ(FormatCompareText(CompareRecords(a, a, "a.json", "a.json"), {}).find("Different"),
            std::string::npos);
}

// A run with its gates in warn mode never passes for a gated one: the header says so for each
// side that was, and when the two were gated differently; the JSON carries each side's mode.
TEST(CompareTest, AWarnModeSideIsSaidBeforeAnyFigure) {
  json a = Record("a", {Cell("hello", "c8", {Target("nginx")})});
  json b = a;
  a["campaign"]["gates_in_force"] = "enforce";
  b["campaign"]["gates_in_force"] = "warn";
  const RecordComparison c = CompareRecords(a, b, "a.json", "b.json");
  const std::string text = FormatCompareText(c, {});
  EXPECT_NE(text.find("B ran with its gates in warn mode: windows they would refuse count as "
                      "valid"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("A ran with its gates"), std::string::npos) << text;
  EXPECT_NE(text.find("A and B were gated differently (A enforce, B warn)"), std::string::npos)
      << text;
  EXPECT_LT(text.find("warn mode"), text.find("nginx")) << "before the figures";
  EXPECT_NE(FormatCompareMarkdown(c, {}).find("- B ran with its gates in warn mode"),
            std::string::npos);
  EXPECT_EQ(json::parse(FormatCompareJson(c, {}))["b"]["gates_mode"], "warn");
  // Two gated runs, or records that do not say: nothing.
  b["campaign"]["gates_in_force"] = "enforce";
  EXPECT_EQ(FormatCompareText(CompareRecords(a, b, "a.json", "b.json"), {}).find("gated"),
            std::string::npos);
  EXPECT_EQ(FormatCompareText(CompareRecords(Record("x", {}), a, "x.json", "a.json"), {})
                .find("gated differently"),
            std::string::npos);
}

TEST(CompareTest, NamesAndHostFactsFromARecordPrintEscaped) {
  // A record file from anywhere: a CPU model that ends the line and clears the screen, and a
  // target and a campaign named with control characters.
  json a = Record("a\x1b[2J", {Cell("hello", "c8", {Target("nginx\nREGRESSION none")})});
  json b = Record("b", {Cell("hello", "c8", {Target("nginx\nREGRESSION none")})});
  a["hosts"] = json::array({{{"role", "server"},
                             {"agent", "s"},
                             {"facts", {{"cpu_model", "AMD\nB: all is well\x1b[2J"}}}}});
  const RecordComparison c = CompareRecords(a, b, "a.json", "b.json");
  for (const std::string& out : {FormatCompareText(c, {}), FormatCompareMarkdown(c, {})}) {
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    EXPECT_EQ(out.find("\nB: all is well"), std::string::npos) << out;
    EXPECT_EQ(out.find("\nREGRESSION none"), std::string::npos) << out;
    EXPECT_NE(out.find("server: AMD\\nB: all is well\\x1b[2J"), std::string::npos) << out;
    EXPECT_NE(out.find("nginx\\nREGRESSION none"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace benchlab
