// The three outputs of `benchlab compare` (docs/compare.md): aligned text, Markdown and JSON,
// from a RecordComparison made by analysis/compare.cc.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/compare.h"
#include "analysis/compare_detail.h"
#include "analysis/report_format.h"
#include "common/printable.h"
#include "common/text_table.h"

namespace benchlab {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using namespace compare_detail;  // the comparison's own shared helpers

namespace {

// compare's words for a verdict: B is "better" or "worse" than A.
const char* VerdictText(ComparisonVerdict v) {
  return ComparisonVerdictName(v, VerdictWords::kBetterWorse);
}

// "0.941 (0.925–0.958)": the interval's estimate and ends; – without an interval.
std::string IntervalCell(const UnpairedInterval& iv) {
  if (!std::isfinite(iv.ratio.low)) return kMissing;
  return StrFormat("%.3f (%.3f–%.3f)", iv.ratio.estimate, iv.ratio.low, iv.ratio.high);
}

std::string LevelPct(double level) { return StrFormat("%.4g%%", level * 100); }

// Columns as display cells: UTF-8 continuation bytes take no width (µ, Δ, →, – are one each).
size_t TextWidth(const std::string& s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xC0) != 0x80; }));
}
std::string Pad(const std::string& s, size_t width, bool right) {
  const std::string fill(width > TextWidth(s) ? width - TextWidth(s) : 0, ' ');
  return right ? fill + s : s + fill;
}

struct Table {
  std::vector<std::string> header;
  std::vector<bool> right;
  std::vector<std::vector<std::string>> rows;
};

// The records compared are files from anywhere: every name and reason in them is shown printable
// (common/printable.h), so that none can start a line of its own or reach a terminal as a control.
std::string Render(const Table& given, bool markdown) {
  Table t = given;
  for (auto& row : t.rows) {
    for (std::string& cell : row) cell = PrintableText(cell);
  }
  std::vector<size_t> width(t.header.size(), markdown ? 3 : 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], TextWidth(row[i]));
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

std::string WithSpread(Metric m, const SideFigure& s) {
  std::string v = Figure(m, s.median);
  if (s.n > 1 && std::isfinite(s.spread_pct)) v += StrFormat(" (%.1f%%)", s.spread_pct);
  return v;
}

