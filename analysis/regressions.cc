#include "analysis/regressions.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "analysis/report_detail.h"
#include "common/printable.h"
#include "common/text_table.h"

namespace benchlab {
namespace {

std::string ChangePercent(double ratio) {
  if (!std::isfinite(ratio)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", (ratio - 1) * 100);
  return buf;
}

std::string VersionOf(const SeriesCampaign* c, const std::string& target) {
  if (c == nullptr) return "-";
  auto it = c->versions.find(target);
  return it == c->versions.end() ? "-" : it->second;
}

std::string Versions(const SeriesChange& c) {
  const std::string before = VersionOf(c.before, c.key.target);
  const std::string after = VersionOf(c.after, c.key.target);
  return before == after ? before + " (unchanged)" : before + " -> " + after;
}

// "; re-measured in C over N rounds: +x% [lo, hi], confirmed" or the status alone.
std::string RemeasuredText(const SeriesChange& c) {
  if (!c.remeasured) return c.status + ", not re-measured";
  const Remeasurement& r = *c.remeasured;
  if (r.campaign.empty()) return c.status + ": " + r.detail;
  std::string out =
      "re-measured by " + r.campaign + " over " + std::to_string(r.rounds) + " round(s)";
  if (std::isfinite(r.interval.estimate)) out += ": " + FormatChangeSize(r.interval);
  out += ", " + c.status + (r.detail.empty() ? "" : " (" + r.detail + ")");
  if (r.id > 0) out += "; change " + std::to_string(r.id);
  return out;
}

}  // namespace

std::string FormatChangeSize(const RatioInterval& size) {
  return ChangePercent(size.estimate) + " [" + ChangePercent(size.low) + ", " +
         ChangePercent(size.high) + "]";
}

std::vector<size_t> LastChangeOfEachLine(const std::vector<SeriesChange>& changes) {
  std::vector<size_t> out;
  for (size_t i = 0; i < changes.size(); ++i) {
    bool last = true;
    for (size_t j = 0; j < changes.size(); ++j) {
      if (j != i && changes[j].key == changes[i].key && changes[j].metric == changes[i].metric &&
          changes[j].point.index > changes[i].point.index) {
        last = false;
      }
    }
    if (last) out.push_back(i);
  }
  return out;
}

std::vector<SeriesChange> FindSeriesChanges(const Series& series, const ChangeSearch& search,
                                            const SeriesFilter& filter) {
  std::vector<SeriesChange> out;
  ChangePointOptions options = search.options;
  options.better = MetricBetter(series.metric);
  for (const auto& [key, points] : series.lines) {
    if (!filter.Matches(key)) continue;
    std::vector<SeriesPoint> input;
    for (const HistoryPoint& p : points) {
      input.push_back({series.campaigns[p.campaign].id, p.summary.median, p.values});
    }
    for (const ChangePoint& cp : DetectChangePoints(input, options).change_points) {
      if (cp.index == 0 || cp.index >= points.size()) continue;
      SeriesChange change;
      change.key = key;
      change.metric = series.metric;
      change.point = cp;
      change.before = &series.campaigns[points[cp.index - 1].campaign];
      change.after = &series.campaigns[points[cp.index].campaign];
      if (cp.old_index < points.size()) {
        change.old_build = &series.campaigns[points[cp.old_index].campaign];
      }
      if (change.after->id < search.since_id) continue;
      out.push_back(std::move(change));
    }
  }
  return out;
}

std::string FormatChangesText(const std::string& series, const std::vector<SeriesChange>& changes,
                              int campaigns, int width) {
  std::string out = WrapText(
      PrintableText("series " + series + ": " + std::to_string(campaigns) + " campaign(s), " +
                    std::to_string(changes.size()) + " change point(s)"),
      width);
  for (const SeriesChange& c : changes) {
    char stats[160];
    std::snprintf(stats, sizeof stats, " (p = %.3f, %d campaigns before, %d after)",
                  c.point.p_value, c.point.before_n, c.point.after_n);
    out += "\n" + WrapText(PrintableText(SeriesKeyLabel(c.key) + " " + MetricName(c.metric) + ": " +
                                         ChangeDirectionName(c.point.direction) + ", " +
                                         FormatChangeSize(c.point.size) + stats),
                           width, "    ");
    out += WrapText(PrintableText("  between " + c.before->name + " and " + c.after->name +
                                  "; versions " + Versions(c) + "; " + RemeasuredText(c)),
                    width, "    ");
  }
  return out;
}

std::string FormatChangesMarkdown(const std::string& series,
                                  const std::vector<SeriesChange>& changes, int campaigns,
                                  const std::string& dashboard) {
  std::string base = dashboard;
  if (!base.empty() && base.back() != '/') base += '/';
  auto campaign_link = [&](const std::string& name) {
    if (base.empty()) return "`" + name + "`";
    return "[`" + name + "`](" + base + "#/campaigns/" + name + ")";
  };
  auto campaign = [&](const SeriesCampaign* c) {
    return c == nullptr ? std::string("-") : campaign_link(c->name);
  };
  auto remeasured = [&](const SeriesChange& c) {
    if (!c.remeasured) return std::string("-");
    const Remeasurement& r = *c.remeasured;
    if (r.campaign.empty()) return r.detail;
    std::string text = std::isfinite(r.interval.estimate) ? FormatChangeSize(r.interval) : "-";
    return text + ", " + std::to_string(r.rounds) + " rounds (" + campaign_link(r.campaign) + ")";
  };
  std::string out = "### benchlab: series `" + series + "`\n\n";
  if (changes.empty()) {
    return out + "No change point in " + std::to_string(campaigns) + " campaign(s).\n";
  }
  int confirmed = 0, withdrawn = 0;
  for (const SeriesChange& c : changes) {
    confirmed += c.status == "confirmed";
    withdrawn += c.status == "false alarm";
  }
  out += std::to_string(changes.size()) + " change point(s) in " + std::to_string(campaigns) +
         " campaign(s): " + std::to_string(confirmed) + " confirmed by re-measurement, " +
         std::to_string(withdrawn) +
         " withdrawn as false alarms; a **suspected** one was found in the history and not "
         "re-measured.\n\n"
         "| cell | target | figure | change | size [95% interval] | p | from | to | versions | "
         "status | re-measured new / old |\n"
         "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const SeriesChange& c : changes) {
    char p[32];
    std::snprintf(p, sizeof p, "%.3f", c.point.p_value);
    std::string cell = c.key.scenario + " " + c.key.load_level;
    if (!c.key.pair.empty()) cell += " on " + c.key.pair;
    out += "| " + cell + " | " + c.key.target + " | " + MetricName(c.metric) + " | " +
           ChangeDirectionName(c.point.direction) + " | " + FormatChangeSize(c.point.size) + " | " +
           p + " | " + campaign(c.before) + " | " + campaign(c.after) + " | " + Versions(c) +
           " | " + (c.status == "confirmed" ? "**confirmed**" : c.status) + " | " + remeasured(c) +
           " |\n";
  }
  return out;
}

std::string FormatChangesJson(const std::string& series, const std::vector<SeriesChange>& changes,
                              int campaigns) {
  using ojson = nlohmann::ordered_json;
  ojson j;
  j["series"] = series;
  j["campaigns"] = campaigns;
  j["changes"] = ojson::array();
  for (const SeriesChange& c : changes) {
    ojson remeasured = nullptr;
    if (c.remeasured) {
      const Remeasurement& r = *c.remeasured;
      remeasured = {{"id", r.id},
                    {"campaign", r.campaign.empty() ? ojson(nullptr) : ojson(r.campaign)},
                    {"old_campaign_id", r.old_campaign_id},
                    {"new_campaign_id", r.new_campaign_id},
                    {"rounds", r.rounds},
                    {"estimate", report_detail::Num(r.interval.estimate)},
                    {"low", report_detail::Num(r.interval.low)},
                    {"high", report_detail::Num(r.interval.high)},
                    {"level", report_detail::Num(r.interval.level)},
                    {"detail", r.detail}};
    }
    j["changes"].push_back(
        {{"pair", c.key.pair},
         {"scenario", c.key.scenario},
         {"load_level", c.key.load_level},
         {"target", c.key.target},
         {"figure", MetricName(c.metric)},
         {"direction", ChangeDirectionName(c.point.direction)},
         {"status", c.status},
         {"size",
          {{"estimate", report_detail::Num(c.point.size.estimate)},
           {"low", report_detail::Num(c.point.size.low)},
           {"high", report_detail::Num(c.point.size.high)},
           {"level", report_detail::Num(c.point.size.level)}}},
         {"verdict", ComparisonVerdictName(c.point.verdict)},
         {"p_value", report_detail::Num(c.point.p_value)},
         {"campaigns_before", c.point.before_n},
         {"campaigns_after", c.point.after_n},
         {"before", c.before->name},
         {"after", c.after->name},
         {"after_id", c.after->id},
         {"old_build", c.old_build != nullptr ? ojson(c.old_build->name) : ojson(nullptr)},
         {"version_before", VersionOf(c.before, c.key.target)},
         {"version_after", VersionOf(c.after, c.key.target)},
         {"remeasured", remeasured}});
  }
  return j.dump(2) + "\n";
}

}  // namespace benchlab
