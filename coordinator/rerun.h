// Choosing windows to measure again (`benchlab rerun --invalid | --failed`): pure functions over
// stored attempts, shared by the coordinator's RerunWindows call and `benchlab rerun --db`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/store.h"

namespace benchlab {

// Only each window's newest attempt counts: an invalid attempt already re-run valid is not
// chosen again. Returns the ids of the newest attempts whose verdict is invalid (when
// `invalid`) or failed (when `failed`), in id order.
std::vector<int64_t> SelectForRerun(const std::vector<WindowRow>& attempts, bool invalid,
                                    bool failed);

// What to measure again: the ids given, plus (with invalid / failed) the windows whose newest
// attempt has that verdict, in `campaign` when it is set, else in every campaign.
struct RerunSelection {
  std::vector<int64_t> window_ids;
  bool invalid = false;
  bool failed = false;
  std::string campaign;
};
struct RerunRequested {
  std::vector<int64_t> window_ids;     // the attempts whose windows will run again
  std::vector<std::string> campaigns;  // the campaigns they belong to
};
// Records the re-run requests (Store::RequestReruns); the one path behind the coordinator's
// RerunWindows call and its dashboard's POST /api/v1/rerun. NotFound when nothing matches or
// an id does not exist. The caller wakes the scheduler.
Result<RerunRequested> RequestRerun(Store& store, const RerunSelection& selection);

// The newest attempt of each window, in id order.
std::vector<WindowRow> NewestAttempts(const std::vector<WindowRow>& attempts);

}  // namespace benchlab
