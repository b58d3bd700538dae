#include "analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>
#include <utility>

#include "common/parse.h"

namespace benchlab {
namespace {

// Percentages in reasons, e.g. "4.0%".
auto WindowTuple(const Measurement& m) {
  return std::tie(m.pair, m.target, m.scenario, m.load_level, m.round, m.position);
}

}  // namespace

Summary Summarize(std::vector<double> values) {
  Summary s;
  std::erase_if(values, [&s](double v) {
    if (std::isfinite(v)) return false;
    ++s.ignored;
    return true;
  });
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  s.median = values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
  s.min = values.front();
  s.max = values.back();
  if (s.max == s.min) {
    s.spread_pct = 0;
  } else if (s.median != 0) {
    s.spread_pct = (s.max - s.min) / std::fabs(s.median) * 100;
  }
  return s;
}

std::vector<RoundRatio> RoundRatios(const RoundValues& target, const RoundValues& baseline) {
  std::vector<RoundRatio> out;
  for (const auto& [round, t] : target) {
    auto it = baseline.find(round);
    if (it == baseline.end()) continue;
    const double b = it->second;
    if (!std::isfinite(t) || !std::isfinite(b) || t < 0 || b <= 0) continue;
    out.push_back({round, t, b, t / b});
  }
  return out;  // std::map iterates rounds in ascending order
}

int RoundsWon(const std::vector<RoundRatio>& rounds, Better better) {
  return static_cast<int>(
      std::count_if(rounds.begin(), rounds.end(), [better](const RoundRatio& r) {
        return better == Better::kHigher ? r.ratio > 1 : r.ratio < 1;
      }));
}

std::optional<NoiseFloor> MeasureNoiseFloor(const std::vector<double>& noise_values) {
  NoiseFloor floor;
  floor.values = Summarize(noise_values);
  if (floor.values.n < 2 || !std::isfinite(floor.values.spread_pct)) return std::nullopt;
  floor.fraction = floor.values.spread_pct / 100;
  return floor;
}

Judgement Judge(const std::vector<RoundRatio>& rounds, Better better,
                const std::optional<NoiseFloor>& noise_floor) {
  const int n = static_cast<int>(rounds.size());
  if (n < kMinRoundsForVerdict) {
    return {ComparisonVerdict::kNotApplicable,
            "fewer than " + std::to_string(kMinRoundsForVerdict) + " rounds with a ratio (" +
                std::to_string(n) + ")"};
  }
  std::vector<double> ratios;
  for (const RoundRatio& r : rounds) ratios.push_back(r.ratio);
  const Summary s = Summarize(std::move(ratios));
  const double off = std::fabs(s.median - 1);
  const std::string range = "(" + FormatRatio(s.min) + " to " + FormatRatio(s.max) + ")";
  if (noise_floor && off <= noise_floor->fraction) {
    return {ComparisonVerdict::kClose, "within the noise floor: median ratio " +
                                           FormatRatio(s.median) + " is " +
                                           StrFormat("%.1f%%", off * 100) + " from 1, floor " +
                                           StrFormat("%.1f%%", noise_floor->fraction * 100)};
  }
  if (s.min < 1 && 1 < s.max)
    return {ComparisonVerdict::kClose, "round ratios straddle 1 " + range};
  if (s.median == 1) return {ComparisonVerdict::kClose, "median ratio 1 " + range};
  const bool higher = s.median > 1;
  const bool ahead = better == Better::kHigher ? higher : !higher;
  const std::string beyond =
      noise_floor ? "beyond the noise floor " + StrFormat("%.1f%%", noise_floor->fraction * 100)
                  : "no noise floor";
  return {ahead ? ComparisonVerdict::kBetter : ComparisonVerdict::kWorse,
          "median ratio " + FormatRatio(s.median) + ", every round " +
              (higher ? "above" : "below") + " 1 " + range + ", " + beyond};
}

Comparison Compare(const RoundValues& target, const RoundValues& baseline, Better better,
                   const std::optional<NoiseFloor>& noise_floor, const StatsOptions& options) {
  Comparison c;
  c.rounds = RoundRatios(target, baseline);
  std::vector<double> ratios;
  for (const RoundRatio& r : c.rounds) ratios.push_back(r.ratio);
  c.ratio = Summarize(std::move(ratios));
  c.rounds_won = RoundsWon(c.rounds, better);
  c.rounds_lost = RoundsWon(c.rounds, better == Better::kHigher ? Better::kLower : Better::kHigher);
  if (noise_floor) c.noise_floor = noise_floor->fraction;
  c.noise_rule = Judge(c.rounds, better, noise_floor);
  std::vector<double> paired;
  for (const RoundRatio& r : c.rounds) paired.push_back(r.ratio);
  IntervalJudgement j = JudgeRatios(paired, better, options.rule, options.plan);
  c.verdict = j.verdict;
  c.reason = std::move(j.reason);
  c.interval = j.interval;
  c.rounds_needed = j.rounds_needed;
  return c;
}

double MetricValue(const Measurement& m, Metric metric) {
  switch (metric) {
    case Metric::kRps:
      return m.rps;
    case Metric::kCpuUsPerRequest:
      return m.cpu_us_per_request;
    case Metric::kRequestsPerCpuSecond:
      return m.server_cpu_s > 0 ? m.requests / m.server_cpu_s : kNaN;
    case Metric::kP50Us:
      return m.p50_us;
    case Metric::kP99Us:
      return m.p99_us;
    case Metric::kStartupMs:
      return m.startup_ms;
    case Metric::kFirstRequestMs:
      return m.first_request_ms;
    case Metric::kIdleRssKb:
      return m.idle_rss_kb;
    case Metric::kRssPeakKb:
      return m.rss_peak_kb;
    case Metric::kServiceCpuUsPerRequest:
      return m.has_services && m.requests > 0 ? m.services_cpu_s * 1e6 / m.requests : kNaN;
    case Metric::kTotalCpuUsPerRequest:
      return m.has_services && m.requests > 0 && m.server_cpu_s > 0
                 ? (m.server_cpu_s + m.services_cpu_s) * 1e6 / m.requests
                 : kNaN;
  }
  return kNaN;
}

bool IsServiceMetric(Metric metric) {
  return metric == Metric::kServiceCpuUsPerRequest || metric == Metric::kTotalCpuUsPerRequest;
}

std::vector<Measurement> NewestAttempts(std::vector<Measurement> windows) {
  std::stable_sort(windows.begin(), windows.end(), [](const Measurement& a, const Measurement& b) {
    return std::tuple_cat(WindowTuple(a), std::tie(b.attempt)) <
           std::tuple_cat(WindowTuple(b), std::tie(a.attempt));
  });
  // Each window's attempts are now together, the newest first.
  std::vector<Measurement> out;
  for (Measurement& m : windows) {
    if (!out.empty() && WindowTuple(out.back()) == WindowTuple(m)) continue;
    out.push_back(std::move(m));
  }
  return out;
}

CellKey CellOf(const Measurement& m) { return {m.pair, m.scenario, m.load_level}; }

std::map<CellKey, std::vector<Measurement>> GroupByCell(const std::vector<Measurement>& windows) {
  std::map<CellKey, std::vector<Measurement>> cells;
  for (const Measurement& m : windows) {
    if (!m.noise) cells[CellOf(m)].push_back(m);
  }
  return cells;
}

NoiseFloors MeasureNoiseFloors(const std::vector<Measurement>& windows, const std::string& pair) {
  NoiseFloors floors;
  std::array<std::vector<double>, kMetricCount> values;
  for (const Measurement& m : windows) {
    if (!m.noise || m.pair != pair) continue;
    ++floors.windows;
    if (!m.valid) continue;
    ++floors.valid;
    for (Metric metric : kAllMetrics) {
      values[static_cast<int>(metric)].push_back(MetricValue(m, metric));
    }
  }
  for (Metric metric : kAllMetrics) {
    const int i = static_cast<int>(metric);
    floors.by_metric[i] = MeasureNoiseFloor(values[i]);
  }
  return floors;
}

namespace {

// One target's valid figures in one cell, by round. Should two windows of the target share a
// round (the plan never makes such a cell), the one later in `windows` counts.
std::array<RoundValues, kMetricCount> ByRound(const std::vector<Measurement>& windows,
                                              const std::string& target) {
  std::array<RoundValues, kMetricCount> out;
  for (const Measurement& m : windows) {
    if (m.target != target || !m.valid) continue;
    for (Metric metric : kAllMetrics) {
      out[static_cast<int>(metric)][m.round] = MetricValue(m, metric);
    }
  }
  return out;
}

std::vector<double> Values(const RoundValues& by_round) {
  std::vector<double> out;
  for (const auto& [round, v] : by_round) out.push_back(v);
  return out;
}

TargetStats StatsOf(const std::vector<Measurement>& cell, const std::string& target,
                    const std::string& baseline, const NoiseFloors& noise,
                    const StatsOptions& options) {
  TargetStats t;
  t.target = target;
  for (const Measurement& m : cell) {
    if (m.target != target) continue;
    ++t.windows;
    if (m.valid) ++t.valid;
  }
  const auto mine = ByRound(cell, target);
  const bool has_baseline = std::any_of(cell.begin(), cell.end(), [&](const Measurement& m) {
    return m.target == baseline && m.valid;
  });
  const auto theirs = ByRound(cell, baseline);
  for (Metric metric : kAllMetrics) {
    const int i = static_cast<int>(metric);
    t.summary[i] = Summarize(Values(mine[i]));
    Comparison& c = t.vs_baseline[i];
    if (baseline.empty()) {
      c.reason = "no baseline";
    } else if (target == baseline) {
      c.reason = "the baseline itself";
    } else if (!has_baseline) {
      c.reason = "no valid baseline window in this cell";
    } else {
      c = Compare(mine[i], theirs[i], MetricBetter(metric), noise.of(metric), options);
    }
  }
  return t;
}

}  // namespace

CampaignStats AnalyseCampaign(const std::vector<Measurement>& all, const std::string& baseline,
                              const std::vector<std::string>& target_order,
                              const StatsOptions& options) {
  CampaignStats out;
  out.baseline = baseline;
  const std::vector<Measurement> windows = NewestAttempts(all);
  // Every attempt, replaced ones included: the CSV and JSON list those too.
  out.services =
      std::any_of(all.begin(), all.end(), [](const Measurement& m) { return m.has_services; });

  std::vector<std::string> targets = target_order;
  std::set<std::string> seen(targets.begin(), targets.end());
  std::set<std::string> extra;
  std::set<std::string> pairs;
  for (const Measurement& m : windows) {
    if (!seen.count(m.target)) extra.insert(m.target);
    pairs.insert(m.pair);
  }
  targets.insert(targets.end(), extra.begin(), extra.end());
  if (pairs.empty()) pairs.insert("");
  out.pairs.assign(pairs.begin(), pairs.end());

  for (const std::string& pair : out.pairs) out.noise[pair] = MeasureNoiseFloors(windows, pair);

  for (const auto& [key, cell] : GroupByCell(windows)) {
    CellStats cs;
    cs.cell = key;
    for (const std::string& target : targets) {
      cs.targets.push_back(StatsOf(cell, target, baseline, out.noise[key.pair], options));
    }
    out.cells.push_back(std::move(cs));
  }

  for (const std::string& pair : out.pairs) {
    for (const std::string& target : targets) {
      std::vector<double> startup, first, idle, peak;
      for (const Measurement& m : windows) {
        if (m.noise || !m.valid || m.pair != pair || m.target != target) continue;
        startup.push_back(m.startup_ms);
        first.push_back(m.first_request_ms);
        idle.push_back(m.idle_rss_kb);
        peak.push_back(m.rss_peak_kb);
      }
      out.facts.push_back({pair, target, Summarize(std::move(startup)), Summarize(std::move(first)),
                           Summarize(std::move(idle)), Summarize(std::move(peak))});
    }
  }
  return out;
}

}  // namespace benchlab
