#include "analysis/compare.h"

#include <gtest/gtest.h>

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

const MetricDelta& Rps(const RecordComparison& c) { return c.cells.at(0).of(CompareMetric::kRps); }

// --- deltas and verdicts ---------------------------------------------------------------------

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
  EXPECT_EQ(Rps(c).verdict, DeltaVerdict::kWorse);
  EXPECT_DOUBLE_EQ(Rps(c).threshold, 0.03);
  EXPECT_EQ(Rps(c).threshold_from, "noise floor of B");
  EXPECT_EQ(Rps(c).reason,
            "Δ -6.0% beyond 3.0% (noise floor of B), ranges apart (A 99,000 to 101,000, B "
            "93,000 to 95,000)");
}

TEST(CompareTest, HigherReqPerSecondBeyondTheFloorIsBetter) {
  auto c = CompareOne({3, 100000, 99000, 101000, 2}, {3, 106000, 105000, 107000, 1.9},
                      {{"rps", 0.02}}, {{"rps", 0.02}});
  EXPECT_EQ(Rps(c).verdict, DeltaVerdict::kBetter);
  EXPECT_EQ(Rps(c).threshold_from, "noise floors of A and B");
}

TEST(CompareTest, WithinTheLargerNoiseFloorIsClose) {
  // The same -6% is within B's floor of 7%, though beyond A's 2%: the larger floor rules.
  auto c = CompareOne({3, 100000, 99000, 101000, 2}, {3, 94000, 93000, 95000, 2.1}, {{"rps", 0.02}},
                      {{"rps", 0.07}});
  EXPECT_EQ(Rps(c).verdict, DeltaVerdict::kClose);
  EXPECT_DOUBLE_EQ(Rps(c).threshold, 0.07);
  EXPECT_EQ(Rps(c).reason, "|Δ| 6.0% within 7.0% (noise floor of B)");
  // And A's floor counts as much as B's.
  auto d = CompareOne({3, 100000, 99000, 101000, 2}, {3, 94000, 93000, 95000, 2.1}, {{"rps", 0.07}},
                      {{"rps", 0.02}});
  EXPECT_EQ(Rps(d).verdict, DeltaVerdict::kClose);
  EXPECT_EQ(Rps(d).threshold_from, "noise floor of A");
}

TEST(CompareTest, OnlyOneSideWithANoiseFloorStillJudgesAgainstIt) {
  auto c = CompareOne({3, 100000, 99000, 101000, 2}, {3, 94000, 93000, 95000, 2.1},
                      {{"rps", 0.065}}, {});
  EXPECT_EQ(Rps(c).verdict, DeltaVerdict::kClose);
  EXPECT_DOUBLE_EQ(Rps(c).threshold, 0.065);
}

TEST(CompareTest, DeltaEqualToTheFloorIsClose) {
  // 104,000 / 100,000 - 1 is a hair above 0.04 in binary floating point.
  auto c = CompareOne({3, 100000, 99000, 101000, 2}, {3, 104000, 103000, 105000, 1.9},
                      {{"rps", 0.04}}, {{"rps", 0.04}});
  EXPECT_EQ(Rps(c).verdict, DeltaVerdict::kClose);
}

TEST(CompareTest, OverlappingRangesAreCloseBeyondTheFloor) {
  // -6% is beyond both 1% floors, but B's best round (97,000) beat A's worst (96,000).
  auto c = CompareOne({3, 100000, 96000, 104000, 8}, {3, 94000, 93000, 97000, 4.3}, {{"rps", 0.01}},
                      {{"rps", 0.01}});
  EXPECT_EQ(Rps(c).verdict, DeltaVerdict::kClose);
  EXPECT_EQ(Rps(c).reason, "ranges overlap (A 96,000 to 104,000, B 93,000 to 97,000)");
  // Ranges that only touch still overlap.
  auto d = CompareOne({3, 100000, 96000, 104000, 8}, {3, 94000, 93000, 96000, 3.2}, {{"rps", 0.01}},
                      {{"rps", 0.01}});
  EXPECT_EQ(Rps(d).verdict, DeltaVerdict::kClose);
  auto e = CompareOne({3, 100000, 96000, 104000, 8}, {3, 94000, 93000, 95999, 3.2}, {{"rps", 0.01}},
                      {{"rps", 0.01}});
  EXPECT_EQ(Rps(e).verdict, DeltaVerdict::kWorse);
}

