#include "coordinator/rerun.h"

#include <algorithm>
#include <map>
#include <utility>

namespace benchlab {

std::vector<WindowRow> NewestAttempts(const std::vector<WindowRow>& attempts) {
  std::map<std::pair<int64_t, WindowKey>, const WindowRow*> newest;
  for (const WindowRow& w : attempts) {
    auto [it, fresh] = newest.try_emplace({w.campaign_id, w.Key()}, &w);
    if (!fresh && w.attempt > it->second->attempt) it->second = &w;
  }
  std::vector<WindowRow> out;
  out.reserve(newest.size());
  for (const auto& entry : newest) out.push_back(*entry.second);
  std::sort(out.begin(), out.end(),
            [](const WindowRow& a, const WindowRow& b) { return a.id < b.id; });
  return out;
}

std::vector<int64_t> SelectForRerun(const std::vector<WindowRow>& attempts, bool invalid,
                                    bool failed) {
  std::vector<int64_t> ids;
  for (const WindowRow& w : NewestAttempts(attempts)) {
    if ((invalid && w.verdict == "invalid") || (failed && w.verdict == "failed")) {
      ids.push_back(w.id);
    }
  }
  return ids;
}

Result<RerunRequested> RequestRerun(Store& store, const RerunSelection& selection) {
  RerunRequested out;
  out.window_ids = selection.window_ids;
  if (selection.invalid || selection.failed) {
    WindowFilter filter;
    if (!selection.campaign.empty()) filter.campaign = selection.campaign;
    auto windows = store.ListWindows(filter);
    if (!windows.ok()) return windows.status();
    for (int64_t id : SelectForRerun(*windows, selection.invalid, selection.failed)) {
      if (std::find(out.window_ids.begin(), out.window_ids.end(), id) == out.window_ids.end()) {
        out.window_ids.push_back(id);
      }
    }
  }
  if (out.window_ids.empty()) return Status::NotFound("no window matches: nothing to re-run");
  auto campaigns = store.RequestReruns(out.window_ids);
  if (!campaigns.ok()) return campaigns.status();
  out.campaigns = std::move(*campaigns);
  return out;
}

}  // namespace benchlab
