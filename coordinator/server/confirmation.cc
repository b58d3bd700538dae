#include "coordinator/server/confirmation.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/config_toml.h"
#include "coordinator/campaign.h"

namespace benchlab {
namespace {

Status Unplannable(const std::string& why) { return Status::FailedPrecondition(why); }

}  // namespace

Result<ConfirmationPlan> PlanConfirmation(const SeriesChange& change, const CampaignRow& old_build,
                                          const CampaignRow& newest,
                                          const std::vector<Metric>& figures,
                                          const std::string& name, const std::string& campaign_dir,
                                          const RemeasureSettings& settings,
                                          const CatalogueBuilds* catalogue) {
  const SeriesKey& key = change.key;
  if (!key.pair.empty() && catalogue == nullptr) {
    return Unplannable("the line runs on the pair of " + key.pair +
                       ": its builds live in the agents' catalogues, and the coordinator that "
                       "ran it re-measures it");
  }
  auto parsed_new = ParseCampaignText(newest.spec_toml, newest.source, campaign_dir);
  if (!parsed_new.ok())
    return Unplannable("campaign " + newest.name + ": " + parsed_new.status().message());
  auto parsed_old = ParseCampaignText(old_build.spec_toml, old_build.source, campaign_dir);
  if (!parsed_old.ok()) {
    return Unplannable("campaign " + old_build.name + ": " + parsed_old.status().message());
  }
  for (const Campaign* c : {&*parsed_new, &*parsed_old}) {
    const TargetDef* t = c->FindTarget(key.target);
    if (t == nullptr) return Unplannable("campaign " + c->name + " has no target " + key.target);
    if (catalogue != nullptr) {
      // The old build is a catalogue entry of its own; only the newest file's target is used.
      if (c == &*parsed_new && !t->command.empty()) {
        return Unplannable("campaign " + c->name + " gives target " + key.target +
                           " a command: its builds are not in an agent's catalogue");
      }
      continue;
    }
    if (t->command.empty()) {
      return Unplannable("campaign " + c->name + " names target " + key.target +
                         " from an agent's catalogue: the coordinator that ran it re-measures "
                         "it");
    }
    for (const auto& [env_name, value] : t->env) {
      if (IsRedactedEnvValue(value)) {
        return Unplannable("campaign " + c->name + " stored target " + key.target + "'s env " +
                           env_name + " redacted; its build cannot run from the store");
      }
    }
  }
  const LoadLevel* level = nullptr;
  const std::vector<LoadLevel> levels = parsed_new->LoadLevels();
  for (const LoadLevel& l : levels) {
    if (LoadLevelLabel(l) == key.load_level) level = &l;
  }
  if (level == nullptr) {
    return Unplannable("campaign " + newest.name + " has no load level " + key.load_level);
  }
  if (parsed_new->FindScenario(key.scenario) == nullptr) {
    return Unplannable("campaign " + newest.name + " has no scenario " + key.scenario);
  }

  auto new_doc = config::ParseToml(newest.spec_toml, newest.source);
  auto old_doc = config::ParseToml(old_build.spec_toml, old_build.source);
  if (!new_doc.ok() || !old_doc.ok()) return Unplannable("a stored campaign file does not parse");
  const toml::value* new_target = config::NamedTable(*new_doc, "target", key.target);
  const toml::value* old_target =
      catalogue != nullptr ? new_target : config::NamedTable(*old_doc, "target", key.target);
  if (new_target == nullptr || old_target == nullptr) {
    return Unplannable("target " + key.target + " is not a [[target]] table of both files");
  }

  ConfirmationPlan plan;
  plan.name = name;
  plan.new_target = key.target;
  plan.old_target = catalogue != nullptr ? catalogue->old_entry : key.target + "-old";
  plan.margin = parsed_new->stats.margin;

  toml::value doc = *new_doc;
  toml::table& root = doc.as_table();
  // What belongs to the history, or to other cells, goes.
  for (const char* k : {"noise", "negative", "labels", "public_env"}) root.erase(k);
  root["name"] = name;
  root["series"] = name;
  root["baseline"] = plan.old_target;

  toml::value old_copy = *old_target;
  old_copy.as_table()["name"] = plan.old_target;
  root["target"] = toml::array{*new_target, old_copy};
  if (catalogue != nullptr) {
    // The same pair as the line: one server agent holds both builds (docs/history.md).
    root["placement"] =
        toml::table{{"server", catalogue->server_agent}, {"load", catalogue->load_agent}};
  }

  toml::array scenarios;
  for (const toml::value& s : doc.at("scenario").as_array()) {
    if (s.is_table() && s.contains("name") && s.at("name").is_string() &&
        s.at("name").as_string().str == key.scenario) {
      scenarios.push_back(s);
    }
  }
  root["scenario"] = scenarios;

  toml::table& matrix = root["matrix"].as_table();
  matrix.erase("connections");
  matrix.erase("rates");
  if (level->rate > 0) {
    matrix["rates"] = toml::array{level->rate};
  } else {
    matrix["connections"] = toml::array{level->connections};
  }
  matrix["rounds"] = toml::table{{"min", settings.min_rounds}, {"max", settings.max_rounds}};
  matrix.erase("order");  // rotate: the two builds take turns at going first
  matrix.erase("seed");
  if (root.count("load") == 0) root["load"] = toml::table{};
  root["load"].as_table()["tool"] = toml::array{level->tool};

  toml::table stats;
  if (root.count("stats") != 0 && root["stats"].is_table()) stats = root["stats"].as_table();
  stats.erase("max_duration");
  stats["confidence"] = settings.confidence;
  stats["margin"] = plan.margin;
  toml::array decide_on;
  for (Metric m : figures) decide_on.push_back(std::string(MetricName(m)));
  stats["decide_on"] = decide_on;
  root["stats"] = stats;

  std::ostringstream out;
  out << "# Re-measurement of a suspected change in series " << newest.series << " ("
      << SeriesKeyLabel(key) << "): " << plan.old_target << " is the build of campaign "
      << old_build.name << ", " << plan.new_target << " the build of campaign " << newest.name
      << " (docs/history.md).\n"
      << toml::format(doc);
  plan.text = out.str();
  auto check = ParseCampaignText(plan.text, name + ".toml", campaign_dir);
  if (!check.ok()) return Unplannable("the re-measurement campaign: " + check.status().message());
  return plan;
}

std::string DescribeConfirmation(const SeriesChange& change, const ConfirmationRow& row) {
  std::string figures;
  if (row.estimate && row.low && row.high) {
    RatioInterval interval;
    interval.estimate = *row.estimate;
    interval.low = *row.low;
    interval.high = *row.high;
    figures = ": new/old " + FormatChangeSize(interval) + " over " + std::to_string(row.rounds) +
              " round(s)";
  }
  return "re-measured " + SeriesKeyLabel(change.key) + " " + MetricName(change.metric) + " (" +
         ChangeDirectionName(change.point.direction) + ", " +
         (change.after != nullptr ? "from " + change.after->name : std::string()) +
         "): " + row.status + figures + " (" + row.detail + ")";
}

ConfirmationRow NotMeasured(const SeriesChange& change, const std::string& series,
                            const std::string& why) {
  ConfirmationRow row;
  row.series = series;
  row.pair = change.key.pair;
  row.scenario = change.key.scenario;
  row.load_level = change.key.load_level;
  row.target = change.key.target;
  row.figure = MetricName(change.metric);
  row.after_campaign_id = change.after != nullptr ? change.after->id : 0;
  row.old_campaign_id = change.old_build != nullptr ? change.old_build->id : 0;
  row.status = "not measured";
  row.detail = why;
  return row;
}

ConfirmationRow JudgeConfirmation(const std::string& series, const SeriesChange& change,
                                  const ConfirmationPlan& plan,
                                  const std::vector<Measurement>& windows,
                                  const RemeasureSettings& settings) {
  ConfirmationRow row = NotMeasured(change, series, "");
  row.campaign = plan.name;
  RoundValues fresh, old;
  for (const Measurement& m : NewestAttempts(windows)) {
    if (!m.valid || m.noise || m.scenario != change.key.scenario ||
        m.load_level != change.key.load_level) {
      continue;
    }
    const double v = MetricValue(m, change.metric);
    if (m.target == plan.new_target) fresh[m.round] = v;
    if (m.target == plan.old_target) old[m.round] = v;
  }
  std::vector<double> ratios;
  for (const RoundRatio& r : RoundRatios(fresh, old)) ratios.push_back(r.ratio);
  ConfirmationRule rule;
  rule.margin = plan.margin;
  rule.plan = LookPlan::Adaptive(settings.min_rounds, settings.max_rounds, settings.confidence);
  int n = 0;
  for (double r : ratios) n += std::isfinite(r) && r > 0;
  const RatioInterval interval = LogRatioInterval(ratios, rule.plan.LevelAt(n));
  const ConfirmationDecision decision = DecideConfirmation(interval, change.point, rule);
  row.status = ConfirmationName(decision.decision);
  row.rounds = n;
  if (interval.ok()) {
    row.estimate = interval.estimate;
    row.low = interval.low;
    row.high = interval.high;
  }
  row.detail = decision.reason;
  return row;
}

double SeriesMargin(const CampaignRow& newest) {
  auto parsed = ParseCampaignText(newest.spec_toml, newest.source, "");
  return parsed.ok() ? parsed->stats.margin : StatsSpec{}.margin;
}

void ApplyConfirmations(std::vector<SeriesChange>& changes,
                        const std::vector<ConfirmationRow>& rows) {
  for (SeriesChange& c : changes) {
    for (const ConfirmationRow& r : rows) {
      if (r.pair != c.key.pair || r.scenario != c.key.scenario ||
          r.load_level != c.key.load_level || r.target != c.key.target ||
          r.figure != MetricName(c.metric) || c.after == nullptr ||
          r.after_campaign_id != c.after->id) {
        continue;
      }
      c.status = r.status;
      Remeasurement m;
      m.id = r.id;
      m.campaign = r.campaign;
      m.old_campaign_id = r.old_campaign_id;
      m.new_campaign_id = r.new_campaign_id;
      m.rounds = r.rounds;
      m.interval.n = r.rounds;
      if (r.estimate && r.low && r.high) {
        m.interval.estimate = *r.estimate;
        m.interval.low = *r.low;
        m.interval.high = *r.high;
      }
      m.detail = r.detail;
      c.remeasured = m;
    }
  }
}

bool TargetFromCatalogue(const CampaignRow& newest, const std::string& target) {
  auto parsed = ParseCampaignText(newest.spec_toml, newest.source, "");
  if (!parsed.ok()) return false;
  const TargetDef* t = parsed->FindTarget(target);
  return t != nullptr && t->command.empty();
}

Result<std::string> RecordedVersion(const std::vector<WindowRow>& windows,
                                    const std::string& target, const std::string& pair,
                                    const std::string& campaign) {
  std::set<std::string> versions;
  for (const WindowRow& w : windows) {
    if (w.target != target || w.pair != pair || w.verdict != "valid") continue;
    if (!w.target_version.empty() && w.target_version != "unavailable") {
      versions.insert(w.target_version);
    }
  }
  const std::string where =
      "campaign " + campaign + "'s windows of " + target + (pair.empty() ? "" : " on " + pair);
  if (versions.empty()) {
    return Status::FailedPrecondition(
        where +
        " recorded no version: without a `version` command in the catalogue entry, the "
        "old build cannot be found in a catalogue");
  }
  if (versions.size() > 1) {
    std::string all;
    for (const std::string& v : versions) all += (all.empty() ? "" : ", ") + v;
    return Status::FailedPrecondition(where + " recorded several versions (" + all +
                                      "): which build was measured is not known");
  }
  return *versions.begin();
}

Result<std::string> FindOldBuildEntry(const std::map<std::string, std::string>& versions,
                                      const std::string& agent, const std::string& target,
                                      const std::string& old_version,
                                      const std::string& new_version) {
  auto current = versions.find(target);
  if (current == versions.end()) {
    return Status::FailedPrecondition("agent " + agent + "'s catalogue no longer holds " + target);
  }
  if (current->second != new_version) {
    return Status::FailedPrecondition("agent " + agent + "'s " + target + " now runs version " +
                                      current->second + ", not the newest campaign's " +
                                      new_version + ": that build is no longer in its catalogue");
  }
  std::optional<std::string> same;  // `target` itself, when the two builds are one
  for (const auto& [entry, version] : versions) {
    if (version != old_version) continue;
    if (entry != target) return entry;
    same = entry;
  }
  if (same) {
    return Status::FailedPrecondition(
        "the old and the newest build are the same version " + old_version + " of " + target +
        " on agent " + agent +
        ", and no other entry of its catalogue runs it: one target cannot "
        "be measured against itself");
  }
  return Status::FailedPrecondition(
      "no entry of agent " + agent + "'s catalogue runs version " + old_version +
      " (the old build of " + target +
      "); keep it as an entry of its own to have changes re-measured (docs/history.md)");
}

std::optional<std::pair<std::string, std::string>> PairAgents(const std::string& placement_json,
                                                              const std::string& pair) {
  const nlohmann::json placed = nlohmann::json::parse(placement_json, nullptr, false);
  if (!placed.is_object()) return std::nullopt;
  auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : ""; };
  if (placed.contains("pairs") && placed["pairs"].is_array()) {
    for (const nlohmann::json& p : placed["pairs"]) {
      if (!p.is_array() || p.size() != 2) continue;
      const std::string server = text(p[0]), load = text(p[1]);
      if (!server.empty() && !load.empty() && (pair.empty() || server == pair)) {
        return std::make_pair(server, load);
      }
    }
    return std::nullopt;
  }
  if (!pair.empty() || !placed.contains("server")) return std::nullopt;
  const std::string server = text(placed["server"]);
  std::string load;
  if (placed.contains("load") && placed["load"].is_array() && !placed["load"].empty()) {
    load = text(placed["load"][0]);
  } else if (placed.contains("load")) {
    load = text(placed["load"]);
  }
  if (server.empty() || load.empty()) return std::nullopt;
  return std::make_pair(server, load);
}

Result<ConfirmationPlan> PlanOfCampaign(const CampaignRow& row) {
  auto parsed = ParseCampaignText(row.spec_toml, row.source, "");
  if (!parsed.ok()) return parsed.status();
  if (parsed->targets.size() != 2 || parsed->baseline.empty()) {
    return Status::FailedPrecondition("campaign " + row.name +
                                      " is not a re-measurement: it does not hold two targets, "
                                      "one of them the baseline");
  }
  ConfirmationPlan plan;
  plan.name = row.name;
  plan.text = row.spec_toml;
  plan.old_target = parsed->baseline;
  for (const TargetDef& t : parsed->targets) {
    if (t.name != parsed->baseline) plan.new_target = t.name;
  }
  plan.margin = parsed->stats.margin;
  return plan;
}

}  // namespace benchlab
