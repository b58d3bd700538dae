#include "analysis/series.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "analysis/report_detail.h"
#include "analysis/report_format.h"
#include "common/printable.h"
#include "common/text_table.h"
#include "coordinator/campaign.h"

namespace benchlab {

std::string SeriesKeyLabel(const SeriesKey& key) {
  std::string label = key.scenario + " " + key.load_level + " " + key.target;
  if (!key.pair.empty()) label += " on " + key.pair;
  return label;
}

Series BuildSeries(const std::string& name, const std::vector<ReportInput>& inputs, Metric metric,
                   double confidence) {
  Series series;
  series.name = name;
  series.metric = metric;
  series.confidence = confidence;
  std::vector<AuditWindow> audited;
  for (const ReportInput& input : inputs) {
    std::vector<AuditWindow> w = AuditWindowsOf(input, std::to_string(input.campaign.id));
    audited.insert(audited.end(), w.begin(), w.end());
  }
  series.gate_audit = AuditGates(audited);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ReportInput& input = inputs[i];
    SeriesCampaign campaign;
    campaign.id = input.campaign.id;
    campaign.name = input.campaign.name;
    campaign.created_at = input.campaign.created_at;
    campaign.state = input.campaign.state;
    std::map<std::string, std::set<std::string>> versions;
    std::vector<Measurement> windows;
    for (const WindowRow& row : input.windows) {
      if (!row.target_version.empty()) versions[row.target].insert(row.target_version);
      windows.push_back(ToMeasurement(row, ServicesCpuOf(input, row.id)));
    }
    for (const auto& [target, set] : versions) {
      std::string joined;
      for (const std::string& v : set) joined += (joined.empty() ? "" : ", ") + v;
      campaign.versions[target] = joined;
    }
    // What the campaign says it measured wins over what the windows recorded.
    campaign.labels = CampaignTextLabels(input.campaign.spec_toml);
    for (const auto& [target, label] : campaign.labels) campaign.versions[target] = label;
    series.campaigns.push_back(std::move(campaign));

    std::map<SeriesKey, std::vector<std::pair<int, double>>> by_line;  // (round, value)
    for (const Measurement& m : NewestAttempts(std::move(windows))) {
      if (m.noise || !m.valid) continue;
      const double value = MetricValue(m, metric);
      if (!std::isfinite(value) || value <= 0) continue;
      by_line[{m.pair, m.scenario, m.load_level, m.target}].emplace_back(m.round, value);
    }
    for (auto& [key, rounds] : by_line) {
      std::sort(rounds.begin(), rounds.end());
      HistoryPoint point;
      point.campaign = i;
      for (const auto& [round, value] : rounds) point.values.push_back(value);
      point.summary = Summarize(point.values);
      point.interval = LogRatioInterval(point.values, confidence);
      if (!point.interval.ok() && point.values.size() == 1)
        point.interval.estimate = point.values[0];
      series.lines[key].push_back(std::move(point));
    }
  }
  return series;
}

bool SeriesFilter::Matches(const SeriesKey& key) const {
  return (scenario.empty() || key.scenario == scenario) &&
         (load_level.empty() || key.load_level == load_level) &&
         (target.empty() || key.target == target);
}

