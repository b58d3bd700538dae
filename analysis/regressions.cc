#include "analysis/regressions.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "analysis/report_detail.h"

namespace benchlab {
namespace {

std::string Percent(double ratio) {
  if (!std::isfinite(ratio)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", (ratio - 1) * 100);
  return buf;
}

std::string SizeText(const RatioInterval& size) {
  return Percent(size.estimate) + " [" + Percent(size.low) + ", " + Percent(size.high) + "]";
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

}  // namespace

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
                              int campaigns) {
  std::string out = "series " + series + ": " + std::to_string(campaigns) + " campaign(s), " +
                    std::to_string(changes.size()) + " change point(s)\n";
  for (const SeriesChange& c : changes) {
    char line[1024];
    std::snprintf(line, sizeof line,
                  "\n%s %s: %s, %s (p = %.3f, %d campaigns before, %d after)\n"
                  "  between %s and %s; versions %s; %s, not re-measured\n",
                  SeriesKeyLabel(c.key).c_str(), MetricName(c.metric),
                  ChangeDirectionName(c.point.direction), SizeText(c.point.size).c_str(),
                  c.point.p_value, c.point.before_n, c.point.after_n, c.before->name.c_str(),
                  c.after->name.c_str(), Versions(c).c_str(), c.status.c_str());
    out += line;
  }
  return out;
}

std::string FormatChangesMarkdown(const std::string& series,
                                  const std::vector<SeriesChange>& changes, int campaigns,
                                  const std::string& dashboard) {
  std::string base = dashboard;
  if (!base.empty() && base.back() != '/') base += '/';
  auto campaign = [&](const SeriesCampaign* c) {
    if (c == nullptr) return std::string("-");
    if (base.empty()) return "`" + c->name + "`";
    return "[`" + c->name + "`](" + base + "#/campaigns/" + c->name + ")";
  };
  std::string out = "### benchlab: series `" + series + "`\n\n";
  if (changes.empty()) {
    return out + "No change point in " + std::to_string(campaigns) + " campaign(s).\n";
  }
  out += std::to_string(changes.size()) + " change point(s) in " + std::to_string(campaigns) +
         " campaign(s), each **suspected**: found in the history, not yet re-measured.\n\n"
         "| cell | target | figure | change | size [95% interval] | p | from | to | versions |\n"
         "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const SeriesChange& c : changes) {
    char p[32];
    std::snprintf(p, sizeof p, "%.3f", c.point.p_value);
    std::string cell = c.key.scenario + " " + c.key.load_level;
    if (!c.key.pair.empty()) cell += " on " + c.key.pair;
    out += "| " + cell + " | " + c.key.target + " | " + MetricName(c.metric) + " | " +
           ChangeDirectionName(c.point.direction) + " | " + SizeText(c.point.size) + " | " + p +
           " | " + campaign(c.before) + " | " + campaign(c.after) + " | " + Versions(c) + " |\n";
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
         {"verdict", IntervalVerdictName(c.point.verdict)},
         {"p_value", report_detail::Num(c.point.p_value)},
         {"campaigns_before", c.point.before_n},
         {"campaigns_after", c.point.after_n},
         {"before", c.before->name},
         {"after", c.after->name},
         {"after_id", c.after->id},
         {"old_build", c.old_build != nullptr ? ojson(c.old_build->name) : ojson(nullptr)},
         {"version_before", VersionOf(c.before, c.key.target)},
         {"version_after", VersionOf(c.after, c.key.target)}});
  }
  return j.dump(2) + "\n";
}

}  // namespace benchlab
