// Confirmation by re-measurement on the embedded lab (docs/history.md, "Confirmation by
// re-measurement"): after a campaign of a series, each suspected change that no re-measurement
// has judged yet is measured again, the old build against the newest one on one cell, by a
// campaign of its own run on a fresh embedded lab; the outcome is stored in the confirmations
// table, where `benchlab regressions` and the dashboard read it.
#pragma once

#include <string>
#include <vector>

#include "analysis/stats.h"
#include "cli/progress_mode.h"
#include "coordinator/server/confirmation.h"

namespace benchlab {

struct RemeasureJob {
  const char* command = "run";  // for messages
  std::string db;
  std::string series;
  RemeasureSettings settings;
  std::string campaign_dir;  // fills {campaign_dir} in the stored files' commands
  bool keep_work_dir = false;
  ProgressMode progress = ProgressMode::kAuto;
};

// Re-measures what needs it and prints one line per change judged. Returns 0 when every change
// that needed it was measured (whatever it showed) or none needed it, 130 when interrupted, 1 when
// a lab failed or the store could not be read or written (the change is then recorded as "not
// measured", with why, unless the store itself failed).
int RemeasureSuspectedChanges(const RemeasureJob& job);

}  // namespace benchlab
