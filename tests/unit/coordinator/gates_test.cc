#include "coordinator/gates.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "coordinator/gates_toml.h"

namespace benchlab {
namespace {

// --- JudgeWindow. ---

// A quiet host with every sensor present, each reading well inside the defaults.
HostMeasures QuietHost() {
  HostMeasures h;
  h.foreign_mean_pct = 3;
  h.steal_pct = 0;
  h.busy_pct = 40;
  h.throttle_events = 0;
  h.min_freq_ratio = 0.98;
  h.selftest_drift = 0.02;
  h.on_battery = false;
  h.swap_in_pages = 0;
  h.swap_out_pages = 0;
  return h;
}

WindowMeasures QuietWindow() {
  WindowMeasures m;
  m.server = QuietHost();
  m.load = QuietHost();
  m.requests = 1000;
  return m;
}

// A window every default gate fails, once per gate (on the server host where there are two).
WindowMeasures BadWindow() {
  WindowMeasures m = QuietWindow();
  m.conformance_diffs = {"scenario \"hello\": status: expected 200, got 500"};
  m.target_exited = true;
  m.target_exit_text = "exit status 1";
  m.scheduling_failures = {"background_scheduling: pid 12 (nginx) nice 10 > 0 (agent s1)"};
  m.server.on_battery = true;
  m.server.selftest_drift = 0.5;
  m.server.foreign_mean_pct = 100;
  m.server.steal_pct = 20;
  m.server.throttle_events = 2;
  m.server.min_freq_ratio = 0.5;
  m.server.swap_out_pages = 8;
  m.generator_bound = true;
  m.mismatches = 100;
  return m;
}

std::vector<std::string> Texts(const std::vector<GateReason>& reasons) {
  std::vector<std::string> out;
  for (const auto& r : reasons) out.push_back(r.text);
  return out;
}

std::vector<std::string> Gates(const std::vector<GateReason>& reasons) {
  std::vector<std::string> out;
  for (const auto& r : reasons) out.push_back(r.gate);
  return out;
}

// The one reason `m` earns under `c`; fails the test unless there is exactly one.
GateReason OnlyReason(const WindowMeasures& m, const GateConfig& c = GateConfig{}) {
  auto reasons = JudgeWindow(m, c);
  EXPECT_EQ(reasons.size(), 1u) << ::testing::PrintToString(Texts(reasons));
  return reasons.empty() ? GateReason{} : reasons[0];
}

TEST(GatesJudgeTest, DefaultsAreTheDocumentedOnes) {
  GateConfig c;
  EXPECT_EQ(c.mode, GateMode::kEnforce);
  EXPECT_EQ(c.foreign_cpu.max_pct, 25);
  EXPECT_EQ(c.steal.max_pct, 5);
  EXPECT_EQ(c.frequency.min_ratio, 0.75);
  EXPECT_EQ(c.generator_bound.load_busy_max_pct, 100);
  EXPECT_EQ(c.error_rate.max, 0.01);
  EXPECT_EQ(c.selftest_drift.max_pct, 10);
  EXPECT_EQ(c.selftest_drift.spread_multiple, 4);
  EXPECT_EQ(kSelftestDriftCalibratedMaxPct, 50);
  EXPECT_EQ(c.swap.max_pages, 0u);
  for (bool enabled :
       {c.conformance.enabled, c.target_exited.enabled, c.background_scheduling.enabled,
        c.on_battery.enabled, c.selftest_drift.enabled, c.foreign_cpu.enabled, c.steal.enabled,
        c.throttling.enabled, c.frequency.enabled, c.swap.enabled, c.generator_bound.enabled,
        c.error_rate.enabled}) {
    EXPECT_TRUE(enabled);
  }
}

TEST(GatesJudgeTest, QuietWindowWithEverySensorPasses) {
  EXPECT_TRUE(JudgeWindow(QuietWindow(), GateConfig{}).empty());
}

TEST(GatesJudgeTest, ForeignCpuAtThresholdPassesAboveFailsOnEachHost) {
  WindowMeasures m = QuietWindow();
  m.server.foreign_mean_pct = 25;
  m.load.foreign_mean_pct = 25;
  EXPECT_TRUE(JudgeWindow(m, GateConfig{}).empty());
  m.server.foreign_mean_pct = 212;
  GateReason r = OnlyReason(m);
  EXPECT_EQ(r.gate, "foreign_cpu");
  EXPECT_EQ(r.text, "foreign_cpu: server host 212% > 25%");
  EXPECT_EQ(r.value, 212);
  EXPECT_EQ(r.threshold, 25);
  m.server.foreign_mean_pct = 0;
  m.load.foreign_mean_pct = 25.1;
  EXPECT_EQ(OnlyReason(m).text, "foreign_cpu: load host 25.1% > 25%");
}

TEST(GatesJudgeTest, ValueJustAboveThresholdShowsEnoughDecimalsToDiffer) {
  WindowMeasures m = QuietWindow();
  m.server.foreign_mean_pct = 25.04;
  EXPECT_EQ(OnlyReason(m).text, "foreign_cpu: server host 25.04% > 25%");
}

TEST(GatesJudgeTest, StealAtThresholdPassesAboveFailsOnEachHost) {
  WindowMeasures m = QuietWindow();
  m.server.steal_pct = 5;
  m.load.steal_pct = 5;
  EXPECT_TRUE(JudgeWindow(m, GateConfig{}).empty());
  m.load.steal_pct = 7.1;
  GateReason r = OnlyReason(m);
  EXPECT_EQ(r.gate, "steal");
  EXPECT_EQ(r.text, "steal: load host 7.1% > 5%");
  m.load.steal_pct = 5;
  m.server.steal_pct = 5.2;
  EXPECT_EQ(OnlyReason(m).text, "steal: server host 5.2% > 5%");
}

TEST(GatesJudgeTest, AnyThrottleEventFails) {
  WindowMeasures m = QuietWindow();
  m.server.throttle_events = 1;
  GateReason r = OnlyReason(m);
  EXPECT_EQ(r.gate, "throttling");
  EXPECT_EQ(r.text, "throttling: server host 1 throttle events > 0");
  EXPECT_EQ(r.value, 1);
  m.server.throttle_events = 0;
  m.load.throttle_events = 3;
  EXPECT_EQ(OnlyReason(m).text, "throttling: load host 3 throttle events > 0");
}

TEST(GatesJudgeTest, FrequencyAtThresholdPassesBelowFails) {
  WindowMeasures m = QuietWindow();
  m.server.min_freq_ratio = 0.75;
  m.load.min_freq_ratio = 0.75;
  EXPECT_TRUE(JudgeWindow(m, GateConfig{}).empty());
  m.server.min_freq_ratio = 0.74;
  GateReason r = OnlyReason(m);
  EXPECT_EQ(r.gate, "frequency");
  EXPECT_EQ(r.text, "frequency: server host cur/max 0.74 < 0.75");
  EXPECT_EQ(r.threshold, 0.75);
  m.server.min_freq_ratio = 0.75;
  m.load.min_freq_ratio = 0.7499;
  EXPECT_EQ(OnlyReason(m).text, "frequency: load host cur/max 0.7499 < 0.75");
}

TEST(GatesJudgeTest, GeneratorBoundFlagFails) {
  WindowMeasures m = QuietWindow();
  m.generator_bound = true;
  GateReason r = OnlyReason(m);
  EXPECT_EQ(r.gate, "generator_bound");
  EXPECT_EQ(r.text, "generator_bound: the load generator set the pace, not the target");
}

TEST(GatesJudgeTest, LoadHostBusyShareAtThresholdPassesAboveFails) {
  GateConfig c;
  c.generator_bound.load_busy_max_pct = 90;
  WindowMeasures m = QuietWindow();
  m.load.busy_pct = 90;
  m.server.busy_pct = 100;  // the server host's busy share is the target's business
  EXPECT_TRUE(JudgeWindow(m, c).empty());
  m.load.busy_pct = 97.3;
  EXPECT_EQ(OnlyReason(m, c).text, "generator_bound: load host 97.3% busy > 90%");
  // At the default of 100 a fully busy load host passes: in `benchlab run` it also runs the
  // target.
  m.load.busy_pct = 100;
  EXPECT_TRUE(JudgeWindow(m, GateConfig{}).empty());
}

TEST(GatesJudgeTest, ErrorRateAtThresholdPassesAboveFails) {
  WindowMeasures m = QuietWindow();
  m.requests = 1000;
  m.mismatches = 10;  // exactly 1%
  EXPECT_TRUE(JudgeWindow(m, GateConfig{}).empty());
  m.mismatches = 11;
  GateReason r = OnlyReason(m);
  EXPECT_EQ(r.gate, "error_rate");
  EXPECT_EQ(r.text, "error_rate: 1.10% > 1.00% (11 errors of 1000 attempts)");
  EXPECT_DOUBLE_EQ(r.value, 1.1);
  EXPECT_DOUBLE_EQ(r.threshold, 1.0);
}

TEST(GatesJudgeTest, ErrorRateCountsTransportErrorsAsAttempts) {
  WindowMeasures m = QuietWindow();
  m.requests = 990;
  m.transport_errors = 6;
  m.mismatches = 17;
  EXPECT_EQ(OnlyReason(m).text, "error_rate: 2.31% > 1.00% (23 errors of 996 attempts)");
}

TEST(GatesJudgeTest, ErrorRateJustAboveThresholdShowsMoreDecimals) {
  WindowMeasures m = QuietWindow();
  m.requests = 100000;
  m.mismatches = 1001;
  EXPECT_EQ(OnlyReason(m).text, "error_rate: 1.001% > 1.000% (1001 errors of 100000 attempts)");
}

TEST(GatesJudgeTest, NoTrafficIsNoErrorRate) {
  WindowMeasures m = QuietWindow();
  m.requests = 0;
  EXPECT_TRUE(JudgeWindow(m, GateConfig{}).empty());
}

TEST(GatesJudgeTest, SelftestDriftAtThresholdPassesSlowerFails) {
  WindowMeasures m = QuietWindow();
  m.server.selftest_drift = 0.10;
  m.load.selftest_drift = 0.10;
  EXPECT_TRUE(JudgeWindow(m, GateConfig{}).empty());
  m.server.selftest_drift = 0.142;
  GateReason r = OnlyReason(m);
  EXPECT_EQ(r.gate, "selftest_drift");
  EXPECT_EQ(r.text, "selftest_drift: server host +14.2% > 10%");
  EXPECT_DOUBLE_EQ(r.value, 14.2);
  EXPECT_EQ(r.threshold, 10);
  m.server.selftest_drift = 0;
  m.load.selftest_drift = 0.125;
  r = OnlyReason(m);
  EXPECT_EQ(r.text, "selftest_drift: load host +12.5% > 10%");
  EXPECT_EQ(r.host, "load");
}

// A self-test faster than the calibration says the calibration was slowed, not the window:
// however much faster, it is never refused (on a VM: -28% to -46% after a start disturbed by
// processes starting).
TEST(GatesJudgeTest, AFasterSelftestIsNeverRefused) {
  WindowMeasures m = QuietWindow();
  for (double drift : {-0.101, -0.125, -0.46, -0.9}) {
    m.server.selftest_drift = drift;
    m.load.selftest_drift = drift;
    EXPECT_TRUE(JudgeWindow(m, GateConfig{}).empty()) << drift;
  }
}

TEST(GatesJudgeTest, SelftestDriftThresholdIsExactForDecimalDrifts) {
  // 0.07 * 100 is 7.000000000000001 in doubles: a drift of exactly 7% must still pass at 7%.
  GateConfig c;
  c.selftest_drift.max_pct = 7;
  WindowMeasures m = QuietWindow();
  m.server.selftest_drift = 0.07;
  EXPECT_TRUE(JudgeWindow(m, c).empty());
}

TEST(GatesJudgeTest, SelftestDriftThresholdIsTheLargerOfConfiguredAndSpreadCapped) {
  SelftestDriftGate gate;  // 10%, 4 x spread
  auto expect = [&](std::optional<double> spread, double max_pct, bool calibrated, bool capped) {
    DriftThreshold t = SelftestDriftThreshold(gate, spread);
    EXPECT_DOUBLE_EQ(t.max_pct, max_pct) << spread.value_or(-1);
    EXPECT_EQ(t.calibrated, calibrated) << spread.value_or(-1);
    EXPECT_EQ(t.capped, capped) << spread.value_or(-1);
  };
  expect(std::nullopt, 10, false, false);  // no calibration: the configured threshold
  expect(0.02, 10, false, false);          // 4 x 2% = 8% < 10%
  expect(0.025, 10, false, false);         // 4 x 2.5% = 10%: not larger
  expect(0.062, 24.8, true, false);        // 4 x 6.2%
  expect(0.125, 50, true, false);          // 4 x 12.5% = 50%: at the cap, not over it
  expect(0.3, 50, true, true);             // 4 x 30% = 120%, held at 50%
  gate.spread_multiple = 0;                // calibration off
  expect(0.3, 10, false, false);
  gate.spread_multiple = 4;
  gate.max_pct = 60;  // a configured threshold above the cap stands
  expect(0.3, 60, false, false);
}

TEST(GatesJudgeTest, SelftestDriftWithinTheCalibratedThresholdPasses) {
  WindowMeasures m = QuietWindow();
  m.server.selftest_drift = 0.20;  // fails 10%, passes 4 x 6.2% = 24.8%
  EXPECT_EQ(OnlyReason(m).text, "selftest_drift: server host +20% > 10%");
  m.server.selftest_spread = 0.062;
  EXPECT_TRUE(JudgeWindow(m, GateConfig{}).empty());
  m.server.selftest_drift = -0.24;
  EXPECT_TRUE(JudgeWindow(m, GateConfig{}).empty());
}

TEST(GatesJudgeTest, SelftestDriftBeyondTheCalibratedThresholdSaysWhereItCameFrom) {
  WindowMeasures m = QuietWindow();
  m.server.selftest_drift = 0.34;
  m.server.selftest_spread = 0.062;
  GateReason r = OnlyReason(m);
  EXPECT_EQ(r.gate, "selftest_drift");
  EXPECT_EQ(r.text, "selftest_drift: server host +34% > 24.8% (calibrated: 4 x spread 6.2%)");
  EXPECT_DOUBLE_EQ(r.value, 34);
  EXPECT_DOUBLE_EQ(r.threshold, 24.8);
  EXPECT_EQ(r.host, "server");
  m.server.selftest_drift = 0;
  m.load.selftest_drift = 0.30;
  m.load.selftest_spread = 0.064;
  GateConfig c;
  c.selftest_drift.spread_multiple = 3.5;  // 3.5 x 6.4% = 22.4%
  r = OnlyReason(m, c);
  EXPECT_EQ(r.text, "selftest_drift: load host +30% > 22.4% (calibrated: 3.5 x spread 6.4%)");
  EXPECT_DOUBLE_EQ(r.threshold, 22.4);
  // The configured threshold is the larger: the reason keeps its plain form.
  m.load.selftest_drift = 0;
  m.server.selftest_drift = 0.142;
  m.server.selftest_spread = 0.01;
  EXPECT_EQ(OnlyReason(m).text, "selftest_drift: server host +14.2% > 10%");
}

TEST(GatesJudgeTest, ASelftestOffItsCpuInEveryPassSaysWhy) {
  WindowMeasures m = QuietWindow();
  m.load.selftest_drift = 0.98;
  m.load.selftest_descheduled = true;
  EXPECT_EQ(OnlyReason(m).text,
            "selftest_drift: load host +98% > 10%; off its CPU in every pass: a process competes "
            "for the pinned CPU");
  m.load.selftest_drift = 0.05;  // within the threshold: nothing to say
  EXPECT_TRUE(JudgeWindow(m, GateConfig{}).empty());
}

TEST(GatesJudgeTest, ASelftestTwiceAsSlowFailsHoweverNoisyTheCalibration) {
  WindowMeasures m = QuietWindow();
  m.server.selftest_drift = 1.0;  // twice as slow
  m.server.selftest_spread = 0.3;
  GateReason r = OnlyReason(m);
  EXPECT_EQ(r.text,
            "selftest_drift: server host +100% > 50% (calibrated: 4 x spread 30%, capped at 50%)");
  EXPECT_EQ(r.threshold, 50);
  // The seed case, 2.7 times as slow, on a host whose self-tests spread absurdly.
  m.server.selftest_drift = 1.7;
  m.server.selftest_spread = 5;
  EXPECT_EQ(OnlyReason(m).text,
            "selftest_drift: server host +170% > 50% (calibrated: 4 x spread 500%, capped at 50%)");
  // However large the multiple.
  GateConfig c;
  c.selftest_drift.spread_multiple = 100;
  m.server.selftest_drift = 1.0;
  EXPECT_EQ(OnlyReason(m, c).threshold, 50);
}

TEST(GatesJudgeTest, ATinySpreadIsShownWithTheDecimalsItNeeds) {
  GateConfig c;
  c.selftest_drift.max_pct = 0;
  WindowMeasures m = QuietWindow();
  m.server.selftest_drift = 0.01;
  m.server.selftest_spread = 0.0004;  // 0.04%: 4 x 0.04% = 0.16%
  m.load.selftest_drift = 0;
  EXPECT_EQ(OnlyReason(m, c).text,
            "selftest_drift: server host +1% > 0.2% (calibrated: 4 x spread 0.04%)");
}

TEST(GatesJudgeTest, EachSchedulingFailureIsAReason) {
  WindowMeasures m = QuietWindow();
  m.scheduling_failures = {"background_scheduling: pid 12 (nginx) nice 10 > 0 (agent s1)",
                           "cgroup cpu.max 50000 100000 (agent l1)"};
  auto reasons = JudgeWindow(m, GateConfig{});
  EXPECT_EQ(Texts(reasons), (std::vector<std::string>{
                                "background_scheduling: pid 12 (nginx) nice 10 > 0 (agent s1)",
                                "background_scheduling: cgroup cpu.max 50000 100000 (agent l1)"}));
  EXPECT_EQ(Gates(reasons),
            (std::vector<std::string>{"background_scheduling", "background_scheduling"}));
}

TEST(GatesJudgeTest, OnBatteryFailsUnlessAllowed) {
  WindowMeasures m = QuietWindow();
  m.load.on_battery = true;
  EXPECT_EQ(OnlyReason(m).text, "on_battery: load host is on battery power");
  GateConfig allowed;
  allowed.on_battery.enabled = false;
  EXPECT_TRUE(JudgeWindow(m, allowed).empty());
}

TEST(GatesJudgeTest, SwapAtThresholdPassesAboveFails) {
  WindowMeasures m = QuietWindow();
  m.server.swap_in_pages = 1;
  GateReason r = OnlyReason(m);
  EXPECT_EQ(r.text, "swap: server host 1 pages > 0 (1 in, 0 out)");
  EXPECT_EQ(r.value, 1);
  GateConfig c;
  c.swap.max_pages = 100;
  m.server.swap_in_pages = 60;
  m.server.swap_out_pages = 40;
  EXPECT_TRUE(JudgeWindow(m, c).empty());
  m.server.swap_out_pages = 41;
  EXPECT_EQ(OnlyReason(m, c).text, "swap: server host 101 pages > 100 (60 in, 41 out)");
}

TEST(GatesJudgeTest, SwapJudgesTheCountsAvailable) {
  WindowMeasures m = QuietWindow();
  m.load.swap_in_pages.reset();
  m.load.swap_out_pages = 5;
  EXPECT_EQ(OnlyReason(m).text, "swap: load host 5 pages > 0 (5 out)");
}

TEST(GatesJudgeTest, TargetExitedNamesItsExitAndLastLogLines) {
  WindowMeasures m = QuietWindow();
  m.target_exited = true;
  m.target_exit_text = "killed by signal 9 (SIGKILL)";
  EXPECT_EQ(OnlyReason(m).text, "target_exited: killed by signal 9 (SIGKILL) during the window");
  m.target_last_log_lines = {"listening on 8080", "out of memory"};
  GateReason r = OnlyReason(m);
  EXPECT_EQ(r.gate, "target_exited");
  EXPECT_EQ(r.text,
            "target_exited: killed by signal 9 (SIGKILL) during the window; last log lines: "
            "listening on 8080 | out of memory");
}

TEST(GatesJudgeTest, EachConformanceDiffIsAReason) {
  WindowMeasures m = QuietWindow();
  m.conformance_diffs = {"scenario \"hello\": status: expected 200, got 500",
                         "negative \"missing\": status: expected 404, got 200"};
  EXPECT_EQ(Texts(JudgeWindow(m, GateConfig{})),
            (std::vector<std::string>{
                "conformance: scenario \"hello\": status: expected 200, got 500",
                "conformance: negative \"missing\": status: expected 404, got 200"}));
}

TEST(GatesJudgeTest, ReasonsComeInTheDocumentedOrder) {
  WindowMeasures m = BadWindow();
  m.load.foreign_mean_pct = 50;
  EXPECT_EQ(Gates(JudgeWindow(m, GateConfig{})),
            (std::vector<std::string>{"conformance", "target_exited", "background_scheduling",
                                      "on_battery", "selftest_drift", "foreign_cpu", "foreign_cpu",
                                      "steal", "throttling", "frequency", "swap", "generator_bound",
                                      "error_rate"}));
}

// Unavailable readings: with thresholds that fail any present reading, nothing fails.
TEST(GatesJudgeTest, UnavailableReadingsNeverFail) {
  GateConfig strict;
  strict.foreign_cpu.max_pct = 0;
  strict.steal.max_pct = 0;
  strict.frequency.min_ratio = 1;
  strict.selftest_drift.max_pct = 0;
  strict.generator_bound.load_busy_max_pct = 0;
  WindowMeasures m;
  m.requests = 1000;
  EXPECT_TRUE(JudgeWindow(m, strict).empty())
      << ::testing::PrintToString(Texts(JudgeWindow(m, strict)));
}

// The same readings present and at 0 do fail, so the test above is not vacuous, and an absent
// reading is not read as 0.
TEST(GatesJudgeTest, UnavailableIsNotReadAsZero) {
  GateConfig strict;
  strict.frequency.min_ratio = 1;
  WindowMeasures m;
  m.requests = 1000;
  m.server.min_freq_ratio = 0.0;
  EXPECT_EQ(OnlyReason(m, strict).text, "frequency: server host cur/max 0 < 1");
  m.server.min_freq_ratio.reset();
  m.server.swap_in_pages = 0;
  m.server.swap_out_pages = 0;
  m.server.on_battery = false;
  m.server.throttle_events = 0;
  EXPECT_TRUE(JudgeWindow(m, strict).empty());
  m.server.foreign_mean_pct = 0.1;
  strict.foreign_cpu.max_pct = 0;
  EXPECT_EQ(OnlyReason(m, strict).text, "foreign_cpu: server host 0.1% > 0%");
}

TEST(GatesJudgeTest, DisablingAGateRemovesOnlyItsReasons) {
  struct Case {
    std::string gate;
    std::function<void(GateConfig&)> disable;
  };
  std::vector<Case> cases = {
      {"conformance", [](GateConfig& c) { c.conformance.enabled = false; }},
      {"target_exited", [](GateConfig& c) { c.target_exited.enabled = false; }},
      {"background_scheduling", [](GateConfig& c) { c.background_scheduling.enabled = false; }},
      {"on_battery", [](GateConfig& c) { c.on_battery.enabled = false; }},
      {"selftest_drift", [](GateConfig& c) { c.selftest_drift.enabled = false; }},
      {"foreign_cpu", [](GateConfig& c) { c.foreign_cpu.enabled = false; }},
      {"steal", [](GateConfig& c) { c.steal.enabled = false; }},
      {"throttling", [](GateConfig& c) { c.throttling.enabled = false; }},
      {"frequency", [](GateConfig& c) { c.frequency.enabled = false; }},
      {"swap", [](GateConfig& c) { c.swap.enabled = false; }},
      {"generator_bound", [](GateConfig& c) { c.generator_bound.enabled = false; }},
      {"error_rate", [](GateConfig& c) { c.error_rate.enabled = false; }},
  };
  const std::vector<std::string> all = Gates(JudgeWindow(BadWindow(), GateConfig{}));
  ASSERT_EQ(all.size(), cases.size());
  GateConfig none;
  for (const auto& c : cases) {
    GateConfig config;
    c.disable(config);
    c.disable(none);
    std::vector<std::string> expected;
    for (const auto& gate : all) {
      if (gate != c.gate) expected.push_back(gate);
    }
    EXPECT_EQ(Gates(JudgeWindow(BadWindow(), config)), expected) << c.gate;
  }
  EXPECT_TRUE(JudgeWindow(BadWindow(), none).empty());
}

TEST(GatesJudgeTest, ChangedThresholdsApply) {
  GateConfig c;
  c.foreign_cpu.max_pct = 150;
  c.steal.max_pct = 25;
  c.frequency.min_ratio = 0.4;
  c.selftest_drift.max_pct = 60;
  c.error_rate.max = 0.2;
  c.swap.max_pages = 8;
  WindowMeasures m = BadWindow();
  m.conformance_diffs.clear();
  m.target_exited = false;
  m.scheduling_failures.clear();
  m.server.on_battery = false;
  m.server.throttle_events = 0;
  m.generator_bound = false;
  EXPECT_TRUE(JudgeWindow(m, c).empty()) << ::testing::PrintToString(Texts(JudgeWindow(m, c)));
}

TEST(GatesModeTest, WarnRecordsTheSameReasonsAsEnforce) {
  WindowMeasures m = QuietWindow();
  m.server.foreign_mean_pct = 212;
  m.load.steal_pct = 7.1;
  GateConfig warn;
  warn.mode = GateMode::kWarn;
  auto warned = JudgeWindow(m, warn);
  auto enforced = JudgeWindow(m, GateConfig{});
  EXPECT_EQ(Texts(warned), Texts(enforced));
  EXPECT_EQ(warned.size(), 2u);
}

TEST(GatesTest, EachHostReadingNamesItsHost) {
  WindowMeasures m = QuietWindow();
  m.server.foreign_mean_pct = 212;
  m.load.steal_pct = 7.1;
  m.mismatches = 500;
  auto reasons = JudgeWindow(m, GateConfig{});
  ASSERT_EQ(reasons.size(), 3u);
  EXPECT_EQ(reasons[0].host, "server");
  EXPECT_EQ(reasons[1].host, "load");
  EXPECT_EQ(reasons[2].gate, "error_rate");
  EXPECT_EQ(reasons[2].host, "");
}

// --- Reading [gates]. ---

struct ReadResult {
  GateConfig config;
  Status status;
};

// Reads `body` as the lines after "[gates]" of c.toml (so the body's first line is line 2).
ReadResult Read(const std::string& body, GateConfig start = GateConfig{}) {
  ReadResult r{start, Status::Ok()};
  auto doc = config::ParseToml("[gates]\n" + body, "c.toml");
  EXPECT_TRUE(doc.ok()) << doc.status().message();
  if (!doc.ok()) return r;
  config::Issues issues("c.toml");
  ReadGatesTable(doc->at("gates"), issues, r.config);
  r.status = issues.First();
  return r;
}

std::string ReadError(const std::string& body) { return Read(body).status.message(); }

TEST(GatesTomlTest, EmptyTableKeepsEveryDefault) {
  ReadResult r = Read("");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  GateConfig d;
  EXPECT_EQ(r.config.mode, d.mode);
  EXPECT_EQ(r.config.foreign_cpu.max_pct, d.foreign_cpu.max_pct);
  EXPECT_EQ(r.config.error_rate.max, d.error_rate.max);
  EXPECT_TRUE(r.config.on_battery.enabled);
}

TEST(GatesTomlTest, EveryKeyIsRead) {
  ReadResult r = Read(R"(mode = "warn"
conformance = false
target_exited = false
background_scheduling = false
allow_battery = true
selftest_drift = false
selftest_drift_max_pct = 15
selftest_drift_spread_multiple = 2.5
foreign_cpu = false
foreign_cpu_max_pct = 50.5
steal = false
steal_max_pct = 10
throttling = false
frequency = false
min_freq_ratio = 0.9
swap = false
swap_max_pages = 64
generator_bound = false
load_busy_max_pct = 90
error_rate = false
error_rate_max = 0.05
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const GateConfig& c = r.config;
  EXPECT_EQ(c.mode, GateMode::kWarn);
  EXPECT_FALSE(c.conformance.enabled);
  EXPECT_FALSE(c.target_exited.enabled);
  EXPECT_FALSE(c.background_scheduling.enabled);
  EXPECT_FALSE(c.on_battery.enabled);
  EXPECT_FALSE(c.selftest_drift.enabled);
  EXPECT_EQ(c.selftest_drift.max_pct, 15);
  EXPECT_EQ(c.selftest_drift.spread_multiple, 2.5);
  EXPECT_FALSE(c.foreign_cpu.enabled);
  EXPECT_EQ(c.foreign_cpu.max_pct, 50.5);
  EXPECT_FALSE(c.steal.enabled);
  EXPECT_EQ(c.steal.max_pct, 10);
  EXPECT_FALSE(c.throttling.enabled);
  EXPECT_FALSE(c.frequency.enabled);
  EXPECT_EQ(c.frequency.min_ratio, 0.9);
  EXPECT_FALSE(c.swap.enabled);
  EXPECT_EQ(c.swap.max_pages, 64u);
  EXPECT_FALSE(c.generator_bound.enabled);
  EXPECT_EQ(c.generator_bound.load_busy_max_pct, 90);
  EXPECT_FALSE(c.error_rate.enabled);
  EXPECT_EQ(c.error_rate.max, 0.05);
}

TEST(GatesTomlTest, EnforceAndAllowBatteryFalseReadBack) {
  GateConfig start;
  start.mode = GateMode::kWarn;
  start.on_battery.enabled = false;
  ReadResult r = Read("mode = \"enforce\"\nallow_battery = false\n", start);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.config.mode, GateMode::kEnforce);
  EXPECT_TRUE(r.config.on_battery.enabled);
}

TEST(GatesTomlTest, AbsentKeysKeepWhatTheConfigHeld) {
  GateConfig start;
  start.steal.max_pct = 42;
  ReadResult r = Read("foreign_cpu_max_pct = 30\n", start);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.config.steal.max_pct, 42);
  EXPECT_EQ(r.config.foreign_cpu.max_pct, 30);
}

TEST(GatesTomlTest, RangeEndsAreAccepted) {
  ReadResult r = Read(R"(foreign_cpu_max_pct = 10000
steal_max_pct = 0
min_freq_ratio = 1
error_rate_max = 1
selftest_drift_max_pct = 1000
selftest_drift_spread_multiple = 100
swap_max_pages = 1000000000
load_busy_max_pct = 100
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.config.foreign_cpu.max_pct, 10000);
  EXPECT_EQ(r.config.swap.max_pages, 1000000000u);
  EXPECT_EQ(r.config.selftest_drift.spread_multiple, 100);
  r = Read("selftest_drift_spread_multiple = 0\n");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.config.selftest_drift.spread_multiple, 0);
}

