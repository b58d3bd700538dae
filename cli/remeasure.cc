#include "cli/remeasure.h"

#include <cmath>
#include <cstdio>
#include <memory>

#include "analysis/report_detail.h"
#include "analysis/report_format.h"
#include "analysis/series.h"
#include "cli/command_error.h"
#include "cli/embedded_lab.h"
#include "coordinator/campaign.h"
#include "coordinator/server/series_store.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

void PrintOutcome(const SeriesChange& change, const ConfirmationRow& row) {
  std::printf("%s\n", DescribeConfirmation(change, row).c_str());
}

}  // namespace

int RemeasureSuspectedChanges(const RemeasureJob& job) {
  const char* command = job.command;
  std::unique_ptr<Store> store;
  auto open = [&]() -> bool {
    auto opened = Store::Open(job.db);
    if (!opened.ok()) return false;
    store = std::move(opened).value();
    return true;
  };
  if (!open()) return CommandError(command, kExitFailure, "re-measurement: cannot open " + job.db);
  // A re-measurement left "measuring" was cut off (an interrupted run): it is measured again.
  auto work = FindChangesToRemeasure(
      *store, job.series, job.settings.figures,
      [](const SeriesChange& c) { return c.remeasured && c.status != "measuring"; });
  if (!work.ok()) return CommandError(command, kExitFailure, work.status().message());
  if ((*work)->groups.empty() || !(*work)->newest().Is(CampaignState::kDone)) return kExitOk;
  const CampaignRow newest = (*work)->newest();

  int result = 0;
  for (const RemeasureGroup& group : (*work)->groups) {
    const std::vector<SeriesChange>& changes = group.changes;
    const SeriesChange& first = changes.front();
    const CampaignRow* old_row = group.old_build;
    if (TargetFromCatalogue(newest, first.key.target)) {
      // Its builds are entries of an agent's catalogue, which no embedded lab holds.
      std::printf(
          "left to the coordinator that ran it: %s (%s names %s from a catalogue; `benchlab "
          "remeasure %s --coordinator HOST:PORT` asks it)\n",
          SeriesKeyLabel(first.key).c_str(), newest.name.c_str(), first.key.target.c_str(),
          newest.series.c_str());
      continue;
    }
    std::vector<Metric> figures;
    for (const SeriesChange& c : changes) figures.push_back(c.metric);
    auto record = [&](ConfirmationRow row) -> bool {
      row.new_campaign_id = newest.id;
      auto id = store->RecordConfirmation(row);
      if (!id.ok()) {
        CommandError(command, kExitFailure, "re-measurement: " + id.status().message());
        return false;
      }
      return true;
    };
    auto name = FreshRemeasureName(*store, newest.name);
    if (!name.ok()) return CommandError(command, kExitFailure, name.status().message());
    auto plan =
        PlanConfirmation(first, *old_row, newest, figures, *name, job.campaign_dir, job.settings);
    if (!plan.ok()) {
      for (const SeriesChange& c : changes) {
        ConfirmationRow row = NotMeasured(c, job.series, plan.status().message());
        if (!record(row)) return kExitFailure;
        PrintOutcome(c, row);
      }
      continue;
    }
    for (const SeriesChange& c : changes) {
      ConfirmationRow row = NotMeasured(c, job.series, "");
      row.campaign = plan->name;
      row.status = "measuring";
      if (!record(row)) return kExitFailure;
    }
    auto lab_campaign = ParseCampaignText(plan->text, plan->name + ".toml", job.campaign_dir);
    if (!lab_campaign.ok())
      return CommandError(command, kExitFailure, lab_campaign.status().message());
    std::printf("re-measuring %s: the build of %s (%s) against that of %s (%s), campaign %s\n",
                SeriesKeyLabel(first.key).c_str(), old_row->name.c_str(), plan->old_target.c_str(),
                newest.name.c_str(), plan->new_target.c_str(), plan->name.c_str());
    std::fflush(stdout);
    LabJob lab;
    lab.campaign = std::move(lab_campaign).value();
    lab.submit_text = plan->text;
    lab.db = job.db;
    lab.keep_work_dir = job.keep_work_dir;
    lab.verb = command;
    lab.progress = job.progress;
    // Profiled as the newest campaign was (`--profile`), so the change can be read by function.
    lab.profile = newest.profile;
    store.reset();  // the lab's coordinator writes the database meanwhile
    const int lab_status = RunOnEmbeddedLab(lab);
    if (!open())
      return CommandError(command, kExitFailure, "re-measurement: cannot open " + job.db);
    if (lab_status == kExitInterrupted)
      return kExitInterrupted;  // its rows say "measuring": the next run measures again
    auto input = LoadReportInput(*store, plan->name);
    if (!input.ok()) return CommandError(command, kExitFailure, input.status().message());
    std::vector<Measurement> windows;
    for (const WindowRow& w : input->windows) {
      windows.push_back(ToMeasurement(w, ServicesCpuOf(*input, w.id)));
    }
    for (const SeriesChange& c : changes) {
      ConfirmationRow row = JudgeConfirmation(job.series, c, *plan, windows, job.settings);
      if (lab_status != 0) row.detail += "; the re-measurement campaign did not finish";
      if (!record(row)) return kExitFailure;
      PrintOutcome(c, row);
    }
    if (lab_status != 0) result = 1;
  }
  return result;
}

}  // namespace benchlab
