// The side services' gates (docs/services.md, docs/gates.md): service_exited fails the window,
// and [gates] probe.NAME.max bounds a probe's rise, refusing a window whose rise is over it or
// cannot be known.
#include <gtest/gtest.h>

#include "common/config_toml.h"
#include "coordinator/gates.h"
#include "coordinator/gates_toml.h"
#include "coordinator/outcome.h"

namespace benchlab {
namespace {

WindowMeasures WithProbe(std::optional<double> delta, const std::string& unavailable = "") {
  WindowMeasures m;
  m.requests = 1000;
  m.has_services = true;
  m.probes.push_back({"pg", "checkpoints", delta, unavailable});
  return m;
}

GateConfig Bounded(double max) {
  GateConfig c;
  c.probe_max["checkpoints"] = max;
  return c;
}

TEST(ProbeGateTest, ARiseOverTheBoundRefusesTheWindowNamingTheProbe) {
  auto reasons = JudgeWindow(WithProbe(1), Bounded(0));
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0].gate, "probe.checkpoints");
  EXPECT_EQ(reasons[0].text, "probe.checkpoints: service pg rose by 1 > 0");
  EXPECT_EQ(reasons[0].value, 1);
  EXPECT_EQ(reasons[0].threshold, 0);
  EXPECT_EQ(DecideVerdict({FromGate(reasons[0])}, GateMode::kEnforce), Verdict::kInvalid);
}

TEST(ProbeGateTest, ARiseAtTheBoundPasses) {
  EXPECT_TRUE(JudgeWindow(WithProbe(0), Bounded(0)).empty());
  EXPECT_TRUE(JudgeWindow(WithProbe(2), Bounded(2)).empty());
  // Unbounded probes are recorded, never judged.
  EXPECT_TRUE(JudgeWindow(WithProbe(50), GateConfig{}).empty());
}

TEST(ProbeGateTest, ABoundThatCannotBeCheckedRefusesTheWindow) {
  auto reasons =
      JudgeWindow(WithProbe(std::nullopt, "counter reset: 9 before, 0 after"), Bounded(0));
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0].text,
            "probe.checkpoints: service pg unavailable (counter reset: 9 before, 0 after)");
  WindowMeasures none;
  none.requests = 1000;
  none.has_services = true;
  reasons = JudgeWindow(none, Bounded(0));
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0].text, "probe.checkpoints: no service of the target reports it");
  // A target without side services is not judged by the services' probes.
  none.has_services = false;
  EXPECT_TRUE(JudgeWindow(none, Bounded(0)).empty());
}

TEST(ProbeGateTest, ADeadServiceFailsTheWindowEvenInWarnMode) {
  WindowMeasures m;
  m.requests = 1000;
  m.has_services = true;
  m.service_exits.push_back("pg exit status 1; last log lines: FATAL: out of memory");
  auto reasons = JudgeWindow(m, GateConfig{});
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0].text,
            "service_exited: pg exit status 1; last log lines: FATAL: out of "
            "memory");
  EXPECT_EQ(DecideVerdict({FromGate(reasons[0])}, GateMode::kWarn), Verdict::kFailed);
  GateConfig off;
  off.service_exited.enabled = false;
  EXPECT_TRUE(JudgeWindow(m, off).empty());
}

GateConfig Read(const std::string& body, std::string* error) {
  GateConfig out;
  auto doc = config::ParseToml("[gates]\n" + body, "c.toml");
  if (!doc.ok()) {
    *error = doc.status().message();
    return out;
  }
  config::Issues issues("c.toml");
  ReadGatesTable(doc->at("gates"), issues, out);
  *error = issues.empty() ? "" : issues.First().message();
  return out;
}

TEST(ProbeGateTest, BoundsAreReadFromTheGatesTable) {
  std::string error;
  GateConfig c = Read("probe.checkpoints.max = 0\nprobe.vacuums = { max = 2.5 }\n", &error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(c.probe_max.at("checkpoints"), 0);
  EXPECT_EQ(c.probe_max.at("vacuums"), 2.5);
  Read("probe.checkpoints.max = -1\n", &error);
  EXPECT_EQ(error, "c.toml:2: gates.probe.checkpoints.max: expected a number of 0 or more, got -1");
  Read("probe.checkpoints.maximum = 1\n", &error);
  EXPECT_NE(error.find("c.toml:2:"), std::string::npos) << error;
  EXPECT_NE(error.find("maximum"), std::string::npos) << error;
  Read("probe.Bad_Name.max = 1\n", &error);
  EXPECT_NE(error.find("expected a probe name"), std::string::npos) << error;
}

}  // namespace
}  // namespace benchlab