TEST(GatesTomlTest, RemeasureMaxIsReadAndTheDefaultIsAQuarterOfThePlan) {
  GateConfig defaults;
  EXPECT_FALSE(defaults.remeasure_max);
  EXPECT_EQ(RemeasureBudget(defaults, 24), 6);
  EXPECT_EQ(RemeasureBudget(defaults, 25), 7);  // rounded up
  EXPECT_EQ(RemeasureBudget(defaults, 2), 2);   // at least 2
  ReadResult r = Read("remeasure_max = 0\n");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_TRUE(r.config.remeasure_max);
  EXPECT_EQ(RemeasureBudget(r.config, 24), 0);
  r = Read("remeasure_max = 40\n");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(RemeasureBudget(r.config, 24), 40);
  EXPECT_EQ(ReadError("remeasure_max = 1.5\n"),
            "c.toml:2: gates.remeasure_max: expected a whole number of windows from 0 to 100000, "
            "got 1.5");
  EXPECT_EQ(ReadError("remeasure_max = -1\n"),
            "c.toml:2: gates.remeasure_max: expected a whole number of windows from 0 to 100000, "
            "got -1");
}

TEST(GatesTomlTest, BadValuesAreOneLineErrorsWithKeyFormAndValue) {
  EXPECT_EQ(ReadError("foreign_cpu_max_pct = \"ten\"\n"),
            "c.toml:2: gates.foreign_cpu_max_pct: expected a number from 0 to 10000, got \"ten\"");
  EXPECT_EQ(ReadError("foreign_cpu_max_pct = 10001\n"),
            "c.toml:2: gates.foreign_cpu_max_pct: expected a number from 0 to 10000, got 10001");
  EXPECT_EQ(ReadError("foreign_cpu_max_pct = nan\n"),
            "c.toml:2: gates.foreign_cpu_max_pct: expected a number from 0 to 10000, got nan");
  EXPECT_EQ(ReadError("steal_max_pct = -1\n"),
            "c.toml:2: gates.steal_max_pct: expected a number from 0 to 100, got -1");
  EXPECT_EQ(ReadError("min_freq_ratio = 1.5\n"),
            "c.toml:2: gates.min_freq_ratio: expected a number from 0 to 1 such as 0.75, got 1.5");
  EXPECT_EQ(ReadError("error_rate_max = 2\n"),
            "c.toml:2: gates.error_rate_max: expected a fraction from 0 to 1 such as 0.01, got 2");
  EXPECT_EQ(ReadError("selftest_drift_max_pct = inf\n"),
            "c.toml:2: gates.selftest_drift_max_pct: expected a number from 0 to 1000, got inf");
  EXPECT_EQ(ReadError("selftest_drift_spread_multiple = -1\n"),
            "c.toml:2: gates.selftest_drift_spread_multiple: expected a number from 0 to 100 "
            "such as 4, got -1");
  EXPECT_EQ(ReadError("selftest_drift_spread_multiple = \"4x\"\n"),
            "c.toml:2: gates.selftest_drift_spread_multiple: expected a number from 0 to 100 "
            "such as 4, got \"4x\"");
  EXPECT_EQ(ReadError("load_busy_max_pct = true\n"),
            "c.toml:2: gates.load_busy_max_pct: expected a number from 0 to 100, got true");
  EXPECT_EQ(ReadError("swap_max_pages = 1.5\n"),
            "c.toml:2: gates.swap_max_pages: expected a whole number of pages from 0 to "
            "1000000000, got 1.5");
  EXPECT_EQ(ReadError("throttling = \"yes\"\n"),
            "c.toml:2: gates.throttling: expected true or false, got \"yes\"");
  EXPECT_EQ(ReadError("allow_battery = 1\n"),
            "c.toml:2: gates.allow_battery: expected true or false, got 1");
  EXPECT_EQ(ReadError("mode = \"loud\"\n"),
            "c.toml:2: gates.mode: expected \"enforce\" or \"warn\", got \"loud\"");
}

