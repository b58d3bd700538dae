#include "analysis/rounds.h"

#include <algorithm>

namespace benchlab {
namespace {

// One target's figure by round over the valid windows of rounds 1..through.
RoundValues ValuesThrough(const std::vector<Measurement>& cell, const std::string& target,
                          Metric metric, int through) {
  RoundValues out;
  for (const Measurement& m : cell) {
    if (m.target == target && m.valid && !m.noise && m.round >= 1 && m.round <= through) {
      out[m.round] = MetricValue(m, metric);
    }
  }
  return out;
}

}  // namespace

StatsOptions StatsOptionsOf(const Campaign& campaign) {
  StatsOptions o;
  o.rule = {campaign.stats.confidence, campaign.stats.margin};
  o.plan = campaign.adaptive
               ? LookPlan::Adaptive(campaign.min_rounds, campaign.rounds, campaign.stats.confidence)
               : LookPlan::Fixed(campaign.rounds, campaign.stats.confidence);
  return o;
}

std::vector<Metric> DecidingMetrics(const Campaign& campaign) {
  std::vector<Metric> out;
  for (const std::string& name : campaign.stats.decide_on) {
    if (auto m = ParseFigure(name)) out.push_back(*m);
  }
  return out;
}

bool CellDecided(const std::vector<Measurement>& cell, const std::string& baseline,
                 const std::vector<std::string>& targets, const std::vector<Metric>& deciding,
                 const StatsOptions& options, int through_round) {
  const std::vector<Measurement> newest = NewestAttempts(cell);
  for (const std::string& target : targets) {
    if (target == baseline) continue;
    for (Metric metric : deciding) {
      const Comparison c = Compare(ValuesThrough(newest, target, metric, through_round),
                                   ValuesThrough(newest, baseline, metric, through_round),
                                   MetricBetter(metric), std::nullopt, options);
      if (c.verdict == ComparisonVerdict::kNotApplicable ||
          c.verdict == ComparisonVerdict::kInconclusive) {
        return false;
      }
    }
  }
  return true;
}

const char* CellStopName(CellStop stop) {
  switch (stop) {
    case CellStop::kFixedPlan:
      return "fixed plan";
    case CellStop::kDecided:
      return "decided";
    case CellStop::kMaxRounds:
      return "max rounds";
    case CellStop::kBudget:
      return "budget";
    case CellStop::kStopped:
      return "stopped";
    case CellStop::kRunning:
      return "running";
  }
  return "fixed plan";
}

CellRounds CellRoundsOf(const std::vector<Measurement>& cell, const Campaign& campaign,
                        bool finished) {
  CellRounds out;
  for (const Measurement& m : cell) {
    if (!m.noise) out.rounds = std::max(out.rounds, m.round);
  }
  if (!campaign.adaptive) return out;
  std::vector<std::string> targets;
  for (const TargetDef& t : campaign.targets) targets.push_back(t.name);
  if (CellDecided(cell, campaign.baseline, targets, DecidingMetrics(campaign),
                  StatsOptionsOf(campaign), out.rounds)) {
    out.stop = CellStop::kDecided;
  } else if (out.rounds >= campaign.rounds) {
    out.stop = CellStop::kMaxRounds;
  } else if (!finished) {
    out.stop = CellStop::kRunning;
  } else {
    out.stop = campaign.stats.max_duration ? CellStop::kBudget : CellStop::kStopped;
  }
  return out;
}

}  // namespace benchlab