TEST(CompareTest, WithoutNoiseFloorsTheLargerSpreadIsTheThreshold) {
  // A 99,000-107,000 around 100,000: spread 8%; B 93,500-95,380: 2%. -6% is within 8%.
  auto c = CompareOne({3, 100000, 99000, 107000, 8}, {3, 94000, 93500, 95380, 2});
  EXPECT_EQ(Rps(c).verdict, DeltaVerdict::kClose);
  EXPECT_DOUBLE_EQ(Rps(c).threshold, 0.08);
  EXPECT_EQ(Rps(c).threshold_from, "spread of A");
  EXPECT_EQ(Rps(c).reason, "|Δ| 6.0% within 8.0% (spread of A)");
  // With A's spread 5% (99,000-104,000) the same -6% is beyond it, and the ranges are apart.
  auto d = CompareOne({3, 100000, 99000, 104000, 5}, {3, 94000, 93500, 95380, 2});
  EXPECT_EQ(Rps(d).verdict, DeltaVerdict::kWorse);
  EXPECT_EQ(Rps(d).threshold_from, "spread of A");
}

TEST(CompareTest, AFloorOfOneMetricDoesNotServeAnother) {
  // A req/s floor of 10% leaves CPU without a floor: CPU falls back to the spreads (2%).
  auto c = CompareOne(kRps, kRps, {{"rps", 0.10}}, {{"rps", 0.10}}, {3, 10, 9.9, 10.1, 2},
                      {3, 11, 10.9, 11.1, 1.8});
  const MetricDelta& cpu = c.cells[0].of(CompareMetric::kCpu);
  EXPECT_EQ(cpu.threshold_from, "spread of A");
  EXPECT_EQ(cpu.verdict, DeltaVerdict::kWorse);
}

TEST(CompareTest, OneRoundEachWithoutAFloorIsNotApplicable) {
  auto c = CompareOne({1, 100000, 100000, 100000, 0}, {1, 80000, 80000, 80000, 0});
  EXPECT_EQ(Rps(c).verdict, DeltaVerdict::kNotApplicable);
  EXPECT_NEAR(Rps(c).delta, -0.2, 1e-12);  // the delta is still shown
  // A noise floor gives one round something to be judged against.
  auto d = CompareOne({1, 100000, 100000, 100000, 0}, {1, 80000, 80000, 80000, 0}, {{"rps", 0.05}});
  EXPECT_EQ(Rps(d).verdict, DeltaVerdict::kWorse);
}

TEST(CompareTest, NoValidValueIsNotApplicable) {
  auto c = CompareOne(kRps, Fig{0});
  EXPECT_EQ(Rps(c).verdict, DeltaVerdict::kNotApplicable);
  EXPECT_TRUE(std::isnan(Rps(c).delta));
  EXPECT_EQ(Rps(c).reason, "no valid value in B");
  EXPECT_EQ(Rps(CompareOne(Fig{0}, kRps)).reason, "no valid value in A");
  EXPECT_EQ(Rps(CompareOne(Fig{0}, Fig{0})).reason, "no valid value in A or B");
  EXPECT_EQ(Rps(CompareOne({3, 0, 0, 0, 0}, kRps)).verdict, DeltaVerdict::kNotApplicable);
}