// The rows of one group (pair, scenario, load level) as a table of the selected metrics.
Table GroupTable(const std::vector<const CellDelta*>& group, const StatsRule& rule,
                 const CompareOptions& options) {
  Table t;
  t.header.push_back("target");
  t.right.push_back(false);
  for (Metric m : options.metrics) {
    const std::string label = MetricLabel(m);
    if (m == Metric::kRps) {
      t.header.insert(t.header.end(), {"A req/s (spread)", "B req/s (spread)"});
      t.right.insert(t.right.end(), {true, true});
    } else {
      t.header.push_back(label + " A → B");
      t.right.push_back(true);
    }
    t.header.insert(t.header.end(), {m == Metric::kCpuUsPerRequest ? "Δ CPU" : "Δ " + label,
                                     "B/A (" + LevelPct(rule.confidence) + " CI)", "verdict"});
    t.right.insert(t.right.end(), {true, true, false});
  }
  for (const CellDelta* c : group) {
    std::vector<std::string> row{c->target};
    const std::string only = c->presence == Presence::kOnlyA ? "only in A" : "only in B";
    for (Metric m : options.metrics) {
      const MetricDelta& d = c->of(m);
      // req/s, the headline, shows its spread; the other figures stay narrow enough for a terminal.
      auto shown = [&](const SideFigure& f) {
        return m == Metric::kRps ? WithSpread(m, f) : Figure(m, f.median);
      };
      const std::string fa = c->presence == Presence::kOnlyB ? kNone : shown(d.a);
      const std::string fb = c->presence == Presence::kOnlyA ? kNone : shown(d.b);
      if (m == Metric::kRps) {
        row.insert(row.end(), {fa, fb});
      } else {
        row.push_back(fa + " → " + fb);
      }
      if (c->presence == Presence::kBoth) {
        row.insert(row.end(),
                   {SignedPercent(d.delta), IntervalCell(d.interval), VerdictText(d.verdict)});
      } else {
        row.insert(row.end(), {kNone, kNone, only});
      }
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

// The terminal's table of one group: a row per target and figure, so that more figures make the
// table longer, not wider. On a narrow terminal A's and B's spread go first, then long target
// names are cut in the middle, then the interval and Δ are left out; the verdict always stays.
TextTable GroupTextTable(const std::vector<const CellDelta*>& group, const StatsRule& rule,
                         const CompareOptions& options) {
  TextTable t;
  t.columns = {
      TableColumn("target").GivesWay(Shrink::kCutMiddle, 2, 16),
      TableColumn("figure"),
      TableColumn("A").Right().GivesWay(Shrink::kShorten, 1),
      TableColumn("B").Right().GivesWay(Shrink::kShorten, 1),
      TableColumn("Δ").Right().GivesWay(Shrink::kDrop, 4),
      TableColumn("B/A (" + LevelPct(rule.confidence) + " CI)").Right().GivesWay(Shrink::kDrop, 3),
      TableColumn("verdict"),
  };
  for (const CellDelta* c : group) {
    bool first = true;
    for (Metric m : options.metrics) {
      const MetricDelta& d = c->of(m);
      // req/s, the headline, shows its spread while the table fits.
      auto side = [&](const SideFigure& f, bool absent) {
        if (absent) return TableCell(kNone);
        return m == Metric::kRps ? TableCell(WithSpread(m, f), Figure(m, f.median))
                                 : TableCell(Figure(m, f.median));
      };
      std::vector<TableCell> row{first ? c->target : "", MetricLabel(m),
                                 side(d.a, c->presence == Presence::kOnlyB),
                                 side(d.b, c->presence == Presence::kOnlyA)};
      if (c->presence == Presence::kBoth) {
        row.insert(row.end(),
                   {SignedPercent(d.delta), IntervalCell(d.interval), VerdictText(d.verdict)});
      } else {
        row.insert(row.end(),
                   {kNone, kNone, c->presence == Presence::kOnlyA ? "only in A" : "only in B"});
      }
      t.rows.push_back(std::move(row));
      first = false;
    }
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
  return PrintableText((c.pair.empty() ? "" : c.pair + " · ") + c.scenario + " · " +
                       LoadLevelWords(c.load_level));
}

std::string FloorsLine(const CompareSide& s, const CompareOptions& options) {
  std::string out;
  for (const auto& pf : s.noise_floors) {
    std::string figures;
    for (Metric m : options.metrics) {
      const auto& f = pf.floors[static_cast<int>(m)];
      if (!f) continue;
      figures += (figures.empty() ? "" : ", ") + std::string(MetricLabel(m)) + " " + Percent(*f);
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
  // A side measured with its gates in warn mode counts windows the gates would refuse as valid:
  // said before any figure, so that it never passes for a gated run (docs/compare.md).
  for (const auto& [letter, side] : {std::pair{"A", &c.a}, std::pair{"B", &c.b}}) {
    if (side->gates_mode == "warn") {
      lines.push_back(std::string(letter) +
                      " ran with its gates in warn mode: windows they would " +
                      "refuse count as valid, so its figures may include disturbed windows.");
    }
  }
  if (c.a.gates_mode != c.b.gates_mode && !c.a.gates_mode.empty() && !c.b.gates_mode.empty()) {
    lines.push_back("A and B were gated differently (A " + c.a.gates_mode + ", B " +
                    c.b.gates_mode + "): their windows were not held to the same rules.");
  }
  const std::string of = c.baseline.empty()
                             ? "of the valid rounds' figures"
                             : "of the valid rounds' figures, for every target but " + c.baseline +
                                   " of its per-round ratio to " + c.baseline;
  lines.push_back("B/A = exp(mean ln B − mean ln A) " + of + ", with a Welch t interval at " +
                  LevelPct(c.rule.confidence) +
                  " (unpaired: the two runs' rounds were not measured together). Verdict against "
                  "the margin ±" +
                  LevelPct(c.rule.margin) +
                  ": better/worse when the whole interval lies beyond it, close when inside it, "
                  "else inconclusive.");
  lines.push_back(
      "Δ = B / A − 1 of the medians. Noise-floor rule (context, not the verdict): |Δ| beyond the "
      "larger noise floor (without one, the larger spread) and the ranges apart.");
  return lines;
}

struct Counts {
  int both = 0, only_a = 0, only_b = 0;
  // By Metric, then by ComparisonVerdict.
  std::array<std::array<int, kComparisonVerdictCount>, kMetricCount> by_verdict{};
};
Counts Count(const RecordComparison& c) {
  Counts n;
  for (const CellDelta& cell : c.cells) {
    if (cell.presence == Presence::kOnlyA) ++n.only_a;
    if (cell.presence == Presence::kOnlyB) ++n.only_b;
    if (cell.presence != Presence::kBoth) continue;
    ++n.both;
    for (Metric m : kComparedMetrics) {
      ++n.by_verdict[static_cast<int>(m)][static_cast<int>(cell.of(m).verdict)];
    }
  }
  return n;
}

std::vector<std::string> SummaryLines(const RecordComparison& c, const CompareOptions& options) {
  const Counts n = Count(c);
  std::string line =
      StrFormat("%d in both, %d only in A, %d only in B.", n.both, n.only_a, n.only_b);
  for (Metric m : options.metrics) {
    const auto& v = n.by_verdict[static_cast<int>(m)];
    auto count = [&](ComparisonVerdict d) { return v[static_cast<int>(d)]; };
    line +=
        StrFormat(" %s: %d better, %d worse, %d close, %d inconclusive, %d n/a.", MetricLabel(m),
                  count(ComparisonVerdict::kBetter), count(ComparisonVerdict::kWorse),
                  count(ComparisonVerdict::kClose), count(ComparisonVerdict::kInconclusive),
                  count(ComparisonVerdict::kNotApplicable));
  }
  std::vector<std::string> lines{"Summary: " + line};
  if (options.fail_on_regression_pct) {
    const double pct = *options.fail_on_regression_pct;
    const auto hits = FindRegressions(c, options.metrics, pct);
    std::string gated;
    for (Metric m : GatedMetrics(options.metrics)) {
      gated += (gated.empty() ? "" : ", ") + std::string(MetricLabel(m));
    }
    lines.push_back(
        StrFormat("Regressions worse than A by more than %g%% (%s): ", pct, gated.c_str()) +
        (hits.empty() ? "none" : StrFormat("%zu", hits.size())));
    for (const Regression& r : hits) {
      lines.push_back("REGRESSION " + r.cell + ": " + MetricLabel(r.metric) + " " +
                      SignedPercent(r.change) + ", " + r.reason);
    }
  }
  return lines;
}

}  // namespace

std::string FormatCompareText(const RecordComparison& c, const CompareOptions& options) {
  std::string out;
  const int width = options.width;
  for (const std::string& l : HeaderLines(c, options)) out += WrapText(PrintableText(l), width);
  for (const auto& group : Groups(c)) {
    out += "\n" + WrapText(GroupTitle(*group.front()), width) +
           FormatTable(GroupTextTable(group, c.rule, options), width);
  }
  out += "\n";
  for (const std::string& l : SummaryLines(c, options)) out += WrapText(PrintableText(l), width);
  return out;
}

std::string FormatCompareMarkdown(const RecordComparison& c, const CompareOptions& options) {
  std::string out = "# benchlab compare: " + PrintableText(c.a.campaign) + " → " +
                    PrintableText(c.b.campaign) + "\n\n";
  for (const std::string& l : HeaderLines(c, options)) out += "- " + PrintableText(l) + "\n";
  for (const auto& group : Groups(c)) {
    out += "\n## " + GroupTitle(*group.front()) + "\n\n" +
           Render(GroupTable(group, c.rule, options), true);
    std::string notes;
    for (const CellDelta* cell : group) {
      if (cell->presence != Presence::kBoth) continue;
      for (Metric m : options.metrics) {
        const MetricDelta& d = cell->of(m);
        if (d.verdict == ComparisonVerdict::kClose) continue;
        notes += "- " +
                 PrintableText(cell->target + ", " + MetricLabel(m) + ": " +
                               VerdictText(d.verdict) + ", " + d.reason + "; noise-floor rule: " +
                               VerdictText(d.noise_rule.verdict) + ", " + d.noise_rule.reason) +
                 "\n";
      }
    }
    if (!notes.empty()) out += "\n" + notes;
  }
  out += "\n";
  // The summary, then the regressions' heading and each regression as a list item.
  const std::vector<std::string> lines = SummaryLines(c, options);
  for (size_t i = 0; i < lines.size(); ++i) {
    out += (i < 2 ? "" : "- ") + PrintableText(lines[i]) +
           (i < 2 && i + 1 < lines.size() ? "\n\n" : "\n");
  }
  return out;
}

namespace {
ojson JsonNumber(double v) { return std::isfinite(v) ? ojson(v) : ojson(); }
ojson SideJson(const CompareSide& s) {
  ojson floors = ojson::array();
  for (const auto& pf : s.noise_floors) {
    ojson entry{{"pair", pf.pair}};
    for (Metric m : kComparedMetrics) {
      const auto& f = pf.floors[static_cast<int>(m)];
      entry[MetricName(m)] = f ? ojson(*f) : ojson();
    }
    floors.push_back(entry);
  }
  return {{"source", s.source},
          {"campaign", s.campaign},
          {"created_at", s.created_at},
          {"state", s.state},
          {"generated_by", s.generated_by},
          {"gates_mode", s.gates_mode},
          {"noise_floor", floors},
          {"hosts", s.hosts}};
}
ojson FigureJson(const SideFigure& f) {
  return {{"n", f.n},
          {"median", JsonNumber(f.median)},
          {"min", JsonNumber(f.min)},
          {"max", JsonNumber(f.max)},
          {"spread_pct", JsonNumber(f.spread_pct)},
          {"noise_floor", f.noise_floor ? ojson(*f.noise_floor) : ojson()}};
}
ojson IntervalJson(const UnpairedInterval& iv) {
  if (!std::isfinite(iv.ratio.low)) return ojson();
  return {{"n_a", iv.n_a},
          {"n_b", iv.n_b},
          {"df", JsonNumber(iv.df)},
          {"level", JsonNumber(iv.ratio.level)},
          {"estimate", JsonNumber(iv.ratio.estimate)},
          {"low", JsonNumber(iv.ratio.low)},
          {"high", JsonNumber(iv.ratio.high)}};
}
ojson NoiseRuleJson(const NoiseRule& r) {
  return {{"verdict", VerdictText(r.verdict)},
          {"reason", r.reason},
          {"threshold", JsonNumber(r.threshold)},
          {"threshold_from", r.threshold_from}};
}
}  // namespace

std::string FormatCompareJson(const RecordComparison& c, const CompareOptions& options) {
  ojson out;
  out["format"] = "benchlab-compare";
  out["version"] = 2;
  out["a"] = SideJson(c.a);
  out["b"] = SideJson(c.b);
  out["stats"] = {{"confidence", c.rule.confidence},
                  {"margin", c.rule.margin},
                  {"basis", c.basis == BasisChoice::kAuto       ? "auto"
                            : c.basis == BasisChoice::kAbsolute ? "absolute"
                                                                : "baseline"},
                  {"baseline", c.baseline.empty() ? ojson() : ojson(c.baseline)}};
  ojson metrics = ojson::array();
  for (Metric m : options.metrics) metrics.push_back(MetricName(m));
  out["metrics"] = metrics;
  ojson cells = ojson::array();
  for (const CellDelta& cell : c.cells) {
    ojson figures = ojson::object();
    for (Metric m : options.metrics) {
      const MetricDelta& d = cell.of(m);
      const bool both = cell.presence == Presence::kBoth;
      figures[MetricName(m)] = {
          {"a", cell.presence == Presence::kOnlyB ? ojson() : FigureJson(d.a)},
          {"b", cell.presence == Presence::kOnlyA ? ojson() : FigureJson(d.b)},
          {"delta", JsonNumber(d.delta)},
          {"basis", IntervalBasisName(d.basis)},
          {"interval", IntervalJson(d.interval)},
          {"verdict", both                                ? VerdictText(d.verdict)
                      : cell.presence == Presence::kOnlyA ? "only in A"
                                                          : "only in B"},
          {"reason", d.reason},
          {"noise_rule", both ? NoiseRuleJson(d.noise_rule) : ojson()}};
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
  for (Metric m : options.metrics) {
    ojson v = ojson::object();
    for (ComparisonVerdict d :
         {ComparisonVerdict::kBetter, ComparisonVerdict::kWorse, ComparisonVerdict::kClose,
          ComparisonVerdict::kInconclusive, ComparisonVerdict::kNotApplicable}) {
      v[VerdictText(d)] = n.by_verdict[static_cast<int>(m)][static_cast<int>(d)];
    }
    summary[MetricName(m)] = v;
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
                             {"metric", MetricName(r.metric)},
                             {"change", JsonNumber(r.change)},
                             {"reason", r.reason}});
    }
  }
  out["regressions"] = regressions;
  return out.dump(2) + "\n";
}

}  // namespace benchlab
