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

// By CompareMetric: the --metric flag, the run of record's key, the column label.
constexpr const char* kMetricNames[kCompareMetricCount][3] = {
    {"rps", "rps", "req/s"}, {"cpu", "cpu_us_per_request", "CPU µs/req"}, {"p99", "p99_us", "p99"}};

}  // namespace

const char* CompareMetricFlag(CompareMetric m) { return kMetricNames[static_cast<int>(m)][0]; }
const char* CompareMetricKey(CompareMetric m) { return kMetricNames[static_cast<int>(m)][1]; }
const char* CompareMetricLabel(CompareMetric m) { return kMetricNames[static_cast<int>(m)][2]; }
bool HigherIsBetter(CompareMetric m) { return m == CompareMetric::kRps; }
std::optional<CompareMetric> ParseCompareMetric(const std::string& flag) {
  for (CompareMetric m : kCompareMetrics) {
    if (flag == CompareMetricFlag(m) || flag == CompareMetricKey(m)) return m;
  }
  return std::nullopt;
}

const char* DeltaVerdictName(DeltaVerdict v) {
  static constexpr const char* kNames[] = {"n/a", "close", "better", "worse"};
  return kNames[static_cast<int>(v)];
}

std::string LoadLevelWords(const std::string& level) {
  if (level.size() > 1 && level[0] == 'c') return level.substr(1) + " connections";
  if (level.size() > 1 && level[0] == 'r') {
    return "open loop at " + Thousands(std::atof(level.c_str() + 1)) + " req/s";
  }
  return level;
}

MetricDelta JudgeDelta(const SideFigure& a, const SideFigure& b, CompareMetric metric) {
  MetricDelta d;
  d.a = a;
  d.b = b;
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
    d.verdict = DeltaVerdict::kClose;
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
    d.verdict = DeltaVerdict::kClose;
    d.reason = "ranges overlap (" + ranges + ")";
    return d;
  }
  const bool better = HigherIsBetter(metric) ? d.delta > 0 : d.delta < 0;
  d.verdict = better ? DeltaVerdict::kBetter : DeltaVerdict::kWorse;
  d.reason = "Δ " + SignedPercent(d.delta) + " beyond " + limit + ", ranges apart (" + ranges + ")";
  return d;
}

namespace {

SideFigure FigureOf(const json& target, CompareMetric m, std::optional<double> floor) {
  const json& s = At(At(target, "metrics"), CompareMetricKey(m));
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
  const json& floors = At(record, "noise_floor");
  if (floors.is_array()) {
    for (const json& entry : floors) {
      CompareSide::PairFloors pf;
      pf.pair = TextAt(entry, "pair");
      for (CompareMetric m : kCompareMetrics) {
        const double f = NumberAt(At(At(entry, "metrics"), CompareMetricKey(m)), "fraction");
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
    if (std::isfinite(cores)) line += Printf(", %.0f cores", cores);
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

std::optional<double> FloorOf(const CompareSide& side, const std::string& pair, CompareMetric m) {
  for (const auto& pf : side.noise_floors) {
    if (pf.pair == pair) return pf.floors[static_cast<int>(m)];
  }
  return std::nullopt;
}

}  // namespace

RecordComparison CompareRecords(const json& a, const json& b, const std::string& a_source,
                                const std::string& b_source) {
  RecordComparison out;
  out.a = SideOf(a, a_source);
  out.b = SideOf(b, b_source);

  // Rows keyed by cell and target, in A's order, then B's additions after their cell's rows.
  struct Row {
    std::string pair, scenario, level, target;
    const json* a = nullptr;
    const json* b = nullptr;
  };
  using CellName = std::tuple<std::string, std::string, std::string>;
  std::vector<CellName> cell_order;
  std::map<CellName, std::vector<Row>> rows;
  auto add = [&](const json& record, bool is_a) {
    const json& cells = At(record, "cells");
    if (!cells.is_array()) return;
    for (const json& cell : cells) {
      CellName name{TextAt(cell, "pair"), TextAt(cell, "scenario"), TextAt(cell, "load_level")};
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

  for (const CellName& name : cell_order) {
    for (const Row& r : rows[name]) {
      CellDelta cd;
      cd.pair = r.pair;
      cd.scenario = r.scenario;
      cd.load_level = r.level;
      cd.target = r.target;
      cd.presence = r.a && r.b ? Presence::kBoth : r.a ? Presence::kOnlyA : Presence::kOnlyB;
      for (CompareMetric m : kCompareMetrics) {
        MetricDelta& md = cd.metrics[static_cast<int>(m)];
        const SideFigure fa = r.a ? FigureOf(*r.a, m, FloorOf(out.a, r.pair, m)) : SideFigure{};
        const SideFigure fb = r.b ? FigureOf(*r.b, m, FloorOf(out.b, r.pair, m)) : SideFigure{};
        if (cd.presence == Presence::kBoth) {
          md = JudgeDelta(fa, fb, m);
        } else {
          md.a = fa;
          md.b = fb;
          md.reason = r.a ? "only in A" : "only in B";
        }
      }
      out.cells.push_back(std::move(cd));
    }
  }
  return out;
}

std::vector<CompareMetric> GatedMetrics(const std::vector<CompareMetric>& selected) {
  std::vector<CompareMetric> gated;
  for (CompareMetric m : {CompareMetric::kRps, CompareMetric::kCpu}) {
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
                                        const std::vector<CompareMetric>& selected, double pct) {
  std::vector<Regression> out;
  for (const CellDelta& cell : c.cells) {
    if (cell.presence != Presence::kBoth) continue;
    for (CompareMetric m : GatedMetrics(selected)) {
      const MetricDelta& d = cell.of(m);
      if (d.verdict != DeltaVerdict::kWorse) continue;
      if (std::abs(d.delta) * 100 <= pct + kSlack) continue;
      out.push_back({CellName(cell), cell.pair, cell.scenario, cell.load_level, cell.target, m,
                     d.delta, d.reason});
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
