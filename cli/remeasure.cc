#include "cli/remeasure.h"

#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <tuple>

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
  std::string figures;
  if (row.estimate && row.low && row.high) {
    RatioInterval interval;
    interval.estimate = *row.estimate;
    interval.low = *row.low;
    interval.high = *row.high;
    figures = ": new/old " + FormatChangeSize(interval) + " over " + std::to_string(row.rounds) +
              " round(s)";
  }
  std::printf("re-measured %s %s (%s, %s): %s%s (%s)\n", SeriesKeyLabel(change.key).c_str(),
              MetricName(change.metric), ChangeDirectionName(change.point.direction),
              change.after != nullptr ? ("from " + change.after->name).c_str() : "",
              row.status.c_str(), figures.c_str(), row.detail.c_str());
}

// "<newest>-remeasure-<k>" with the first k the store does not hold, at most 64 characters.
Result<std::string> FreshName(Store& store, const std::string& newest) {
  for (int k = 1; k < 1000; ++k) {
    const std::string suffix = "-remeasure-" + std::to_string(k);
    std::string name = newest.substr(0, 64 - suffix.size()) + suffix;
    auto found = store.FindCampaign(name);
    if (!found.ok()) return found.status();
    if (!*found) return name;
  }
  return Status::AlreadyExists("no free re-measurement name after " + newest);
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
  if (!open()) return CommandError(command, 1, "re-measurement: cannot open " + job.db);
  auto rows = store->ListSeries(job.series);
  if (!rows.ok()) return CommandError(command, 1, rows.status().message());
  if (rows->size() < 2 || !rows->back().Is(CampaignState::kDone)) return 0;
  const CampaignRow newest = rows->back();
  auto newest_campaign = ParseCampaignText(newest.spec_toml, newest.source, job.campaign_dir);
  if (!newest_campaign.ok()) return 0;  // nothing a series search could use
  std::vector<ReportInput> inputs;
  for (const CampaignRow& row : *rows) {
    auto input = LoadReportInput(*store, row.name);
    if (!input.ok()) return CommandError(command, 1, input.status().message());
    inputs.push_back(std::move(*input));
  }
  // The last change of every line and figure that no re-measurement has judged: grouped by line
  // and campaigns, so that one campaign re-measures every figure of a line at once.
  std::deque<Series> series;  // the changes point into these
  using GroupKey = std::tuple<SeriesKey, int64_t, int64_t>;
  std::map<GroupKey, std::vector<SeriesChange>> groups;
  for (Metric metric : job.figures) {
    series.push_back(BuildSeries(job.series, inputs, metric));
    auto changes = FindStoredSeriesChanges(*store, series.back(), {});
    if (!changes.ok()) return CommandError(command, 1, changes.status().message());
    for (size_t i : LastChangeOfEachLine(*changes)) {
      const SeriesChange& c = (*changes)[i];
      if (c.old_build == nullptr || (c.remeasured && c.status != "measuring")) continue;
      groups[{c.key, c.after->id, c.old_build->id}].push_back(c);
    }
  }

  int result = 0;
  for (auto& [group_key, changes] : groups) {
    const SeriesChange& first = changes.front();
    const CampaignRow* old_row = nullptr;
    for (const CampaignRow& row : *rows) {
      if (row.id == first.old_build->id) old_row = &row;
    }
    std::vector<Metric> figures;
    for (const SeriesChange& c : changes) figures.push_back(c.metric);
    auto record = [&](ConfirmationRow row) -> bool {
      row.new_campaign_id = newest.id;
      auto id = store->RecordConfirmation(row);
      if (!id.ok()) {
        CommandError(command, 1, "re-measurement: " + id.status().message());
        return false;
      }
      return true;
    };
    auto name = FreshName(*store, newest.name);
    if (!name.ok()) return CommandError(command, 1, name.status().message());
    auto plan =
        PlanConfirmation(first, *old_row, newest, figures, *name, job.campaign_dir, job.settings);
    if (!plan.ok()) {
      for (const SeriesChange& c : changes) {
        ConfirmationRow row = NotMeasured(c, job.series, plan.status().message());
        if (!record(row)) return 1;
        PrintOutcome(c, row);
      }
      continue;
    }
    for (const SeriesChange& c : changes) {
      ConfirmationRow row = NotMeasured(c, job.series, "");
      row.campaign = plan->name;
      row.status = "measuring";
      if (!record(row)) return 1;
    }
    auto lab_campaign = ParseCampaignText(plan->text, plan->name + ".toml", job.campaign_dir);
    if (!lab_campaign.ok()) return CommandError(command, 1, lab_campaign.status().message());
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
    store.reset();  // the lab's coordinator writes the database meanwhile
    const int lab_status = RunOnEmbeddedLab(lab);
    if (!open()) return CommandError(command, 1, "re-measurement: cannot open " + job.db);
    if (lab_status == 130) return 130;  // its rows say "measuring": the next run measures again
    auto input = LoadReportInput(*store, plan->name);
    if (!input.ok()) return CommandError(command, 1, input.status().message());
    std::vector<Measurement> windows;
    for (const WindowRow& w : input->windows) {
      windows.push_back(ToMeasurement(w, ServicesCpuOf(*input, w.id)));
    }
    for (const SeriesChange& c : changes) {
      ConfirmationRow row = JudgeConfirmation(job.series, c, *plan, windows, job.settings);
      if (lab_status != 0) row.detail += "; the re-measurement campaign did not finish";
      if (!record(row)) return 1;
      PrintOutcome(c, row);
    }
    if (lab_status != 0) result = 1;
  }
  return result;
}

}  // namespace benchlab
