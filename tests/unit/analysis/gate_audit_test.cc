#include "analysis/gate_audit.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coordinator/outcome.h"

namespace benchlab {
namespace {

TEST(HodgesLehmannShiftTest, ShiftedSamplesGiveTheShiftAndAnIntervalAboveZero) {
  // Every difference lies in 6..14, and their median is 10.
  ShiftInterval s = HodgesLehmannShift({10, 11, 12, 13, 14}, {0, 1, 2, 3, 4});
  ASSERT_TRUE(s.bounded);
  EXPECT_DOUBLE_EQ(s.estimate, 10);
  EXPECT_GT(s.low, 0);
  EXPECT_LE(s.low, 10);
  EXPECT_GE(s.high, 10);
  EXPECT_LE(s.high, 14);
}

TEST(HodgesLehmannShiftTest, TheSameSampleGivesAnIntervalAroundZero) {
  std::vector<double> v = {1, 2, 3, 4, 5, 6, 7};
  ShiftInterval s = HodgesLehmannShift(v, v);
  ASSERT_TRUE(s.bounded);
  EXPECT_DOUBLE_EQ(s.estimate, 0);
  EXPECT_LT(s.low, 0);
  EXPECT_GT(s.high, 0);
  EXPECT_DOUBLE_EQ(s.low, -s.high);
}

TEST(HodgesLehmannShiftTest, TooFewForAnIntervalIsSaidSo) {
  // n m = 2: no count of differences can be cut off each side at 95%.
  ShiftInterval s = HodgesLehmannShift({1}, {1, 2});
  EXPECT_FALSE(s.bounded);
  EXPECT_DOUBLE_EQ(s.estimate, -0.5);
  EXPECT_TRUE(std::isnan(s.low));
}

TEST(HodgesLehmannShiftTest, AWiderLevelGivesAWiderInterval) {
  std::vector<double> x = {3, 5, 6, 8, 9, 12}, y = {1, 2, 4, 4, 7, 8, 10};
  ShiftInterval at80 = HodgesLehmannShift(x, y, 0.80);
  ShiftInterval at99 = HodgesLehmannShift(x, y, 0.99);
  ASSERT_TRUE(at80.bounded && at99.bounded);
  EXPECT_LE(at99.low, at80.low);
  EXPECT_GE(at99.high, at80.high);
  EXPECT_LT(at99.high - at99.low, 1e9);
}

// Four cells of clean windows, each a few % around 1000 req/s and 50 µs per request.
std::vector<AuditWindow> CleanCells() {
  std::vector<AuditWindow> out;
  const double offsets[] = {-0.03, -0.02, -0.01, 0.0, 0.01, 0.02, 0.03, -0.015, 0.015};
  for (int cell = 0; cell < 4; ++cell) {
    for (double o : offsets) {
      AuditWindow w;
      w.cell = "cell" + std::to_string(cell);
      w.rps = 1000 * (1 + o);
      w.cpu_us = 50 * (1 - o);
      out.push_back(w);
    }
  }
  return out;
}

AuditWindow Refused(int cell, double rps_off, double cpu_off,
                    const std::string& gate = "selftest_drift",
                    const std::string& host = "load (agent l1)") {
  AuditWindow w;
  w.cell = "cell" + std::to_string(cell);
  w.rps = 1000 * (1 + rps_off);
  w.cpu_us = 50 * (1 + cpu_off);
  w.refused_by = {{gate, host}};
  return w;
}

TEST(GateAuditTest, RefusalsLikeValidWindowsAreCalledNoise) {
  std::vector<AuditWindow> windows = CleanCells();
  const double offs[] = {0.01, -0.02, 0.015, -0.01, 0.02, -0.005, 0.01, -0.015};
  for (int i = 0; i < 8; ++i) windows.push_back(Refused(i % 4, offs[i], -offs[i]));
  std::vector<GateAudit> audit = AuditGates(windows);
  ASSERT_EQ(audit.size(), 1u);
  const GateAudit& a = audit[0];
  EXPECT_EQ(a.gate, "selftest_drift");
  EXPECT_EQ(a.host, "load (agent l1)");
  EXPECT_EQ(a.refused, 8);
  EXPECT_EQ(a.windows, 44);
  EXPECT_EQ(a.rps.refused_pct.n, 8);
  EXPECT_EQ(a.rps.clean_pct.n, 36);
  EXPECT_NEAR(a.rps.refused_pct.median, 1.25, 0.01);
  // The refused windows lay no further off (here a little closer): the interval is not above 0,
  // and its top rules out twice the valid windows' distance.
  EXPECT_TRUE(a.rps.shift.bounded);
  EXPECT_LE(a.rps.shift.low, 0);
  EXPECT_LE(a.rps.shift.high, a.rps.clean_pct.median);
  EXPECT_EQ(a.verdict, GateAuditVerdict::kNoise) << a.words;
  EXPECT_NE(a.words.find("selftest_drift refused 8 of 44 windows on host load (agent l1)"),
            std::string::npos)
      << a.words;
  EXPECT_NE(a.words.find("refuses noise"), std::string::npos) << a.words;
}

TEST(GateAuditTest, RefusalsFarOffAreEarned) {
  std::vector<AuditWindow> windows = CleanCells();
  // A competing process: req/s down by a third or more, CPU per request up.
  for (int i = 0; i < 5; ++i)
    windows.push_back(Refused(i % 4, -0.35 - 0.02 * i, 0.2, "foreign_cpu", "server (agent s1)"));
  std::vector<GateAudit> audit = AuditGates(windows);
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].verdict, GateAuditVerdict::kEarned) << audit[0].words;
  EXPECT_GT(audit[0].rps.shift.low, 20);
  EXPECT_NEAR(audit[0].rps.refused_pct.median, 39, 0.01);
  EXPECT_NE(audit[0].words.find("earned"), std::string::npos);
}