TEST(GatesTomlTest, UnknownKeyIsAnError) {
  EXPECT_EQ(ReadError("steal = true\nforeign_cpu_max = 25\n"),
            "c.toml:3: gates.foreign_cpu_max: unknown key (known: mode, conformance, "
            "target_exited, background_scheduling, allow_battery, selftest_drift, "
            "selftest_drift_max_pct, selftest_drift_spread_multiple, foreign_cpu, "
            "foreign_cpu_max_pct, steal, steal_max_pct, "
            "throttling, frequency, min_freq_ratio, swap, swap_max_pages, generator_bound, "
            "load_busy_max_pct, error_rate, error_rate_max, service_exited, probe, remeasure_max)");
}

TEST(GatesTomlTest, TheEarliestProblemIsReported) {
  EXPECT_EQ(ReadError("steal_max_pct = 500\nmode = 3\n"),
            "c.toml:2: gates.steal_max_pct: expected a number from 0 to 100, got 500");
}

TEST(GatesTomlTest, AValueThatIsNotATableIsAnError) {
  auto doc = config::ParseToml("gates = 5\n", "c.toml");
  ASSERT_TRUE(doc.ok());
  config::Issues issues("c.toml");
  GateConfig c;
  ReadGatesTable(doc->at("gates"), issues, c);
  EXPECT_EQ(issues.First().message(), "c.toml:1: gates: expected a table ([gates]), got 5");
}

}  // namespace
}  // namespace benchlab
