// Tune and Reset: `benchlab host tune` applies a quieter profile to the CPUs a benchmark runs on
// and `benchlab host reset` puts back what was there (docs/host.md). Tune saves every value it
// will change to a state file (JSON, mode 0600, written to a temporary file and renamed) before
// it writes anything, and refuses when a state file exists; Reset writes each saved value back,
// reads it back to compare, and removes the state file only when every value is restored. Only
// /proc and /sys are written, so nothing outlasts a reboot; nothing that sampling profilers need
// (perf_event_max_sample_rate and the like) is touched. All machine files go through SysEnv;
// the state file is at env.RealPath(state_path). Not thread-safe with itself: one tune or reset
// at a time per state file.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "common/sysenv.h"

namespace benchlab {

inline constexpr const char* kDefaultHostStatePath = "/var/lib/benchlab/host-tune.json";

// One value Tune changes: the file, what it held before (in the form that is written back: the
// selected word of a choice file such as THP's "always [madvise] never"), and what Tune writes.
struct TuneChange {
  std::string path;
  std::string old_value;
  std::string new_value;
};

struct TuneReport {
  std::vector<TuneChange> applied;  // written and read back as new_value
  // "path: why" for each change that could not be made (an IRQ the kernel will not move); the
  // machine keeps its old value there.
  std::vector<std::string> failed;
  // "path: why" for what the profile leaves alone here (an IRQ whose only CPUs are the tuned
  // ones, a governor the kernel does not offer).
  std::vector<std::string> skipped;
};

// The writes the profile would make on `cpus`, with the values they replace; files that already
// hold the profile's value are left out. Reads only.
std::vector<TuneChange> PlanTune(SysEnv& env, const std::vector<int>& cpus,
                                 std::vector<std::string>* skipped);

// Applies the profile to `cpus` (non-empty): FailedPrecondition when `state_path` exists,
// IoError when the state file cannot be written (then nothing was changed).
Result<TuneReport> Tune(SysEnv& env, const std::vector<int>& cpus, const std::string& state_path);

struct ResetReport {
  size_t restored = 0;
  size_t total = 0;
  std::vector<std::string> failures;  // "path: why", one per value not restored
  bool state_removed = false;         // only when every value was restored
};

// Writes back the values saved in `state_path`. NotFound when there is no state file,
// InvalidArgument when it does not parse.
Result<ResetReport> Reset(SysEnv& env, const std::string& state_path);

}  // namespace benchlab
