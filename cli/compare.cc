#include "cli/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

#include "coordinator/report/report_format.h"

namespace benchlab {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

// Floating point makes 104 / 100 - 1 a hair above 0.04: a delta equal to its threshold, or to
// --fail-on-regression's PCT, as written, must land on the side the rule says.
constexpr double kSlack = 1e-9;

constexpr const char* kMissing = "–";  // no figure (report_format's sign)
constexpr const char* kNone = "—";     // the side does not have the row

template <typename... Args>
std::string Printf(const char* fmt, Args... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

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

std::string Figure(CompareMetric m, double v) {
  if (!std::isfinite(v)) return kMissing;
  switch (m) {
    case CompareMetric::kRps:
      return Thousands(v);
    case CompareMetric::kCpu:
      return v < 10 ? Printf("%.2f", v) : Printf("%.1f", v);
    case CompareMetric::kP99:
      return Micros(v);
  }
  return kMissing;
}
std::string Percent(double fraction) {
  return std::isfinite(fraction) ? Printf("%.1f%%", fraction * 100) : kMissing;
}
std::string SignedPercent(double fraction) {
  return std::isfinite(fraction) ? Printf("%+.1f%%", fraction * 100) : kMissing;
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
  if (!version.is_number_integer() || version.get<int64_t>() != 1) {
    return Status::InvalidArgument(origin + ": run of record version " + version.dump() +
                                   "; this benchlab reads version 1");
  }
  if (!At(record, "cells").is_array()) {
    return Status::InvalidArgument(origin + ": run of record without a \"cells\" array");
  }
  return record;
}

// --- formats --------------------------------------------------------------------------------

namespace {

// Columns as display cells: UTF-8 continuation bytes take no width (µ, Δ, →, – are one each).
size_t Width(const std::string& s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xC0) != 0x80; }));
}
std::string Pad(const std::string& s, size_t width, bool right) {
  const std::string fill(width > Width(s) ? width - Width(s) : 0, ' ');
  return right ? fill + s : s + fill;
}

struct Table {
  std::vector<std::string> header;
  std::vector<bool> right;
  std::vector<std::vector<std::string>> rows;
};

