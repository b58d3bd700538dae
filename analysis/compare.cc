#include "analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

#include "analysis/compare_detail.h"
#include "analysis/report_format.h"

namespace benchlab {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using namespace compare_detail;  // the comparison's own shared helpers

namespace {

// Floating point makes 104 / 100 - 1 a hair above 0.04: a delta equal to its threshold, or to
// --fail-on-regression's PCT, as written, must land on the side the rule says.
constexpr double kSlack = 1e-9;

double NumberAt(const json& obj, const char* key) {
  if (!obj.is_object()) return kNaN;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : kNaN;
}
std::string TextAt(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}
const json& At(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it != obj.end() ? *it : kNull;
}

}  // namespace

bool IsCompared(Metric m) {
  return std::find(kComparedMetrics.begin(), kComparedMetrics.end(), m) != kComparedMetrics.end();
}

const char* IntervalBasisName(IntervalBasis b) {
  return b == IntervalBasis::kBaseline ? "baseline" : "absolute";
}

std::optional<BasisChoice> ParseBasisChoice(const std::string& flag) {
  if (flag == "auto") return BasisChoice::kAuto;
  if (flag == "absolute") return BasisChoice::kAbsolute;
  if (flag == "baseline") return BasisChoice::kBaseline;
  return std::nullopt;
}

std::string SharedBaseline(const json& a, const json& b) {
  const std::string base_a = TextAt(At(a, "campaign"), "baseline");
  const std::string base_b = TextAt(At(b, "campaign"), "baseline");
  return base_a == base_b ? base_a : "";
}

StatsRule RecordStatsRule(const json& record) {
  StatsRule rule;
  const json& stats = At(record, "stats");
  const double confidence = NumberAt(stats, "confidence");
  const double margin = NumberAt(stats, "margin");
  if (confidence >= 0.5 && confidence <= 0.999) rule.confidence = confidence;
  if (margin >= 0 && margin <= 0.5) rule.margin = margin;
  return rule;
}

namespace {

// The logarithms of the values that have one (finite and above 0), their mean and variance.
struct LogSample {
  int n = 0;
  double mean = kNaN;
  double var = kNaN;  // n - 1 in the denominator
};
LogSample LogsOf(const std::vector<double>& values) {
  std::vector<double> logs;
  for (double v : values) {
    if (std::isfinite(v) && v > 0) logs.push_back(std::log(v));
  }
  LogSample s;
  s.n = static_cast<int>(logs.size());
  if (s.n < 2) return s;
  double sum = 0;
  for (double l : logs) sum += l;
  s.mean = sum / s.n;
  // Identical values have no spread; the rounding of their mean must not invent one.
  if (std::all_of(logs.begin(), logs.end(), [&](double l) { return l == logs.front(); })) {
    s.var = 0;
    return s;
  }
  double ss = 0;
  for (double l : logs) ss += (l - s.mean) * (l - s.mean);
  s.var = ss / (s.n - 1);
  return s;
}

}  // namespace

UnpairedInterval WelchLogInterval(const std::vector<double>& a_values,
                                  const std::vector<double>& b_values, double level) {
  const LogSample a = LogsOf(a_values);
  const LogSample b = LogsOf(b_values);
  UnpairedInterval out;
  out.n_a = a.n;
  out.n_b = b.n;
  out.ratio.n = a.n + b.n;
  out.ratio.level = level;
  if (!out.ok() || !(level > 0 && level < 1)) return out;
  const double va = a.var / a.n;
  const double vb = b.var / b.n;
  out.se = std::sqrt(va + vb);
  out.df = out.se > 0 ? (va + vb) * (va + vb) / (va * va / (a.n - 1) + vb * vb / (b.n - 1))
                      : a.n + b.n - 2;
  const double t = StudentT(level, out.df);
  const double diff = b.mean - a.mean;
  out.ratio.log_mean = diff;
  out.ratio.estimate = std::exp(diff);
  out.ratio.low = std::exp(diff - t * out.se);
  out.ratio.high = std::exp(diff + t * out.se);
  return out;
}

ComparisonVerdict JudgeUnpaired(const UnpairedInterval& interval, Metric metric, double margin) {
  return JudgeInterval(interval.ratio, MetricBetter(metric), margin);
}

std::string LoadLevelWords(const std::string& level) {
  if (level.size() > 1 && level[0] == 'c') return level.substr(1) + " connections";
  if (level.size() > 1 && level[0] == 'r') {
    return "open loop at " + Thousands(std::atof(level.c_str() + 1)) + " req/s";
  }
  return level;
}

NoiseRule JudgeByNoiseFloor(const SideFigure& a, const SideFigure& b, Metric metric) {
  NoiseRule d;
  auto usable = [](const SideFigure& s) { return s.n > 0 && std::isfinite(s.median); };
  if (!usable(a) || !usable(b)) {
    d.reason = !usable(a) && !usable(b) ? "no valid value in A or B"
               : !usable(a)             ? "no valid value in A"
                                        : "no valid value in B";
    return d;
  }
  if (a.median <= 0) {
    d.reason = "A's median is 0: no ratio";
    return d;
  }
  d.delta = b.median / a.median - 1;

  if (a.noise_floor || b.noise_floor) {
    const double fa = a.noise_floor.value_or(-1);
    const double fb = b.noise_floor.value_or(-1);
    d.threshold = std::max(fa, fb);
    d.threshold_from = fa == fb  ? "noise floors of A and B"
                       : fa > fb ? "noise floor of A"
                                 : "noise floor of B";
  } else if (a.n < 2 && b.n < 2) {
    d.reason = "one round on each side and no noise floor: nothing to judge against";
    return d;
  } else {
    const double sa = std::isfinite(a.spread_pct) ? a.spread_pct / 100 : -1;
    const double sb = std::isfinite(b.spread_pct) ? b.spread_pct / 100 : -1;
    d.threshold = std::max({sa, sb, 0.0});
    d.threshold_from = sa < 0 && sb < 0 ? "no spread"
                       : sa == sb       ? "spreads of A and B"
                       : sa > sb        ? "spread of A"
                                        : "spread of B";
  }
  const std::string limit = Percent(d.threshold) + " (" + d.threshold_from + ")";
  if (std::abs(d.delta) <= d.threshold + kSlack) {
    d.verdict = ComparisonVerdict::kClose;
    d.reason = "|Δ| " + Percent(std::abs(d.delta)) + " within " + limit;
    return d;
  }
  // A summary without extremes (an odd record) is taken as its median alone.
  const double a_lo = std::isfinite(a.min) ? a.min : a.median;
  const double a_hi = std::isfinite(a.max) ? a.max : a.median;
  const double b_lo = std::isfinite(b.min) ? b.min : b.median;
  const double b_hi = std::isfinite(b.max) ? b.max : b.median;
  const std::string ranges = "A " + Figure(metric, a_lo) + " to " + Figure(metric, a_hi) + ", B " +
                             Figure(metric, b_lo) + " to " + Figure(metric, b_hi);
  if (b_lo <= a_hi && a_lo <= b_hi) {
    d.verdict = ComparisonVerdict::kClose;
    d.reason = "ranges overlap (" + ranges + ")";
    return d;
  }
  const bool better = MetricBetter(metric) == Better::kHigher ? d.delta > 0 : d.delta < 0;
  d.verdict = better ? ComparisonVerdict::kBetter : ComparisonVerdict::kWorse;
  d.reason = "Δ " + SignedPercent(d.delta) + " beyond " + limit + ", ranges apart (" + ranges + ")";
  return d;
}

namespace {

SideFigure FigureOf(const json& target, Metric m, std::optional<double> floor) {
  const json& s = At(At(target, "metrics"), MetricName(m));
  SideFigure f;
  const double n = NumberAt(s, "n");
  f.n = std::isfinite(n) ? static_cast<int>(n) : 0;
  f.median = NumberAt(s, "median");
  f.min = NumberAt(s, "min");
  f.max = NumberAt(s, "max");
  f.spread_pct = NumberAt(s, "spread_pct");
  f.noise_floor = floor;
  return f;
}

CompareSide SideOf(const json& record, const std::string& source) {
  CompareSide side;
  side.source = source;
  const json& c = At(record, "campaign");
  side.campaign = TextAt(c, "name");
  side.created_at = TextAt(c, "created_at");
  side.state = TextAt(c, "state");
  side.generated_by = TextAt(record, "generated_by");
  // The mode in force (a record written before it was there: the --gates override, if any).
  side.gates_mode = TextAt(c, "gates_in_force");
  if (side.gates_mode.empty()) side.gates_mode = TextAt(c, "gates_mode");
  const json& floors = At(record, "noise_floor");
  if (floors.is_array()) {
    for (const json& entry : floors) {
      CompareSide::PairFloors pf;
      pf.pair = TextAt(entry, "pair");
      for (Metric m : kComparedMetrics) {
        const double f = NumberAt(At(At(entry, "metrics"), MetricName(m)), "fraction");
        if (std::isfinite(f)) pf.floors[static_cast<int>(m)] = f;
      }
      side.noise_floors.push_back(pf);
    }
  }
  // Host facts in a line each, to warn when A and B did not run on alike machines.
  std::set<std::string> hosts;
  auto describe = [&](const std::string& role, const json& facts) {
    std::string line = role + ": " + TextAt(facts, "cpu_model");
    const double cores = NumberAt(facts, "logical_cores");
    if (std::isfinite(cores)) line += StrFormat(", %.0f cores", cores);
    if (!TextAt(facts, "kernel").empty()) line += ", kernel " + TextAt(facts, "kernel");
    if (!TextAt(facts, "cpu_model").empty()) hosts.insert(line);
  };
  const json& list = At(record, "hosts");
  if (list.is_array()) {
    for (const json& h : list) {
      const json& facts = At(h, "facts");
      if (At(facts, "agents").is_object()) {
        for (const auto& [name, f] : At(facts, "agents").items()) describe(TextAt(h, "role"), f);
      } else {
        describe(TextAt(h, "role"), facts);
      }
    }
  }
  side.hosts.assign(hosts.begin(), hosts.end());
  return side;
}

std::optional<double> FloorOf(const CompareSide& side, const std::string& pair, Metric m) {
  for (const auto& pf : side.noise_floors) {
    if (pf.pair == pair) return pf.floors[static_cast<int>(m)];
  }
  return std::nullopt;
}

using CellId = std::tuple<std::string, std::string, std::string>;  // pair, scenario, load level

// One target's figures in one cell by round, indexed by Metric (the compared ones filled).
using RoundFigures = std::array<std::map<int64_t, double>, kMetricCount>;
using CellRounds = std::map<CellId, std::map<std::string, RoundFigures>>;

// The figures the intervals are computed from: per cell, target and round, the newest attempt of
// each matrix window when its verdict is `valid` (docs/report.md, `windows[]`); as the report's
// statistics take them. Noise windows, older attempts and null figures are left out.
CellRounds RoundsOf(const json& record) {
  CellRounds out;
  const json& windows = At(record, "windows");
  if (!windows.is_array()) return out;
  for (const json& w : windows) {
    if (At(w, "noise") == true || !At(w, "round").is_number_integer()) continue;
    const json& attempts = At(w, "attempts");
    if (!attempts.is_array()) continue;
    auto newest = std::find_if(attempts.begin(), attempts.end(),
                               [](const json& t) { return At(t, "newest") == true; });
    if (newest == attempts.end() || TextAt(*newest, "verdict") != "valid") continue;
    RoundFigures& figures = out[{TextAt(w, "pair"), TextAt(w, "scenario"), TextAt(w, "load_level")}]
                               [TextAt(w, "target")];
    const int64_t round = At(w, "round").get<int64_t>();
    for (Metric m : kComparedMetrics) {
      figures[static_cast<int>(m)][round] = NumberAt(*newest, MetricName(m));
    }
  }
  return out;
}

const RoundFigures* FiguresOf(const CellRounds& rounds, const CellId& cell,
                              const std::string& target) {
  auto c = rounds.find(cell);
  if (c == rounds.end()) return nullptr;
  auto t = c->second.find(target);
  return t == c->second.end() ? nullptr : &t->second;
}

// The values an interval is computed from: the target's figures by round (absolute), or its
// ratios to the baseline's figure of the same round (rounds where both have one).
std::vector<double> ValuesOf(const RoundFigures* target, const RoundFigures* baseline, Metric m,
                             IntervalBasis basis) {
  std::vector<double> values;
  if (target == nullptr) return values;
  const auto& mine = (*target)[static_cast<int>(m)];
  if (basis == IntervalBasis::kAbsolute) {
    for (const auto& [round, v] : mine) values.push_back(v);
    return values;
  }
  if (baseline == nullptr) return values;
  const auto& theirs = (*baseline)[static_cast<int>(m)];
  for (const auto& [round, v] : mine) {
    auto base = theirs.find(round);
    if (base != theirs.end() && base->second > 0) values.push_back(v / base->second);
  }
  return values;
}

std::string RatioThreePlaces(double v) { return StrFormat("%.3f", v); }
std::string MarginPct(double fraction) { return StrFormat("%.4g%%", fraction * 100); }

// One line a person can check, in the manner of the report's (analysis/interval.h JudgeRatios).
std::string IntervalReason(const UnpairedInterval& iv, ComparisonVerdict verdict,
                           const StatsRule& rule, IntervalBasis basis,
                           const std::string& baseline) {
  const std::string of =
      basis == IntervalBasis::kBaseline ? "ratio to " + baseline + " B / A " : "B / A ";
  if (verdict == ComparisonVerdict::kNotApplicable) {
    const std::string what =
        basis == IntervalBasis::kBaseline ? "a ratio to " + baseline : "a value";
    if (iv.n_a < 2 && iv.n_b < 2) {
      return StrFormat("fewer than 2 rounds with %s in A (%d) and in B (%d)", what.c_str(), iv.n_a,
                       iv.n_b);
    }
    return StrFormat("fewer than 2 rounds with %s in %s (%d)", what.c_str(), iv.n_a < 2 ? "A" : "B",
                     iv.n_a < 2 ? iv.n_a : iv.n_b);
  }
  const RatioInterval& r = iv.ratio;
  const std::string ci = of + RatioThreePlaces(r.estimate) + " (" + MarginPct(r.level) + " CI " +
                         RatioThreePlaces(r.low) + " to " + RatioThreePlaces(r.high) +
                         StrFormat("; Welch, %d and %d rounds, df %.1f)", iv.n_a, iv.n_b, iv.df);
  switch (verdict) {
    case ComparisonVerdict::kBetter:
    case ComparisonVerdict::kWorse:
      return ci + " lies beyond the margin ±" + MarginPct(rule.margin);
    case ComparisonVerdict::kClose:
      return ci + " lies inside the margin " + RatioThreePlaces(1 - rule.margin) + " to " +
             RatioThreePlaces(1 + rule.margin);
    default:
      return ci + " reaches across the margin ±" + MarginPct(rule.margin);
  }
}

}  // namespace

RecordComparison CompareRecords(const json& a, const json& b, const std::string& a_source,
                                const std::string& b_source, const CompareRule& rule) {
  RecordComparison out;
  out.a = SideOf(a, a_source);
  out.b = SideOf(b, b_source);
  out.rule = RecordStatsRule(b);
  if (rule.confidence) out.rule.confidence = *rule.confidence;
  if (rule.margin) out.rule.margin = *rule.margin;
  out.basis = rule.basis;
  if (rule.basis != BasisChoice::kAbsolute) out.baseline = SharedBaseline(a, b);
  const CellRounds rounds_a = RoundsOf(a);
  const CellRounds rounds_b = RoundsOf(b);

  // Rows keyed by cell and target, in A's order, then B's additions after their cell's rows.
  struct Row {
    std::string pair, scenario, level, target;
    const json* a = nullptr;
    const json* b = nullptr;
  };
  std::vector<CellId> cell_order;
  std::map<CellId, std::vector<Row>> rows;
  auto add = [&](const json& record, bool is_a) {
    const json& cells = At(record, "cells");
    if (!cells.is_array()) return;
    for (const json& cell : cells) {
      CellId name{TextAt(cell, "pair"), TextAt(cell, "scenario"), TextAt(cell, "load_level")};
      auto [it, fresh] = rows.try_emplace(name);
      if (fresh) cell_order.push_back(name);
      const json& targets = At(cell, "targets");
      if (!targets.is_array()) continue;
      for (const json& t : targets) {
        const std::string target = TextAt(t, "target");
        auto row = std::find_if(it->second.begin(), it->second.end(),
                                [&](const Row& r) { return r.target == target; });
        if (row == it->second.end()) {
          it->second.push_back({std::get<0>(name), std::get<1>(name), std::get<2>(name), target});
          row = std::prev(it->second.end());
        }
        (is_a ? row->a : row->b) = &t;
      }
    }
  };
  add(a, true);
  add(b, false);

  for (const CellId& name : cell_order) {
    for (const Row& r : rows[name]) {
      CellDelta cd;
      cd.pair = r.pair;
      cd.scenario = r.scenario;
      cd.load_level = r.level;
      cd.target = r.target;
      cd.presence = r.a && r.b ? Presence::kBoth : r.a ? Presence::kOnlyA : Presence::kOnlyB;
      // The baseline's own ratio to itself is 1 in every round: its rows stay absolute.
      const IntervalBasis basis = !out.baseline.empty() && r.target != out.baseline
                                      ? IntervalBasis::kBaseline
                                      : IntervalBasis::kAbsolute;
      for (Metric m : kComparedMetrics) {
        MetricDelta& md = cd.metrics[static_cast<int>(m)];
        md.a = r.a ? FigureOf(*r.a, m, FloorOf(out.a, r.pair, m)) : SideFigure{};
        md.b = r.b ? FigureOf(*r.b, m, FloorOf(out.b, r.pair, m)) : SideFigure{};
        md.basis = basis;
        if (cd.presence != Presence::kBoth) {
          md.reason = r.a ? "only in A" : "only in B";
          continue;
        }
        md.noise_rule = JudgeByNoiseFloor(md.a, md.b, m);
        md.delta = md.noise_rule.delta;
        auto values = [&](const CellRounds& rounds) {
          return ValuesOf(FiguresOf(rounds, name, r.target), FiguresOf(rounds, name, out.baseline),
                          m, basis);
        };
        md.interval = WelchLogInterval(values(rounds_a), values(rounds_b), out.rule.confidence);
        md.verdict = JudgeUnpaired(md.interval, m, out.rule.margin);
        md.reason = IntervalReason(md.interval, md.verdict, out.rule, basis, out.baseline);
      }
      out.cells.push_back(std::move(cd));
    }
  }
  return out;
}

std::vector<Metric> GatedMetrics(const std::vector<Metric>& selected) {
  std::vector<Metric> gated;
  for (Metric m : {Metric::kRps, Metric::kCpuUsPerRequest}) {
    if (std::find(selected.begin(), selected.end(), m) != selected.end()) gated.push_back(m);
  }
  return gated;
}

namespace {
std::string CellName(const CellDelta& c) {
  return (c.pair.empty() ? "" : c.pair + " · ") + c.scenario + " · " + c.load_level + " · " +
         c.target;
}
}  // namespace

std::vector<Regression> FindRegressions(const RecordComparison& c,
                                        const std::vector<Metric>& selected, double pct) {
  std::vector<Regression> out;
  for (const CellDelta& cell : c.cells) {
    if (cell.presence != Presence::kBoth) continue;
    for (Metric m : GatedMetrics(selected)) {
      const MetricDelta& d = cell.of(m);
      if (d.verdict != ComparisonVerdict::kWorse) continue;
      const double change = d.interval.ratio.estimate - 1;
      const double worse_by = MetricBetter(m) == Better::kHigher ? -change : change;
      if (worse_by * 100 <= pct + kSlack) continue;
      out.push_back({CellName(cell), cell.pair, cell.scenario, cell.load_level, cell.target, m,
                     change, d.reason});
    }
  }
  return out;
}

Result<json> ParseRunOfRecord(const std::string& text, const std::string& origin) {
  json record;
  try {
    record = json::parse(text);
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, ..." without the bracket.
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    return Status::InvalidArgument(origin + ": not JSON: " + what);
  }
  if (!record.is_object()) return Status::InvalidArgument(origin + ": not a run of record");
  const std::string format = TextAt(record, "format");
  if (format != "benchlab-run-of-record") {
    return Status::InvalidArgument(
        origin + ": not a benchlab run of record (" +
        (format.empty() ? std::string("no \"format\"") : "format \"" + format + "\"") +
        ", expected \"benchlab-run-of-record\")");
  }
  const json& version = At(record, "version");
  // Version 2 added intervals; the summaries compare reads are alike in both.
  if (!version.is_number_integer() || version.get<int64_t>() < 1 || version.get<int64_t>() > 2) {
    return Status::InvalidArgument(origin + ": run of record version " + version.dump() +
                                   "; this benchlab reads versions 1 and 2");
  }
  if (!At(record, "cells").is_array()) {
    return Status::InvalidArgument(origin + ": run of record without a \"cells\" array");
  }
  return record;
}

}  // namespace benchlab
