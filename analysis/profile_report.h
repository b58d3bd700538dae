// A campaign's stored CPU profiles read for people (docs/profiles.md): the valid windows'
// profiles selected by target, cell or window and merged, with CPU µs per request per function;
// and the difference between two targets of a cell over their paired rounds. `benchlab profile`
// prints these; the report and `benchlab regressions` use the same difference.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/profile.h"
#include "common/folded_profile.h"
#include "common/status.h"
#include "coordinator/store.h"

namespace benchlab {

// One stored window that has a profile, with what turns its samples into time.
struct ProfiledWindow {
  WindowRow row;
  int frequency_hz = 0;
  ProfiledRound round;  // cpu_s: the target's CPU and its side services' (the profile samples both)
};

// A window whose profile could not be taken, and why (shown, never dropped silently).
struct UnprofiledWindow {
  WindowRow row;
  std::string error;
};

struct CampaignProfiles {
  CampaignRow campaign;
  std::vector<ProfiledWindow> windows;       // valid windows with a profile, in id order
  std::vector<UnprofiledWindow> unprofiled;  // valid windows whose profile has an error
};

// Reads every valid window's profile of the campaign named `campaign`. NotFound for an unknown
// campaign; FailedPrecondition when it has no profiled window (profiles were off: `[profile]
// enabled = true` or `--profile`). A stored profile that does not decompress is an error naming
// the window: the store holds only what the coordinator parsed.
Result<CampaignProfiles> LoadCampaignProfiles(Store& store, const std::string& campaign);

// Which windows to merge. Unset fields select all.
struct ProfileSelection {
  std::optional<std::string> target;
  std::optional<std::string> scenario;    // with load_level: one cell
  std::optional<std::string> load_level;  // "c64", "r5000"
  std::optional<int64_t> window_id;
};

// Parses "SCENARIO/LEVEL" ("json/c64"); InvalidArgument naming the expected form.
Status ParseCell(const std::string& text, ProfileSelection& selection);

// The selected windows' profiles added together, with the CPU and requests of the same windows.
struct MergedProfile {
  FoldedProfile profile;
  double cpu_s = 0;
  double requests = 0;
  int windows = 0;
  int frequency_hz = 0;              // the highest of the windows' (one campaign: all alike)
  std::vector<std::string> targets;  // the targets merged, in first-seen order
};

// InvalidArgument when nothing matches (naming what exists) or, without a target or window, when
// the selection holds several targets: their code differs, so adding them means nothing.
Result<MergedProfile> MergeSelected(const CampaignProfiles& profiles,
                                    const ProfileSelection& selection);

// The functions with the most CPU: per function self and total samples, their shares and µs per
// request, the `top` largest by self time.
std::string FormatProfileText(const MergedProfile& merged, size_t top);
nlohmann::json ProfileJson(const MergedProfile& merged);

// The difference between `base` and `next` (two targets) in one cell, over the rounds both have
// a profiled valid window in, paired by round as the lab's ratios are.
struct CellProfileDiff {
  std::string scenario;
  std::string load_level;
  std::string base;
  std::string next;
  ProfileDiff diff;
  std::string pair;  // a fleet campaign's pair (its server agent); else ""
};

// Every cell the two targets were both profiled in (or only `selection`'s cell), in plan order.
// A cell without a paired round is left out; InvalidArgument when none is left.
Result<std::vector<CellProfileDiff>> DiffTargets(const CampaignProfiles& profiles,
                                                 const std::string& base, const std::string& next,
                                                 const ProfileSelection& selection,
                                                 double level = 0.95);

// One sentence: "CPU per request +6.10 µs (+12.3%) [+4.00, +8.20]; +0.90 µs of it in
// parse_headers, +0.50 µs in memcpy" (the functions, at most three, that moved with the whole).
std::string ProfileHeadline(const CellProfileDiff& cell);

// The `top` functions whose µs per request changed most, then those sampled on one side only.
std::string FormatProfileDiffText(const std::vector<CellProfileDiff>& cells, size_t top);
std::string FormatProfileDiffMarkdown(const std::vector<CellProfileDiff>& cells, size_t top);
nlohmann::json ProfileDiffJson(const std::vector<CellProfileDiff>& cells);

}  // namespace benchlab