TEST(CompareTest, LowerCpuAndP99AreBetterHigherAreWorse) {
  // CPU 10 -> 8 µs/req (-20%), p99 500 -> 600 µs (+20%), both beyond their 2% spreads.
  auto c = CompareOne(kRps, kRps, {}, {}, {3, 10, 9.9, 10.1, 2}, {3, 8, 7.9, 8.1, 2.5},
                      {3, 500, 495, 505, 2}, {3, 600, 594, 606, 2});
  EXPECT_EQ(c.cells[0].of(CompareMetric::kCpu).verdict, DeltaVerdict::kBetter);
  EXPECT_NEAR(c.cells[0].of(CompareMetric::kCpu).delta, -0.2, 1e-12);
  EXPECT_EQ(c.cells[0].of(CompareMetric::kP99).verdict, DeltaVerdict::kWorse);
  EXPECT_NEAR(c.cells[0].of(CompareMetric::kP99).delta, 0.2, 1e-12);
  auto d = CompareOne(kRps, kRps, {}, {}, {3, 8, 7.9, 8.1, 2.5}, {3, 10, 9.9, 10.1, 2},
                      {3, 600, 594, 606, 2}, {3, 500, 495, 505, 2});
  EXPECT_EQ(d.cells[0].of(CompareMetric::kCpu).verdict, DeltaVerdict::kWorse);
  EXPECT_EQ(d.cells[0].of(CompareMetric::kP99).verdict, DeltaVerdict::kBetter);
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
  EXPECT_EQ(c.cells[1].of(CompareMetric::kRps).verdict, DeltaVerdict::kNotApplicable);
  EXPECT_DOUBLE_EQ(c.cells[1].of(CompareMetric::kRps).a.median, 100000);

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
  EXPECT_EQ(c.cells[0].of(CompareMetric::kRps).verdict, DeltaVerdict::kClose);  // 6% <= 10%
  EXPECT_EQ(c.cells[1].pair, "srv2");
  EXPECT_EQ(c.cells[1].of(CompareMetric::kRps).verdict, DeltaVerdict::kWorse);  // spreads 2.1%
}

// --- --fail-on-regression --------------------------------------------------------------------

TEST(CompareTest, RegressionJustAboveThePercentFails) {
  // -5.1%, beyond both 1% floors, ranges apart.
  auto c = CompareOne({3, 100000, 99500, 100500, 1}, {3, 94900, 94500, 95300, 0.8}, {{"rps", 0.01}},
                      {{"rps", 0.01}});
  ASSERT_EQ(Rps(c).verdict, DeltaVerdict::kWorse);
  auto hits = FindRegressions(c, {kCompareMetrics.begin(), kCompareMetrics.end()}, 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].cell, "hello · c8 · nginx");
  EXPECT_EQ(hits[0].metric, CompareMetric::kRps);
  EXPECT_NEAR(hits[0].delta, -0.051, 1e-12);
}

TEST(CompareTest, RegressionJustBelowOrAtThePercentPasses) {
  auto below = CompareOne({3, 100000, 99500, 100500, 1}, {3, 95100, 94700, 95500, 0.8},
                          {{"rps", 0.01}}, {{"rps", 0.01}});
  ASSERT_EQ(Rps(below).verdict, DeltaVerdict::kWorse);  // worse, but by 4.9% only
  EXPECT_TRUE(FindRegressions(below, {CompareMetric::kRps}, 5).empty());
  EXPECT_EQ(FindRegressions(below, {CompareMetric::kRps}, 4.8).size(), 1u);
  auto at = CompareOne({3, 100000, 99500, 100500, 1}, {3, 95000, 94600, 95400, 0.8},
                       {{"rps", 0.01}}, {{"rps", 0.01}});
  ASSERT_EQ(Rps(at).verdict, DeltaVerdict::kWorse);
  EXPECT_TRUE(FindRegressions(at, {CompareMetric::kRps}, 5).empty());  // "more than" 5%
}

TEST(CompareTest, ACloseCellNeverFails) {
  // -20%, far beyond 5%, but within B's 25% floor.
  auto c = CompareOne({3, 100000, 99500, 100500, 1}, {3, 80000, 79000, 81000, 2.5}, {{"rps", 0.01}},
                      {{"rps", 0.25}});
  ASSERT_EQ(Rps(c).verdict, DeltaVerdict::kClose);
  EXPECT_TRUE(FindRegressions(c, {CompareMetric::kRps}, 5).empty());
  // Nor does an n/a one.
  auto d = CompareOne({1, 100000, 100000, 100000, 0}, {1, 50000, 50000, 50000, 0});
  EXPECT_TRUE(FindRegressions(d, {CompareMetric::kRps}, 5).empty());
}

