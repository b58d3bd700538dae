#include "coordinator/outcome.h"

#include <gtest/gtest.h>

namespace benchlab {
namespace {

WindowReason Gate(const std::string& name) { return FromGate({name, name + ": ...", 1, 0, ""}); }

WindowReason Of(ReasonKind kind, const std::string& name) {
  WindowReason r;
  r.kind = kind;
  r.name = name;
  r.text = name + ": ...";
  return r;
}

TEST(OutcomeTest, VerdictNamesRoundTrip) {
  for (Verdict v : {Verdict::kValid, Verdict::kInvalid, Verdict::kFailed, Verdict::kSkipped}) {
    EXPECT_EQ(ParseVerdict(VerdictName(v)), v);
  }
  EXPECT_EQ(ParseVerdict("broken"), std::nullopt);
}

TEST(OutcomeTest, NoReasonsIsValidInEitherMode) {
  EXPECT_EQ(DecideVerdict({}, GateMode::kEnforce), Verdict::kValid);
  EXPECT_EQ(DecideVerdict({}, GateMode::kWarn), Verdict::kValid);
}

TEST(OutcomeTest, AGateInvalidatesInEnforceModeOnly) {
  EXPECT_EQ(DecideVerdict({Gate("steal")}, GateMode::kEnforce), Verdict::kInvalid);
  EXPECT_EQ(DecideVerdict({Gate("steal")}, GateMode::kWarn), Verdict::kValid);
}

TEST(OutcomeTest, WarnModeStillFailsOrSkipsAWindowWithoutAMeasurement) {
  for (GateMode mode : {GateMode::kEnforce, GateMode::kWarn}) {
    EXPECT_EQ(DecideVerdict({Gate("steal"), Gate("target_exited")}, mode), Verdict::kFailed);
    EXPECT_EQ(DecideVerdict({Gate("steal"), Gate("conformance")}, mode), Verdict::kSkipped);
  }
}

TEST(OutcomeTest, AFailureOutranksEveryGate) {
  for (ReasonKind kind :
       {ReasonKind::kStep, ReasonKind::kAgentLost, ReasonKind::kCoordinatorRestart}) {
    EXPECT_EQ(DecideVerdict({Gate("conformance"), Of(kind, "run_load")}, GateMode::kWarn),
              Verdict::kFailed);
  }
}

TEST(OutcomeTest, OnlyALostAgentOrARestartIsMeasuredAgain) {
  EXPECT_TRUE(MeasuredAgain({Gate("steal"), Of(ReasonKind::kAgentLost, "run_load")}));
  EXPECT_TRUE(MeasuredAgain({Of(ReasonKind::kCoordinatorRestart, "coordinator_restart")}));
  EXPECT_FALSE(MeasuredAgain({Of(ReasonKind::kStep, "run_load"), Gate("target_exited")}));
  EXPECT_FALSE(MeasuredAgain({}));
}

TEST(OutcomeTest, ColumnsRoundTrip) {
  WindowReason gate =
      FromGate({"foreign_cpu", "foreign_cpu: server host 212% > 25%", 212, 25, "server"});
  WindowReason step{ReasonKind::kStep,
                    "start_target",
                    "UNAVAILABLE",
                    "s1",
                    std::nullopt,
                    std::nullopt,
                    "start_target: agent s1: resolve x: Name or service not known"};
  const std::vector<WindowReason> reasons = {gate, step};
  EXPECT_EQ(ReasonTextsJson(reasons),
            R"(["foreign_cpu: server host 212% > 25%",)"
            R"("start_target: agent s1: resolve x: Name or service not known"])");
  EXPECT_EQ(OutcomeJson(reasons),
            R"([{"host":"server","kind":"gate","name":"foreign_cpu","threshold":25.0,)"
            R"("value":212.0},{"code":"UNAVAILABLE","host":"s1","kind":"step",)"
            R"("name":"start_target"}])");
  EXPECT_EQ(ParseOutcome(OutcomeJson(reasons), ReasonTextsJson(reasons)), reasons);
  EXPECT_EQ(OutcomeJson({}), "[]");
}

TEST(OutcomeTest, TextsWithoutAnOutcomeComeBackAsUnnamedSteps) {
  std::vector<WindowReason> back = ParseOutcome("[]", R"(["a", "b"])");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].kind, ReasonKind::kStep);
  EXPECT_EQ(back[1].text, "b");
  EXPECT_TRUE(ParseOutcome("not json", "neither").empty());
  EXPECT_EQ(ParseOutcome(R"([{"kind":"martian"}, 3])", "[]").size(), 1u);
}

}  // namespace
}  // namespace benchlab
