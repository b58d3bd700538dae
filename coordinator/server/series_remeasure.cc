#include "coordinator/server/series_remeasure.h"

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/report_format.h"
#include "common/clock.h"
#include "common/log.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/server/scheduler.h"
#include "coordinator/server/series_store.h"
#include "spdlog/spdlog.h"

namespace benchlab {

SeriesRemeasure::SeriesRemeasure(Store& store, AgentRegistry& agents, Scheduler& scheduler,
                                 RemeasureSettings settings, bool automatic)
    : store_(store),
      agents_(agents),
      scheduler_(scheduler),
      settings_(std::move(settings)),
      automatic_(automatic) {}

void SeriesRemeasure::CampaignEnded(int64_t id) {
  std::lock_guard lock(mu_);
  auto row = store_.FindCampaignById(id);
  if (!row.ok() || !*row) {
    spdlog::error("re-measurement: reading campaign {}: {}", id,
                  row.ok() ? "not found" : row.status().ToString());
    return;
  }
  Judge(**row);
  // Errors were logged where they arose.
  if (automatic_ && (*row)->Is(CampaignState::kDone)) (void)QueueRemeasurements(**row, settings_);
}

Result<std::vector<RemeasureNote>> SeriesRemeasure::Look(const std::string& series,
                                                         int max_rounds) {
  std::lock_guard lock(mu_);
  auto rows = store_.ListSeries(series);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status::NotFound("no series \"" + series + "\"");
  const CampaignRow& newest = rows->back();
  if (!newest.Is(CampaignState::kDone)) {
    return Status::FailedPrecondition(
        "the newest campaign of series " + series + ", " + newest.name + ", is " + newest.state +
        (newest.Is(CampaignState::kQueued) || newest.Is(CampaignState::kRunning)
             ? ": its changes are looked at once it ends"
             : ": only a campaign that ended done is compared with the ones before it"));
  }
  RemeasureSettings settings = settings_;
  if (max_rounds > 0) settings.max_rounds = max_rounds;
  return QueueRemeasurements(newest, settings);
}

void SeriesRemeasure::Judge(const CampaignRow& remeasurement) {
  auto rows = store_.ListConfirmationsBy(remeasurement.name);
  if (!rows.ok()) {
    spdlog::error("re-measurement {}: {}", remeasurement.name, rows.status().ToString());
    return;
  }
  std::vector<ConfirmationRow> measuring;
  for (const ConfirmationRow& r : *rows) {
    if (r.status == "measuring") measuring.push_back(r);
  }
  if (measuring.empty()) return;
  auto plan = PlanOfCampaign(remeasurement);
  auto input = LoadReportInput(store_, remeasurement.name);
  std::vector<Measurement> windows;
  if (input.ok()) {
    for (const WindowRow& w : input->windows) {
      windows.push_back(ToMeasurement(w, ServicesCpuOf(*input, w.id)));
    }
  }
  std::string unfinished;
  if (!remeasurement.Is(CampaignState::kDone)) {
    unfinished = "; the re-measurement campaign " + remeasurement.state +
                 (remeasurement.error.empty() ? "" : ": " + remeasurement.error);
  }
  // The changes as the series shows them now, to judge each row against its own change.
  std::map<std::string, std::unique_ptr<ChangesToRemeasure>> series_of;
  for (const ConfirmationRow& r : measuring) {
    auto record = [&](ConfirmationRow out) {
      out.old_campaign_id = r.old_campaign_id;
      out.new_campaign_id = r.new_campaign_id;
      if (auto st = store_.RecordConfirmation(out); !st.ok()) {
        spdlog::error("re-measurement {}: recording: {}", remeasurement.name,
                      st.status().ToString());
      }
    };
    ConfirmationRow failed = r;
    failed.status = "not measured";
    if (!plan.ok() || !input.ok()) {
      failed.detail = "campaign " + remeasurement.name + ": " +
                      (!plan.ok() ? plan.status() : input.status()).message();
      record(failed);
      continue;
    }
    // Every change of the series, judged or not: the one this row was measured for among them.
    if (series_of.count(r.series) == 0) {
      auto work =
          FindChangesToRemeasure(store_, r.series, settings_.figures, [&](const SeriesChange& c) {
            return !(c.remeasured && c.status == "measuring" &&
                     c.remeasured->campaign == remeasurement.name);
          });
      if (!work.ok()) {
        spdlog::error("re-measurement {}: series {}: {}", remeasurement.name, r.series,
                      work.status().ToString());
        return;
      }
      series_of[r.series] = std::move(work).value();
    }
    const SeriesChange* change = nullptr;
    for (const RemeasureGroup& g : series_of[r.series]->groups) {
      for (const SeriesChange& c : g.changes) {
        if (c.key.pair == r.pair && c.key.scenario == r.scenario &&
            c.key.load_level == r.load_level && c.key.target == r.target &&
            MetricName(c.metric) == r.figure && c.after->id == r.after_campaign_id) {
          change = &c;
        }
      }
    }
    if (change == nullptr) {
      failed.detail = "series " + r.series + " no longer shows this change as its line's last";
      record(failed);
      continue;
    }
    ConfirmationRow judged = JudgeConfirmation(r.series, *change, *plan, windows, settings_);
    judged.detail += unfinished;
    record(judged);
    spdlog::info("series {}: {}", r.series, DescribeConfirmation(*change, judged));
  }
}

namespace {

// The label of a group's line in its note: SeriesKeyLabel, then the group's figures.
std::string RemeasureLineLabel(const RemeasureGroup& group) {
  std::string line = SeriesKeyLabel(group.changes.front().key);
  for (const SeriesChange& c : group.changes) {
    line += (&c == &group.changes.front() ? " " : ", ") + std::string(MetricName(c.metric));
  }
  return line;
}

// The entry of the server agent's catalogue (`versions`) that holds the group's old build: the
// one whose version the old campaign's windows recorded, beside the newest build's.
Result<std::string> OldBuildEntryFor(const ChangesToRemeasure& work, const RemeasureGroup& group,
                                     const CampaignRow& newest, const std::string& server_agent,
                                     const std::map<std::string, std::string>& versions) {
  const SeriesKey& key = group.changes.front().key;
  auto old_version =
      RecordedVersion(group.old_input->windows, key.target, key.pair, group.old_build->name);
  auto new_version =
      RecordedVersion(work.newest_input().windows, key.target, key.pair, newest.name);
  return !old_version.ok() ? Result<std::string>(old_version.status())
         : !new_version.ok()
             ? Result<std::string>(new_version.status())
             : FindOldBuildEntry(versions, server_agent, key.target, *old_version, *new_version);
}

}  // namespace

Result<std::vector<RemeasureNote>> SeriesRemeasure::QueueRemeasurements(
    const CampaignRow& newest, const RemeasureSettings& settings) {
  std::vector<RemeasureNote> notes;
  // Re-measurements that ended without running are judged before the series is searched again.
  JudgeUnjudgedRemeasurements(newest.series);
  auto work = FindChangesToQueue(newest, settings);
  if (!work.ok()) return work.status();
  // Only after the newest campaign: an older one ending (a re-run) changes no newest build.
  if ((*work)->groups.empty() || (*work)->newest().id != newest.id) return notes;
  CatalogueVersions versions_of;  // agent -> catalogue
  for (const v1::AgentInfo& a : agents_.List()) {
    versions_of[a.name()] = {a.versions().begin(), a.versions().end()};
  }
  for (const RemeasureGroup& group : (*work)->groups) {
    notes.push_back(QueueLine(newest, **work, group, versions_of, settings));
  }
  return notes;
}

void SeriesRemeasure::JudgeUnjudgedRemeasurements(const std::string& series) {
  auto recorded = store_.ListConfirmations(series);
  if (!recorded.ok()) return;
  std::set<std::string> stale;
  for (const ConfirmationRow& r : *recorded) {
    if (r.status == "measuring" && !r.campaign.empty()) stale.insert(r.campaign);
  }
  for (const std::string& name : stale) {
    auto row = store_.FindCampaign(name);
    if (row.ok() && *row &&
        ((*row)->Is(CampaignState::kCancelled) || (*row)->Is(CampaignState::kFailed))) {
      Judge(**row);
    }
  }
}

Result<std::unique_ptr<ChangesToRemeasure>> SeriesRemeasure::FindChangesToQueue(
    const CampaignRow& newest, const RemeasureSettings& settings) {
  // A change whose re-measurement is queued or ran is judged; one whose rows say "measuring" but
  // whose campaign the store does not hold (the coordinator stopped before submitting it) is not,
  // nor one recorded "not measured": what stood in the way (an old build the catalogue did not
  // keep, an agent's version) may have been put right since.
  auto judged = [&](const SeriesChange& c) {
    if (!c.remeasured || c.status == "not measured") return false;
    if (c.status != "measuring") return true;
    auto found = store_.FindCampaign(c.remeasured->campaign);
    return !found.ok() || found->has_value();
  };
  auto work = FindChangesToRemeasure(store_, newest.series, settings.figures, judged);
  if (!work.ok()) {
    spdlog::error("series {}: finding changes to re-measure: {}", newest.series,
                  work.status().ToString());
  }
  return work;
}

RemeasureNote SeriesRemeasure::QueueLine(const CampaignRow& newest, const ChangesToRemeasure& work,
                                         const RemeasureGroup& group,
                                         const CatalogueVersions& versions_of,
                                         const RemeasureSettings& settings) {
  const SeriesChange& first = group.changes.front();
  const SeriesKey& key = first.key;
  const std::string line = RemeasureLineLabel(group);
  auto not_measured = [&](const std::string& why) {
    return RecordLine(newest, group, line, "", "not measured", why);
  };
  // Lines of targets given by command are the embedded lab's (cli/remeasure.h).
  if (!TargetFromCatalogue(newest, key.target)) {
    return {line, "elsewhere", "",
            "target " + key.target + " is a command, not a catalogue entry: `benchlab remeasure " +
                newest.series + " --db FILE` re-measures it on an embedded lab"};
  }
  auto pair = PairAgents(newest.placement, key.pair);
  if (!pair) {
    return not_measured("campaign " + newest.name +
                        "'s placement does not name the pair of the line");
  }
  auto agent = versions_of.find(pair->first);
  if (agent == versions_of.end()) {
    // Not for good: the next campaign of the series looks again.
    ScopedLogAgent about(pair->first);
    spdlog::warn("series {}: {} not re-measured now: agent {} is not registered", newest.series,
                 SeriesKeyLabel(key), pair->first);
    return {line, "waiting", "",
            "agent " + pair->first + " is not registered; the series' next campaign looks again"};
  }
  Result<std::string> entry = OldBuildEntryFor(work, group, newest, pair->first, agent->second);
  if (!entry.ok()) return not_measured(entry.status().message());
  auto name = FreshRemeasureName(store_, newest.name);
  if (!name.ok()) return not_measured(name.status().message());
  std::vector<Metric> figures;
  for (const SeriesChange& c : group.changes) figures.push_back(c.metric);
  const CatalogueBuilds builds{pair->first, pair->second, *entry};
  auto plan =
      PlanConfirmation(first, *group.old_build, newest, figures, *name, "", settings, &builds);
  if (!plan.ok()) return not_measured(plan.status().message());
  return SubmitRemeasurement(newest, group, line, *plan, builds);
}

RemeasureNote SeriesRemeasure::SubmitRemeasurement(const CampaignRow& newest,
                                                   const RemeasureGroup& group,
                                                   const std::string& line,
                                                   const ConfirmationPlan& plan,
                                                   const CatalogueBuilds& builds) {
  // The rows first: a coordinator stopped between the two finds them "measuring" a campaign
  // it does not hold, and submits it again after the series' next campaign.
  RemeasureNote note = RecordLine(newest, group, line, plan.name, "measuring", "");
  auto submitted =
      scheduler_.Submit(plan.text, plan.name + ".toml", "", newest.gates_mode, newest.profile);
  AuditRemeasureSubmission(newest, plan.name, submitted.status());
  if (!submitted.ok()) {
    return RecordLine(newest, group, line, "", "not measured",
                      "submitting " + plan.name + ": " + submitted.status().message());
  }
  spdlog::info(
      "series {}: re-measuring {}: {} (the build of {}) against {} (that of {}) on {} and {}, "
      "campaign {}",
      newest.series, SeriesKeyLabel(group.changes.front().key), plan.old_target,
      group.old_build->name, plan.new_target, newest.name, builds.server_agent, builds.load_agent,
      plan.name);
  return note;
}

void SeriesRemeasure::AuditRemeasureSubmission(const CampaignRow& newest,
                                               const std::string& campaign,
                                               const Status& submitted) {
  // The coordinator's own submission, in the audit trail beside the operators' (its identity
  // "coordinator", no peer: docs/security.md, "Audit").
  AuditRow audit;
  audit.at = FormatIsoTime(store_.clock().WallNow());
  audit.identity = "coordinator";
  audit.role = "coordinator";
  audit.call = "SubmitCampaign";
  audit.subject = "campaign " + campaign + ": re-measurement of series " + newest.series;
  audit.outcome = submitted.ok() ? "ok" : "failed";
  if (!submitted.ok()) audit.reason = submitted.message();
  if (Status st = store_.AppendAudit(audit); !st.ok()) {
    spdlog::error("series {}: auditing {}: {}", newest.series, campaign, st.ToString());
  }
}

RemeasureNote SeriesRemeasure::RecordLine(const CampaignRow& newest, const RemeasureGroup& group,
                                          const std::string& line, const std::string& campaign,
                                          const std::string& status, const std::string& why) {
  for (const SeriesChange& c : group.changes) {
    // Still not measurable, for the reason already recorded: nothing new to say.
    if (status == "not measured" && c.status == status && c.remeasured &&
        c.remeasured->detail == why) {
      continue;
    }
    ConfirmationRow row = NotMeasured(c, newest.series, why);
    row.campaign = campaign;
    row.status = status;
    row.new_campaign_id = newest.id;
    if (auto id = store_.RecordConfirmation(row); !id.ok()) {
      spdlog::error("series {}: recording a re-measurement: {}", newest.series,
                    id.status().ToString());
    } else if (status == "not measured") {
      spdlog::info("series {}: {}", newest.series, DescribeConfirmation(c, row));
    }
  }
  return {line, status, campaign, why};
}

}  // namespace benchlab