TEST(CompareTest, CpuRegressesUpwardAndP99NeverGates) {
  // CPU 10 -> 11 µs/req (+10%), p99 500 -> 1000 µs (+100%): both worse beyond their spreads.
  auto c = CompareOne(kRps, kRps, {}, {}, {3, 10, 9.9, 10.1, 2}, {3, 11, 10.9, 11.1, 1.8},
                      {3, 500, 495, 505, 2}, {3, 1000, 990, 1010, 2});
  ASSERT_EQ(c.cells[0].of(CompareMetric::kP99).verdict, DeltaVerdict::kWorse);
  auto hits = FindRegressions(c, {kCompareMetrics.begin(), kCompareMetrics.end()}, 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].metric, CompareMetric::kCpu);
  EXPECT_NEAR(hits[0].delta, 0.1, 1e-12);
  // Left out with --metric rps,p99.
  EXPECT_TRUE(FindRegressions(c, {CompareMetric::kRps, CompareMetric::kP99}, 5).empty());
  EXPECT_TRUE(GatedMetrics({CompareMetric::kP99}).empty());
}

TEST(CompareTest, BetterNeverFails) {
  auto c = CompareOne({3, 100000, 99500, 100500, 1}, {3, 120000, 119000, 121000, 1.7});
  ASSERT_EQ(Rps(c).verdict, DeltaVerdict::kBetter);
  EXPECT_TRUE(FindRegressions(c, {CompareMetric::kRps}, 0).empty());
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
  EXPECT_EQ(ParseCompareMetric("rps"), CompareMetric::kRps);
  EXPECT_EQ(ParseCompareMetric("cpu"), CompareMetric::kCpu);
  EXPECT_EQ(ParseCompareMetric("p99_us"), CompareMetric::kP99);
  EXPECT_FALSE(ParseCompareMetric("p50").has_value());
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
  return CompareRecords(a, b, "a.json", "bench.db");
}

TEST(CompareTest, TextShowsSidesTablesAndSummary) {
  CompareOptions options;
  options.fail_on_regression_pct = 5;
  const std::string text = FormatCompareText(Example(), options);
  EXPECT_EQ(text,
            "A: before, 2026-11-30, done, from a.json; noise floor req/s 2.0%\n"
            "B: after, 2026-11-30, done, from bench.db; no noise floor\n"
            "Δ = B / A − 1 of the medians. better/worse: |Δ| beyond the larger noise floor "
            "(without one, the larger spread) and the ranges apart; else close.\n"
            "\n"
            "hello · 8 connections\n"
            "target  A req/s (spread)  B req/s (spread)  Δ req/s  verdict    CPU µs/req A → B  "
            "Δ CPU  verdict          p99 A → B   Δ p99  verdict\n"
            "nginx     100,000 (2.0%)     90,000 (2.2%)   -10.0%  worse           10.0 → 10.1  "
            "+1.0%  close      500 µs → 450 µs  -10.0%  better\n"
            "caddy     100,000 (2.0%)                 —        —  only in A          10.0 → —  "
            "    —  only in A       500 µs → —       —  only in A\n"
            "\n"
            "Summary: 1 in both, 1 only in A, 0 only in B. req/s: 0 better, 1 worse, 0 close, 0 "
            "n/a. CPU µs/req: 0 better, 0 worse, 1 close, 0 n/a. p99: 1 better, 0 worse, 0 "
            "close, 0 n/a.\n"
            "Regressions worse than A by more than 5% (req/s, CPU µs/req): 1\n"
            "REGRESSION hello · c8 · nginx: req/s -10.0%, Δ -10.0% beyond 2.0% (noise floor of "
            "A), ranges apart (A 99,000 to 101,000, B 89,000 to 91,000)\n");
}