std::string Render(const Table& t, bool markdown) {
  std::vector<size_t> width(t.header.size(), markdown ? 3 : 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], Width(row[i]));
  };
  measure(t.header);
  for (const auto& row : t.rows) measure(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out = markdown ? "| " : "";
    for (size_t i = 0; i < row.size(); ++i) {
      const bool last = i + 1 == row.size();
      out += Pad(row[i], width[i], t.right[i]) +
             (markdown ? (last ? " |" : " | ") : (last ? "" : "  "));
    }
    while (!markdown && !out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(t.header);
  if (markdown) {
    std::vector<std::string> rule;
    for (size_t i = 0; i < width.size(); ++i) {
      rule.push_back(t.right[i] ? std::string(width[i] - 1, '-') + ":"
                                : std::string(width[i], '-'));
    }
    out += line(rule);
  }
  for (const auto& row : t.rows) out += line(row);
  return out;
}

std::string WithSpread(CompareMetric m, const SideFigure& s) {
  std::string v = Figure(m, s.median);
  if (s.n > 1 && std::isfinite(s.spread_pct)) v += Printf(" (%.1f%%)", s.spread_pct);
  return v;
}

// The rows of one group (pair, scenario, load level) as a table of the selected metrics.
Table GroupTable(const std::vector<const CellDelta*>& group, const CompareOptions& options) {
  Table t;
  t.header.push_back("target");
  t.right.push_back(false);
  for (CompareMetric m : options.metrics) {
    const std::string label = CompareMetricLabel(m);
    if (m == CompareMetric::kRps) {
      t.header.insert(t.header.end(), {"A req/s (spread)", "B req/s (spread)"});
      t.right.insert(t.right.end(), {true, true});
    } else {
      t.header.push_back(label + " A → B");
      t.right.push_back(true);
    }
    t.header.insert(t.header.end(), {m == CompareMetric::kCpu ? "Δ CPU" : "Δ " + label, "verdict"});
    t.right.insert(t.right.end(), {true, false});
  }
  for (const CellDelta* c : group) {
    std::vector<std::string> row{c->target};
    const std::string only = c->presence == Presence::kOnlyA ? "only in A" : "only in B";
    for (CompareMetric m : options.metrics) {
      const MetricDelta& d = c->of(m);
      // req/s, the headline, shows its spread; the other figures stay narrow enough for a terminal.
      auto shown = [&](const SideFigure& f) {
        return m == CompareMetric::kRps ? WithSpread(m, f) : Figure(m, f.median);
      };
      const std::string fa = c->presence == Presence::kOnlyB ? kNone : shown(d.a);
      const std::string fb = c->presence == Presence::kOnlyA ? kNone : shown(d.b);
      if (m == CompareMetric::kRps) {
        row.insert(row.end(), {fa, fb});
      } else {
        row.push_back(fa + " → " + fb);
      }
      if (c->presence == Presence::kBoth) {
        row.insert(row.end(), {SignedPercent(d.delta), DeltaVerdictName(d.verdict)});
      } else {
        row.insert(row.end(), {kNone, only});
      }
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::vector<std::vector<const CellDelta*>> Groups(const RecordComparison& c) {
  std::vector<std::vector<const CellDelta*>> groups;
  for (const CellDelta& cell : c.cells) {
    if (groups.empty() || groups.back().front()->pair != cell.pair ||
        groups.back().front()->scenario != cell.scenario ||
        groups.back().front()->load_level != cell.load_level) {
      groups.emplace_back();
    }
    groups.back().push_back(&cell);
  }
  return groups;
}

std::string GroupTitle(const CellDelta& c) {
  return (c.pair.empty() ? "" : c.pair + " · ") + c.scenario + " · " + LoadLevelWords(c.load_level);
}

std::string FloorsLine(const CompareSide& s, const CompareOptions& options) {
  std::string out;
  for (const auto& pf : s.noise_floors) {
    std::string figures;
    for (CompareMetric m : options.metrics) {
      const auto& f = pf.floors[static_cast<int>(m)];
      if (!f) continue;
      figures +=
          (figures.empty() ? "" : ", ") + std::string(CompareMetricLabel(m)) + " " + Percent(*f);
    }
    if (figures.empty()) continue;
    out += (out.empty() ? "" : "; ") + (pf.pair.empty() ? "" : pf.pair + ": ") + figures;
  }
  return out.empty() ? "no noise floor" : "noise floor " + out;
}

std::string SideLine(const char* letter, const CompareSide& s, const CompareOptions& options) {
  return std::string(letter) + ": " + (s.campaign.empty() ? "?" : s.campaign) + ", " +
         s.created_at.substr(0, 10) + ", " + s.state + ", from " + s.source + "; " +
         FloorsLine(s, options);
}

std::vector<std::string> HeaderLines(const RecordComparison& c, const CompareOptions& options) {
  std::vector<std::string> lines{SideLine("A", c.a, options), SideLine("B", c.b, options)};
  if (c.a.hosts != c.b.hosts) {
    auto join = [](const std::vector<std::string>& v) {
      std::string out;
      for (const auto& s : v) out += (out.empty() ? "" : "; ") + s;
      return out.empty() ? std::string("no host facts") : out;
    };
    lines.push_back("Different hosts, absolute figures may not compare: A " + join(c.a.hosts) +
                    " | B " + join(c.b.hosts));
  }
  lines.push_back(
      "Δ = B / A − 1 of the medians. better/worse: |Δ| beyond the larger noise floor (without "
      "one, the larger spread) and the ranges apart; else close.");
  return lines;
}

struct Counts {
  int both = 0, only_a = 0, only_b = 0;
  std::array<std::array<int, 4>, kCompareMetricCount> by_verdict{};  // indexed by DeltaVerdict
};
Counts Count(const RecordComparison& c) {
  Counts n;
  for (const CellDelta& cell : c.cells) {
    if (cell.presence == Presence::kOnlyA) ++n.only_a;
    if (cell.presence == Presence::kOnlyB) ++n.only_b;
    if (cell.presence != Presence::kBoth) continue;
    ++n.both;
    for (CompareMetric m : kCompareMetrics) {
      ++n.by_verdict[static_cast<int>(m)][static_cast<int>(cell.of(m).verdict)];
    }
  }
  return n;
}

std::vector<std::string> SummaryLines(const RecordComparison& c, const CompareOptions& options) {
  const Counts n = Count(c);
  std::string line = Printf("%d in both, %d only in A, %d only in B.", n.both, n.only_a, n.only_b);
  for (CompareMetric m : options.metrics) {
    const auto& v = n.by_verdict[static_cast<int>(m)];
    line +=
        Printf(" %s: %d better, %d worse, %d close, %d n/a.", CompareMetricLabel(m),
               v[static_cast<int>(DeltaVerdict::kBetter)],
               v[static_cast<int>(DeltaVerdict::kWorse)], v[static_cast<int>(DeltaVerdict::kClose)],
               v[static_cast<int>(DeltaVerdict::kNotApplicable)]);
  }
  std::vector<std::string> lines{"Summary: " + line};
  if (options.fail_on_regression_pct) {
    const double pct = *options.fail_on_regression_pct;
    const auto hits = FindRegressions(c, options.metrics, pct);
    std::string gated;
    for (CompareMetric m : GatedMetrics(options.metrics)) {
      gated += (gated.empty() ? "" : ", ") + std::string(CompareMetricLabel(m));
    }
    lines.push_back(
        Printf("Regressions worse than A by more than %g%% (%s): ", pct, gated.c_str()) +
        (hits.empty() ? "none" : Printf("%zu", hits.size())));
    for (const Regression& r : hits) {
      lines.push_back("REGRESSION " + r.cell + ": " + CompareMetricLabel(r.metric) + " " +
                      SignedPercent(r.delta) + ", " + r.reason);
    }
  }
  return lines;
}

}  // namespace

std::string FormatCompareText(const RecordComparison& c, const CompareOptions& options) {
  std::string out;
  for (const std::string& l : HeaderLines(c, options)) out += l + "\n";
  for (const auto& group : Groups(c)) {
    out += "\n" + GroupTitle(*group.front()) + "\n" + Render(GroupTable(group, options), false);
  }
  out += "\n";
  for (const std::string& l : SummaryLines(c, options)) out += l + "\n";
  return out;
}

std::string FormatCompareMarkdown(const RecordComparison& c, const CompareOptions& options) {
  std::string out = "# benchlab compare: " + c.a.campaign + " → " + c.b.campaign + "\n\n";
  for (const std::string& l : HeaderLines(c, options)) out += "- " + l + "\n";
  for (const auto& group : Groups(c)) {
    out += "\n## " + GroupTitle(*group.front()) + "\n\n" + Render(GroupTable(group, options), true);
    std::string notes;
    for (const CellDelta* cell : group) {
      if (cell->presence != Presence::kBoth) continue;
      for (CompareMetric m : options.metrics) {
        const MetricDelta& d = cell->of(m);
        if (d.verdict == DeltaVerdict::kClose) continue;
        notes += "- " + cell->target + ", " + CompareMetricLabel(m) + ": " +
                 DeltaVerdictName(d.verdict) + ", " + d.reason + "\n";
      }
    }
    if (!notes.empty()) out += "\n" + notes;
  }
  out += "\n";
  // The summary, then the regressions' heading and each regression as a list item.
  const std::vector<std::string> lines = SummaryLines(c, options);
  for (size_t i = 0; i < lines.size(); ++i) {
    out += (i < 2 ? "" : "- ") + lines[i] + (i < 2 && i + 1 < lines.size() ? "\n\n" : "\n");
  }
  return out;
}

namespace {
ojson Num(double v) { return std::isfinite(v) ? ojson(v) : ojson(); }
ojson SideJson(const CompareSide& s) {
  ojson floors = ojson::array();
  for (const auto& pf : s.noise_floors) {
    ojson entry{{"pair", pf.pair}};
    for (CompareMetric m : kCompareMetrics) {
      const auto& f = pf.floors[static_cast<int>(m)];
      entry[CompareMetricKey(m)] = f ? ojson(*f) : ojson();
    }
    floors.push_back(entry);
  }
  return {{"source", s.source}, {"campaign", s.campaign},         {"created_at", s.created_at},
          {"state", s.state},   {"generated_by", s.generated_by}, {"noise_floor", floors},
          {"hosts", s.hosts}};
}
ojson FigureJson(const SideFigure& f) {
  return {{"n", f.n},
          {"median", Num(f.median)},
          {"min", Num(f.min)},
          {"max", Num(f.max)},
          {"spread_pct", Num(f.spread_pct)},
          {"noise_floor", f.noise_floor ? ojson(*f.noise_floor) : ojson()}};
}
}  // namespace

std::string FormatCompareJson(const RecordComparison& c, const CompareOptions& options) {
  ojson out;
  out["format"] = "benchlab-compare";
  out["version"] = 1;
  out["a"] = SideJson(c.a);
  out["b"] = SideJson(c.b);
  ojson metrics = ojson::array();
  for (CompareMetric m : options.metrics) metrics.push_back(CompareMetricKey(m));
  out["metrics"] = metrics;
  ojson cells = ojson::array();
  for (const CellDelta& cell : c.cells) {
    ojson figures = ojson::object();
    for (CompareMetric m : options.metrics) {
      const MetricDelta& d = cell.of(m);
      figures[CompareMetricKey(m)] = {
          {"a", cell.presence == Presence::kOnlyB ? ojson() : FigureJson(d.a)},
          {"b", cell.presence == Presence::kOnlyA ? ojson() : FigureJson(d.b)},
          {"delta", Num(d.delta)},
          {"threshold", Num(d.threshold)},
          {"threshold_from", d.threshold_from},
          {"verdict", cell.presence == Presence::kBoth    ? DeltaVerdictName(d.verdict)
                      : cell.presence == Presence::kOnlyA ? "only in A"
                                                          : "only in B"},
          {"reason", d.reason}};
    }
    cells.push_back({{"pair", cell.pair},
                     {"scenario", cell.scenario},
                     {"load_level", cell.load_level},
                     {"target", cell.target},
                     {"presence", cell.presence == Presence::kBoth    ? "both"
                                  : cell.presence == Presence::kOnlyA ? "only in A"
                                                                      : "only in B"},
                     {"metrics", figures}});
  }
  out["cells"] = cells;
  const Counts n = Count(c);
  ojson summary{{"both", n.both}, {"only_in_a", n.only_a}, {"only_in_b", n.only_b}};
  for (CompareMetric m : options.metrics) {
    ojson v = ojson::object();
    for (DeltaVerdict d : {DeltaVerdict::kBetter, DeltaVerdict::kWorse, DeltaVerdict::kClose,
                           DeltaVerdict::kNotApplicable}) {
      v[DeltaVerdictName(d)] = n.by_verdict[static_cast<int>(m)][static_cast<int>(d)];
    }
    summary[CompareMetricKey(m)] = v;
  }
  out["summary"] = summary;
  out["fail_on_regression_pct"] =
      options.fail_on_regression_pct ? ojson(*options.fail_on_regression_pct) : ojson();
  ojson regressions;  // null when not asked
  if (options.fail_on_regression_pct) {
    regressions = ojson::array();
    for (const Regression& r :
         FindRegressions(c, options.metrics, *options.fail_on_regression_pct)) {
      regressions.push_back({{"cell", r.cell},
                             {"pair", r.pair},
                             {"scenario", r.scenario},
                             {"load_level", r.load_level},
                             {"target", r.target},
                             {"metric", CompareMetricKey(r.metric)},
                             {"delta", Num(r.delta)},
                             {"reason", r.reason}});
    }
  }
  out["regressions"] = regressions;
  return out.dump(2) + "\n";
}

}  // namespace benchlab
