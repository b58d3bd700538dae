// Choosing windows to measure again (`benchlab rerun --invalid | --failed`): pure functions over
// stored attempts, shared by the coordinator's RerunWindows call and `benchlab rerun --db`.
#pragma once

#include <cstdint>
#include <vector>

#include "coordinator/store.h"

namespace benchlab {

// Only each window's newest attempt counts: an invalid attempt already re-run valid is not
// chosen again. Returns the ids of the newest attempts whose verdict is invalid (when
// `invalid`) or failed (when `failed`), in id order.
std::vector<int64_t> SelectForRerun(const std::vector<WindowRow>& attempts, bool invalid,
                                    bool failed);

// The newest attempt of each window, in id order.
std::vector<WindowRow> NewestAttempts(const std::vector<WindowRow>& attempts);

}  // namespace benchlab