TEST(CompareTest, MetricOptionNarrowsTheTable) {
  CompareOptions options;
  options.metrics = {CompareMetric::kCpu};
  const std::string text = FormatCompareText(Example(), options);
  EXPECT_EQ(text.find("req/s (spread)"), std::string::npos) << text;
  EXPECT_EQ(text.find("p99"), std::string::npos) << text;
  EXPECT_NE(text.find("CPU µs/req A → B"), std::string::npos) << text;
}

TEST(CompareTest, MarkdownHasATablePerCellAndTheReasons) {
  const std::string md = FormatCompareMarkdown(Example(), {});
  EXPECT_EQ(md.rfind("# benchlab compare: before → after\n", 0), 0u) << md;
  EXPECT_NE(md.find("\n## hello · 8 connections\n\n| target | A req/s (spread) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| ------ | ---------------: |"), std::string::npos) << md;
  EXPECT_NE(md.find("- nginx, req/s: worse, Δ -10.0% beyond 2.0% (noise floor of A)"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("- nginx, CPU µs/req:"), std::string::npos) << md;  // close: no note
  EXPECT_EQ(md.find("Regressions"), std::string::npos) << md;           // not asked

  CompareOptions options;
  options.fail_on_regression_pct = 5;
  const std::string gated = FormatCompareMarkdown(Example(), options);
  const std::string tail =
      "\n\nRegressions worse than A by more than 5% (req/s, CPU µs/req): 1\n\n"
      "- REGRESSION hello · c8 · nginx: req/s -10.0%, Δ -10.0% beyond 2.0% (noise floor of A), "
      "ranges apart (A 99,000 to 101,000, B 89,000 to 91,000)\n";
  ASSERT_GE(gated.size(), tail.size());
  EXPECT_EQ(gated.substr(gated.size() - tail.size()), tail) << gated;
}

TEST(CompareTest, JsonCarriesEveryRowAndTheRegressions) {
  CompareOptions options;
  options.fail_on_regression_pct = 5;
  json out = json::parse(FormatCompareJson(Example(), options));
  EXPECT_EQ(out["format"], "benchlab-compare");
  EXPECT_EQ(out["version"], 1);
  EXPECT_EQ(out["a"]["campaign"], "before");
  EXPECT_EQ(out["a"]["noise_floor"][0]["rps"], 0.02);
  EXPECT_TRUE(out["a"]["noise_floor"][0]["p99_us"].is_null());
  ASSERT_EQ(out["cells"].size(), 2u);
  const json& nginx = out["cells"][0];
  EXPECT_EQ(nginx["target"], "nginx");
  EXPECT_EQ(nginx["presence"], "both");
  EXPECT_NEAR(nginx["metrics"]["rps"]["delta"].get<double>(), -0.1, 1e-12);
  EXPECT_EQ(nginx["metrics"]["rps"]["verdict"], "worse");
  EXPECT_EQ(nginx["metrics"]["rps"]["a"]["median"], 100000.0);
  EXPECT_EQ(out["cells"][1]["presence"], "only in A");
  EXPECT_TRUE(out["cells"][1]["metrics"]["rps"]["b"].is_null());
  EXPECT_EQ(out["summary"]["rps"]["worse"], 1);
  EXPECT_EQ(out["summary"]["only_in_a"], 1);
  ASSERT_EQ(out["regressions"].size(), 1u);
  EXPECT_EQ(out["regressions"][0]["target"], "nginx");
  EXPECT_EQ(out["regressions"][0]["metric"], "rps");
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
  const std::string text = FormatCompareText(CompareRecords(a, b, "a.json", "b.json"), {});
  EXPECT_NE(text.find("Different hosts, absolute figures may not compare: A server: AMD EPYC, 2 "
                      "cores | B server: Intel Xeon, 8 cores"),
            std::string::npos)
      << text;
  EXPECT_EQ(FormatCompareText(CompareRecords(a, a, "a.json", "a.json"), {}).find("Different"),
            std::string::npos);
}

}  // namespace
}  // namespace benchlab
