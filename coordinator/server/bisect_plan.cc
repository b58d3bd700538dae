#include "coordinator/server/bisect_plan.h"

#include <map>
#include <sstream>

#include "common/config_toml.h"

namespace benchlab {
namespace {

Status BisectUnplannable(const std::string& why) { return Status::FailedPrecondition(why); }

}  // namespace

Result<BisectCell> ChooseBisectCell(const Campaign& campaign, const std::string& text) {
  std::vector<BisectCell> cells;
  std::string known;
  for (const ScenarioDef& s : campaign.scenarios) {
    for (const LoadLevel& level : campaign.LoadLevels()) {
      cells.push_back({s.name, LoadLevelLabel(level)});
      known += (known.empty() ? "" : ", ") + cells.back().Label();
    }
  }
  if (text.empty()) {
    if (cells.size() == 1) return cells.front();
    return Status::InvalidArgument("--cell: campaign " + campaign.name + " has " +
                                   std::to_string(cells.size()) +
                                   " cells; name one as SCENARIO/LEVEL: " + known);
  }
  for (const BisectCell& c : cells) {
    if (c.Label() == text) return c;
  }
  return Status::InvalidArgument("--cell: expected SCENARIO/LEVEL, one of " + known + "; got \"" +
                                 text + "\"");
}

BisectTargetNames BisectTargetsOf(const std::string& target) {
  return {target + "-good", target + "-candidate", target + "-bad"};
}

Result<std::string> PlanBisectCampaign(const std::string& campaign_text,
                                       const std::string& source_name,
                                       const std::string& campaign_dir, const std::string& target,
                                       const BisectCell& cell, const std::string& good_oid,
                                       const std::string& candidate_oid, const std::string& bad_oid,
                                       int rounds, const std::string& name, bool profile,
                                       const BisectPair& pair) {
  auto parsed = ParseCampaignText(campaign_text, source_name, campaign_dir);
  if (!parsed.ok()) return BisectUnplannable(parsed.status().message());
  const LoadLevel* level = nullptr;
  const std::vector<LoadLevel> levels = parsed->LoadLevels();
  for (const LoadLevel& l : levels) {
    if (LoadLevelLabel(l) == cell.load_level) level = &l;
  }
  if (level == nullptr || parsed->FindScenario(cell.scenario) == nullptr) {
    return BisectUnplannable("campaign " + parsed->name + " has no cell " + cell.Label());
  }
  auto doc = config::ParseToml(campaign_text, source_name);
  if (!doc.ok()) return BisectUnplannable(doc.status().message());
  const toml::value* table = config::NamedTable(*doc, "target", target);
  if (table == nullptr) {
    return BisectUnplannable("campaign " + parsed->name + " has no [[target]] " + target);
  }
  const toml::value* scenario = config::NamedTable(*doc, "scenario", cell.scenario);

  toml::value out = *doc;
  toml::table& root = out.as_table();
  // What belongs to the history, or to other cells and targets, goes.
  for (const char* k : {"noise", "negative", "labels", "public_env", "baseline", "placement"}) {
    root.erase(k);
  }
  root["name"] = name;
  root["series"] = name;
  if (!pair.empty()) root["placement"] = toml::table{{"server", pair.server}, {"load", pair.load}};
  const BisectTargetNames names = BisectTargetsOf(target);
  root["baseline"] = names.good;
  toml::array targets;
  for (const auto& [build_name, oid] :
       {std::pair{names.good, good_oid}, std::pair{names.candidate, candidate_oid},
        std::pair{names.bad, bad_oid}}) {
    toml::value copy = *table;
    copy.as_table()["name"] = build_name;
    if (!copy.contains("of")) copy.as_table()["of"] = target;
    copy.as_table()["commit"] = oid;
    targets.push_back(copy);
  }
  root["target"] = targets;
  // Profiles of the builds as the file profiles its target; on for the culprit's look.
  if (profile) {
    toml::table on{{"enabled", true}, {"targets", toml::array{names.good, names.candidate}}};
    if (auto given = root.find("profile"); given != root.end() && given->second.is_table()) {
      const toml::table& was = given->second.as_table();
      if (auto f = was.find("frequency"); f != was.end()) on["frequency"] = f->second;
    }
    root["profile"] = on;
  } else if (parsed->Profiles(target)) {
    if (root["profile"].as_table().count("targets") != 0) {
      root["profile"].as_table()["targets"] = toml::array{names.good, names.candidate, names.bad};
    }
  } else {
    root.erase("profile");
  }
  root["scenario"] = toml::array{*scenario};

  toml::table& matrix = root["matrix"].as_table();
  matrix.erase("connections");
  matrix.erase("rates");
  if (level->rate > 0) {
    matrix["rates"] = toml::array{level->rate};
  } else {
    matrix["connections"] = toml::array{level->connections};
  }
  matrix["rounds"] = rounds;
  matrix.erase("order");  // rotate: each build takes its turn at going first
  matrix.erase("seed");
  if (root.count("load") == 0) root["load"] = toml::table{};
  root["load"].as_table()["tool"] = toml::array{level->tool};
  if (root.count("stats") != 0 && root["stats"].is_table()) {
    root["stats"].as_table().erase("max_duration");
  }

  std::ostringstream text;
  text << "# A look of a bisection of target " << target << " on " << cell.Label()
       << " (docs/methodology.md, \"Bisection\"): " << names.good << " is the good end, "
       << names.bad << " the bad end, " << names.candidate << " the commit measured.\n"
       << toml::format(out);
  auto check = ParseCampaignText(text.str(), name + ".toml", campaign_dir);
  if (!check.ok())
    return BisectUnplannable("the bisection's campaign: " + check.status().message());
  return text.str();
}

std::vector<BisectRound> BisectRoundsOf(const std::vector<Measurement>& windows,
                                        const std::string& target, const BisectCell& cell,
                                        Metric figure) {
  const BisectTargetNames names = BisectTargetsOf(target);
  std::map<int, BisectRound> by_round;
  std::map<int, int> seen;
  for (const Measurement& m : NewestAttempts(windows)) {
    if (!m.valid || m.noise || m.scenario != cell.scenario || m.load_level != cell.load_level) {
      continue;
    }
    BisectRound& r = by_round[m.round];
    const double v = MetricValue(m, figure);
    if (m.target == names.candidate) {
      r.candidate = v;
    } else if (m.target == names.good) {
      r.good = v;
    } else if (m.target == names.bad) {
      r.bad = v;
    } else {
      continue;
    }
    ++seen[m.round];
  }
  std::vector<BisectRound> rounds;
  for (const auto& [round, r] : by_round) {
    if (seen[round] == 3) rounds.push_back(r);
  }
  return rounds;
}

Result<std::vector<CellProfileDiff>> CulpritProfileDiff(Store& store,
                                                        const BisectionRecord& record) {
  const BisectionRow& b = record.bisection;
  if (b.culprit_campaign.empty()) {
    return Status::NotFound("bisection " + std::to_string(b.id) +
                            " measured no culprit against its parent");
  }
  auto profiles = LoadCampaignProfiles(store, b.culprit_campaign);
  if (!profiles.ok()) return profiles.status();
  const BisectTargetNames names = BisectTargetsOf(b.target);
  ProfileSelection cell;
  BENCHLAB_RETURN_IF_ERROR(ParseCell(b.cell, cell));
  return DiffTargets(*profiles, names.good, names.candidate, cell);
}

std::string CulpritProfileText(Store& store, const BisectionRecord& record, bool in_report,
                               bool markdown) {
  if (record.bisection.culprit_campaign.empty()) return "";
  auto cells = CulpritProfileDiff(store, record);
  const std::string head = "where the CPU went, parent against culprit";
  if (!in_report) {
    const std::string named = head + " (campaign " + record.bisection.culprit_campaign + ")";
    if (!cells.ok()) return named + ": no profile diff: " + cells.status().message() + "\n";
    return named + ": " + ProfileHeadline(cells->front()) + "\n" +
           FormatProfileDiffText(*cells, 10);
  }
  if (!cells.ok()) return "";
  const std::string line = head + ": " + ProfileHeadline(cells->front());
  return markdown ? "\n" + line + "\n\n" + FormatProfileDiffMarkdown(*cells, 10) + "\n"
                  : "  " + line + "\n" + FormatProfileDiffText(*cells, 10);
}

void AddCulpritProfileJson(Store& store, const BisectionRecord& record, nlohmann::json& out) {
  if (record.bisection.culprit_campaign.empty()) return;
  auto cells = CulpritProfileDiff(store, record);
  nlohmann::json profile = {{"campaign", record.bisection.culprit_campaign}};
  if (cells.ok()) {
    profile["headline"] = ProfileHeadline(cells->front());
    profile["cells"] = ProfileDiffJson(*cells);
  } else {
    profile["error"] = cells.status().message();
  }
  out["culprit_profile"] = profile;
}

}  // namespace benchlab