namespace {

// 118,835 as every table writes a whole figure; three significant digits below 100.
std::string FigureText(double v) {
  if (!std::isfinite(v)) return "-";
  if (std::fabs(v) >= 100) return Thousands(v);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

const char* BetterWord(Metric metric) {
  return MetricBetter(metric) == Better::kHigher ? "higher" : "lower";
}

// The target's version in campaign `c`, "(label)" after one the campaign's labels gave; "-"
// without one.
std::string VersionText(const SeriesCampaign& c, const std::string& target) {
  auto version = c.versions.find(target);
  if (version == c.versions.end()) return "-";
  return c.labels.count(target) != 0 ? version->second + " (label)" : version->second;
}

// "59,870–61,402": a dash between the ends, as `compare` writes an interval, since a comma
// would read as a thousands separator.
std::string PointIntervalText(const HistoryPoint& p) {
  return p.interval.ok() ? FigureText(p.interval.low) + "–" + FigureText(p.interval.high) : "-";
}

std::string MatchingWords(const SeriesFilter& filter) {
  const bool all = filter.scenario.empty() && filter.load_level.empty() && filter.target.empty();
  return all ? "" : " that matches the filter";
}

}  // namespace

std::string FormatHistoryText(const Series& series, const SeriesFilter& filter, int width) {
  std::string out = WrapText(
      PrintableText("series " + series.name + ": " + std::to_string(series.campaigns.size()) +
                    " campaign(s), " + MetricName(series.metric) + " (" +
                    BetterWord(series.metric) + " is better), medians and " +
                    FigureText(series.confidence * 100) + "% intervals on the geometric mean"),
      width);
  size_t shown = 0;
  for (const auto& [key, points] : series.lines) {
    if (!filter.Matches(key)) continue;
    ++shown;
    out += "\n" + WrapText(PrintableText(SeriesKeyLabel(key)), width);
    // The version gives way first (cut), then the time of day, then n and the interval.
    TextTable table;
    table.indent = "  ";
    table.columns = {
        TableColumn("#").Right(),
        TableColumn("campaign").GivesWay(Shrink::kCutMiddle, 3, 16),
        TableColumn("created").GivesWay(Shrink::kShorten, 2),
        TableColumn("median").Right(),
        TableColumn("interval").Right().GivesWay(Shrink::kDrop, 5),
        TableColumn("n").Right().GivesWay(Shrink::kDrop, 4),
        TableColumn("version").GivesWay(Shrink::kCutEnd, 1, 12),
    };
    for (const HistoryPoint& p : points) {
      const SeriesCampaign& c = series.campaigns[p.campaign];
      table.rows.push_back({std::to_string(p.campaign + 1), c.name,
                            TableCell(c.created_at, c.created_at.substr(0, 10)),
                            FigureText(p.summary.median), PointIntervalText(p),
                            std::to_string(p.summary.n), VersionText(c, key.target)});
    }
    out += FormatTable(table, width);
  }
  if (!series.gate_audit.empty()) {
    out += "\n" + WrapText(
                      "gate audit over the series' campaigns (docs/gates.md, \"Every gate "
                      "audits itself\")",
                      width);
    for (const GateAudit& a : series.gate_audit) {
      out += WrapText(
          PrintableText("  " + std::string(GateAuditVerdictName(a.verdict)) + ": " + a.words),
          width, "    ");
    }
  }
  if (shown == 0) out += "\nno line has a valid window" + MatchingWords(filter) + "\n";
  return out;
}

std::string FormatHistoryMarkdown(const Series& series, const SeriesFilter& filter) {
  std::string out = "### benchlab: series `" + series.name + "`, " + MetricName(series.metric) +
                    "\n\n" + std::to_string(series.campaigns.size()) + " campaign(s); " +
                    BetterWord(series.metric) + " is better; medians and " +
                    FigureText(series.confidence * 100) +
                    "% intervals on the geometric mean of each campaign's valid rounds.\n";
  size_t shown = 0;
  for (const auto& [key, points] : series.lines) {
    if (!filter.Matches(key)) continue;
    ++shown;
    out += "\n#### " + SeriesKeyLabel(key) +
           "\n\n| # | campaign | created | median | interval | n | version |\n"
           "| ---: | --- | --- | ---: | --- | ---: | --- |\n";
    for (const HistoryPoint& p : points) {
      const SeriesCampaign& c = series.campaigns[p.campaign];
      const std::string version_text = VersionText(c, key.target);
      const std::string interval = PointIntervalText(p);
      out += "| " + std::to_string(p.campaign + 1) + " | " + c.name + " | " + c.created_at + " | " +
             FigureText(p.summary.median) + " | " + interval + " | " + std::to_string(p.summary.n) +
             " | " + version_text + " |\n";
    }
  }
  if (shown == 0) out += "\nNo line has a valid window" + MatchingWords(filter) + ".\n";
  if (!series.gate_audit.empty()) {
    out +=
        "\nGate audit over the series' campaigns (docs/gates.md, \"Every gate audits "
        "itself\"):\n\n";
    for (const GateAudit& a : series.gate_audit) {
      out += "- " + std::string(GateAuditVerdictName(a.verdict)) + ": " + a.words + "\n";
    }
  }
  return out;
}

std::string FormatHistoryJson(const Series& series, const SeriesFilter& filter) {
  using ojson = nlohmann::ordered_json;
  ojson j;
  j["series"] = series.name;
  j["figure"] = MetricName(series.metric);
  j["better"] = BetterWord(series.metric);
  j["confidence"] = series.confidence;
  j["campaigns"] = ojson::array();
  for (const SeriesCampaign& c : series.campaigns) {
    j["campaigns"].push_back({{"id", c.id},
                              {"name", c.name},
                              {"created_at", c.created_at},
                              {"state", c.state},
                              {"versions", c.versions},
                              {"labels", c.labels}});
  }
  j["gate_audit"] = GateAuditJson(series.gate_audit);
  j["lines"] = ojson::array();
  for (const auto& [key, points] : series.lines) {
    if (!filter.Matches(key)) continue;
    ojson line = {{"pair", key.pair},
                  {"scenario", key.scenario},
                  {"load_level", key.load_level},
                  {"target", key.target},
                  {"points", ojson::array()}};
    for (const HistoryPoint& p : points) {
      ojson values = ojson::array();
      for (double v : p.values) values.push_back(report_detail::Num(v));
      line["points"].push_back({{"campaign_id", series.campaigns[p.campaign].id},
                                {"campaign", series.campaigns[p.campaign].name},
                                {"n", p.summary.n},
                                {"median", report_detail::Num(p.summary.median)},
                                {"estimate", report_detail::Num(p.interval.estimate)},
                                {"low", report_detail::Num(p.interval.low)},
                                {"high", report_detail::Num(p.interval.high)},
                                {"values", values}});
    }
    j["lines"].push_back(std::move(line));
  }
  return j.dump(2) + "\n";
}

}  // namespace benchlab