TEST(GateAuditTest, AGateThatShowsOnlyInCpuPerRequestIsEarnedToo) {
  std::vector<AuditWindow> windows = CleanCells();
  for (int i = 0; i < 5; ++i) windows.push_back(Refused(i % 4, 0.005, 0.30));
  std::vector<GateAudit> audit = AuditGates(windows);
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].verdict, GateAuditVerdict::kEarned) << audit[0].words;
}

TEST(GateAuditTest, TooFewRefusalsAreUndecidedAndSaySo) {
  std::vector<AuditWindow> windows = CleanCells();
  windows.push_back(Refused(0, -0.5, 0.5));
  windows.push_back(Refused(1, -0.5, 0.5));
  std::vector<GateAudit> audit = AuditGates(windows);
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].verdict, GateAuditVerdict::kUndecided);
  EXPECT_FALSE(audit[0].rps.shift.bounded);
  EXPECT_NE(audit[0].words.find("too few windows"), std::string::npos) << audit[0].words;
}

TEST(GateAuditTest, WithoutAValidWindowNothingIsMeasuredNorInvented) {
  std::vector<AuditWindow> windows = {Refused(0, 0, 0), Refused(0, 0.1, 0), Refused(1, 0, 0)};
  std::vector<GateAudit> audit = AuditGates(windows);
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].refused, 3);
  EXPECT_EQ(audit[0].rps.refused_pct.n, 0);
  EXPECT_EQ(audit[0].verdict, GateAuditVerdict::kUndecided);
  EXPECT_NE(audit[0].words.find("no cell had a valid window"), std::string::npos) << audit[0].words;
}

TEST(GateAuditTest, EachGateAndHostIsAuditedApartAndAWindowCountsForEachGateThatRefusedIt) {
  std::vector<AuditWindow> windows = CleanCells();
  AuditWindow both = Refused(0, 0, 0);
  both.refused_by.push_back({"foreign_cpu", "server (agent s1)"});
  windows.push_back(both);
  windows.push_back(Refused(1, 0, 0, "selftest_drift", "server (agent s1)"));
  std::vector<GateAudit> audit = AuditGates(windows);
  ASSERT_EQ(audit.size(), 3u);
  EXPECT_EQ(audit[0].gate, "foreign_cpu");
  EXPECT_EQ(audit[1].host, "load (agent l1)");
  EXPECT_EQ(audit[2].host, "server (agent s1)");
  for (const GateAudit& a : audit) EXPECT_EQ(a.refused, 1);
}

