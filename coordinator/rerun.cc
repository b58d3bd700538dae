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

}  // namespace benchlab
