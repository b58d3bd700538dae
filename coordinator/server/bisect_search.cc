#include "coordinator/server/bisect_search.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/parse.h"
#include "coordinator/outcome.h"

namespace benchlab {
namespace {

CommitState CommitStateOfDecision(BisectDecision d) {
  switch (d) {
    case BisectDecision::kLikeGood:
      return CommitState::kGood;
    case BisectDecision::kLikeBad:
      return CommitState::kBad;
    default:
      return CommitState::kUndecided;
  }
}

// Whether every window of build `name` in the look failed because its commit did not build:
// the window's outcome names the step "build" (the agent's StartTarget refusal was marked
// rpc::kBuildFailedReason, docs/store.md "windows"), whose text is `why`.
bool BuildFailedIn(const std::vector<WindowRow>& windows, const std::string& name,
                   std::string* why) {
  bool any = false;
  for (const WindowRow& w : windows) {
    if (w.target != name) continue;
    const std::vector<WindowReason> reasons = ParseOutcome(w.outcome, w.reasons);
    auto build = std::find_if(reasons.begin(), reasons.end(), [](const WindowReason& r) {
      return r.kind == ReasonKind::kStep && r.name == "build";
    });
    if (w.verdict != "failed" || build == reasons.end()) return false;
    any = true;
    if (why->empty()) *why = build->text;
  }
  return any;
}

}  // namespace

std::string BisectRuleJson(const BisectRule& rule) {
  return nlohmann::json{{"confidence", rule.confidence},
                        {"margin", rule.margin},
                        {"min_rounds", rule.min_rounds},
                        {"max_rounds", rule.max_rounds},
                        {"better", rule.better == Better::kLower ? "lower" : "higher"},
                        {"planned_steps", rule.planned_steps}}
      .dump();
}

std::optional<BisectRule> BisectRuleFromJson(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  BisectRule rule;
  try {
    rule.confidence = j.at("confidence").get<double>();
    rule.margin = j.at("margin").get<double>();
    rule.min_rounds = j.at("min_rounds").get<int>();
    rule.max_rounds = j.at("max_rounds").get<int>();
    rule.better = j.at("better").get<std::string>() == "lower" ? Better::kLower : Better::kHigher;
    rule.planned_steps = j.at("planned_steps").get<int>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  return rule;
}

CandidateJudgement JudgeCandidate(const std::vector<ReportInput>& looks, const BisectionRow& search,
                                  const BisectCell& cell, Metric figure, const BisectRule& rule) {
  const BisectTargetNames names = BisectTargetsOf(search.target);
  CandidateJudgement out;
  std::vector<BisectRound> rounds;
  for (const ReportInput& look : looks) {
    // An end that does not build leaves nothing to measure against: the search stops.
    for (const auto& [end, oid] :
         {std::pair{names.good, search.good_oid}, std::pair{names.bad, search.bad_oid}}) {
      std::string why;
      if (BuildFailedIn(look.windows, end, &why)) {
        out.kind = CandidateJudgement::Kind::kEndFailed;
        out.why = "the " + std::string(end == names.good ? "good" : "bad") + " end " +
                  oid.substr(0, 12) + " does not build: " + why;
        return out;
      }
    }
    std::string why;
    if (BuildFailedIn(look.windows, names.candidate, &why)) {
      out.kind = CandidateJudgement::Kind::kDecided;
      out.why = why;
      out.step.build = "failed";
      out.step.decision = CommitStateName(CommitState::kBuildFailed);
      return out;
    }
    std::vector<Measurement> windows;
    for (const WindowRow& w : look.windows) {
      windows.push_back(ToMeasurement(w, ServicesCpuOf(look, w.id)));
    }
    for (const BisectRound& r : BisectRoundsOf(windows, search.target, cell, figure)) {
      rounds.push_back(r);
    }
  }
  out.d = Decide(rounds, rule);
  if (out.d.decision == BisectDecision::kMoreRounds) {
    const bool spent = static_cast<int>(rounds.size()) >= rule.max_rounds ||
                       static_cast<int>(looks.size()) > 2 * rule.max_rounds;
    if (!spent) return out;
    out.d.decision = BisectDecision::kUndecided;
  }
  out.kind = CandidateJudgement::Kind::kDecided;
  out.why = out.d.reason;
  out.step.decision = CommitStateName(CommitStateOfDecision(out.d.decision));
  out.step.rounds = out.d.rounds;
  if (out.d.position.ok()) {
    out.step.estimate = out.d.position.estimate;
    out.step.low = out.d.position.low;
    out.step.high = out.d.position.high;
  }
  for (const BisectRound& r : rounds) out.step.figures.push_back({r.candidate, r.good, r.bad});
  // The ends no longer show the regression: nothing can be told by them (analysis/bisect.h).
  out.ends_equal = out.d.decision == BisectDecision::kUndecided &&
                   out.d.reason.find("the ends differ") != std::string::npos;
  return out;
}

Result<int> RecordCandidate(Store& store, BisectionRow& search, BisectRange& range, size_t i,
                            const std::vector<int64_t>& campaign_ids, CandidateJudgement& judged,
                            std::vector<double>& error_bounds) {
  const BisectCommit& candidate = range.commit(i);
  BisectStepRow& step = judged.step;
  step.bisection_id = search.id;
  step.oid = candidate.oid;
  step.subject = candidate.subject;
  step.position = static_cast<int>(i);
  step.campaigns = campaign_ids;
  if (step.build == "built" && judged.d.step.ok()) {
    search.size = judged.d.step.estimate;
    search.size_low = judged.d.step.low;
    search.size_high = judged.d.step.high;
  }
  if (!judged.ends_equal) {
    const CommitState state = step.build == "failed" ? CommitState::kBuildFailed
                                                     : CommitStateOfDecision(judged.d.decision);
    BENCHLAB_RETURN_IF_ERROR(range.Mark(i, state));
    if (state == CommitState::kGood || state == CommitState::kBad) {
      error_bounds.push_back(judged.d.error_bound);
    }
  }
  return store.AppendBisectStep(step);
}

std::string FoundLine(const BisectCommit& culprit, int measured, int windows, double confidence) {
  return "first bad commit: " + culprit.oid + " " + culprit.subject + " (after " +
         std::to_string(measured) + " commits measured, " + std::to_string(windows) +
         " windows; the search is right with probability at least " +
         StrFormat("%.4g%%", confidence * 100) + ")";
}

std::vector<double> StoredErrorBounds(const BisectionRecord& record, const BisectRule& rule) {
  std::vector<double> bounds;
  for (const BisectStepRow& s : record.steps) {
    if (s.decision == CommitStateName(CommitState::kGood) ||
        s.decision == CommitStateName(CommitState::kBad)) {
      bounds.push_back(1 - rule.StepConfidence());
    }
  }
  return bounds;
}

}  // namespace benchlab