TEST(GateAuditTest, AValidWindowIsNeverMeasuredAgainstItself) {
  // Two clean windows 10% apart: each lies 10% from the other, not 5% from their mean.
  std::vector<AuditWindow> windows;
  for (double rps : {1000.0, 1100.0}) {
    AuditWindow w;
    w.cell = "c";
    w.rps = rps;
    windows.push_back(w);
  }
  windows.push_back(Refused(0, 0, 0));
  windows.back().cell = "c";
  std::vector<GateAudit> audit = AuditGates(windows);
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_NEAR(audit[0].rps.clean_pct.min, 100.0 / 11, 1e-9);       // 1000 from 1100
  EXPECT_NEAR(audit[0].rps.clean_pct.max, 10, 1e-9);               // 1100 from 1000
  EXPECT_NEAR(audit[0].rps.refused_pct.median, 100.0 / 21, 1e-9);  // 1000 from 1050
}

WindowRow Row(int attempt, const std::string& verdict, std::vector<WindowReason> reasons,
              double rps) {
  WindowRow w;
  w.target = "nginx";
  w.scenario = "hello";
  w.load_level = "c8";
  w.round = 1;
  w.attempt = attempt;
  w.verdict = verdict;
  w.server_agent = "s1";
  w.load_agent = "l1";
  w.requests = 1000;
  w.rps = rps;
  w.cpu_us_per_request = 20;
  w.reasons = ReasonTextsJson(reasons);
  w.outcome = OutcomeJson(reasons);
  return w;
}

WindowReason Gate(const std::string& name, const std::string& host) {
  WindowReason r;
  r.kind = ReasonKind::kGate;
  r.name = name;
  r.host = host;
  r.text = name + ": " + host + " host";
  return r;
}

TEST(GateAuditTest, StoredWindowsNameTheirAgentAndLeaveOutWhatWasNotMeasured) {
  ReportInput in;
  in.windows.push_back(Row(1, "invalid", {Gate("selftest_drift", "load")}, 900));
  in.windows.push_back(Row(2, "valid", {}, 1000));
  WindowReason step;
  step.kind = ReasonKind::kStep;
  step.name = "run_load";
  step.text = "run_load: agent l1: unavailable";
  in.windows.push_back(Row(3, "failed", {step}, 0));
  in.windows.push_back(Row(4, "invalid", {Gate("error_rate", "")}, 800));
  std::vector<AuditWindow> w = AuditWindowsOf(in, "campaign-a");
  ASSERT_EQ(w.size(), 3u);
  ASSERT_EQ(w[0].refused_by.size(), 1u);
  EXPECT_EQ(w[0].refused_by[0].first, "selftest_drift");
  EXPECT_EQ(w[0].refused_by[0].second, "load (agent l1)");
  EXPECT_TRUE(w[1].refused_by.empty());
  EXPECT_EQ(w[2].refused_by[0].second, "");
  EXPECT_EQ(w[0].cell, w[1].cell);
  EXPECT_NE(AuditWindowsOf(in, "campaign-b")[0].cell, w[0].cell);
}

TEST(GateAuditTest, WindowsMeasuredAgainAfterARefusalAreCountedByGate) {
  std::vector<WindowRow> rows;
  rows.push_back(Row(1, "invalid", {Gate("selftest_drift", "load")}, 900));
  rows.push_back(Row(2, "invalid", {Gate("foreign_cpu", "server")}, 900));
  rows.push_back(Row(3, "valid", {}, 1000));
  WindowRow other = Row(1, "valid", {}, 1000);
  other.round = 2;
  rows.push_back(other);
  WindowRow failed_then = Row(1, "failed", {}, 0);
  failed_then.round = 3;
  rows.push_back(failed_then);
  WindowRow after_failure = Row(2, "valid", {}, 1000);
  after_failure.round = 3;
  rows.push_back(after_failure);
  Remeasured r = CountRemeasured(rows);
  EXPECT_EQ(r.windows, 2);
  ASSERT_EQ(r.by_gate.size(), 2u);
  EXPECT_EQ(r.by_gate[0], (std::pair<std::string, int>{"foreign_cpu", 1}));
  EXPECT_EQ(r.by_gate[1], (std::pair<std::string, int>{"selftest_drift", 1}));
}

}  // namespace
}  // namespace benchlab
