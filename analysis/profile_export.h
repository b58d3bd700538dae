// A folded CPU profile (common/folded_profile.h) in the files the usual profile viewers open
// (docs/profiles.md, "Export formats"): pprof's protocol buffer, speedscope's JSON, and
// d3-flame-graph's tree, also as the differential tree of two profiles. Pure functions without
// I/O; any thread may call them.
//
// Sizes: every output is linear in its input. Frames are stored once each (pprof's string table
// and functions, speedscope's shared frames), samples once per stack, and a tree has at most one
// node per frame of each stack. A stack deeper than the folded limits allow (a profile built by
// hand, not parsed) is cut the way ParseFolded and FoldPerfScript cut it: its first
// kMaxProfileDepth frames after the process, then "[truncated]".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/folded_profile.h"
#include "common/status.h"

namespace benchlab {

struct PprofOptions {
  // Nanoseconds of CPU one sample stands for: 1e9 / the sampling frequency in Hz (99 Hz:
  // 10101010). Must be positive.
  uint64_t period_ns = 0;
  // What the profile is of (a window, a cell); the profile's comment says it.
  std::string name;
};

// The profile as a gzip-compressed perftools.profiles.Profile (google/pprof's profile.proto,
// as `pprof` and `go tool pprof` read it). Sample types ("samples", "count") and ("cpu",
// "nanoseconds"), the second being samples × period_ns; period type ("cpu", "nanoseconds").
// One Function and one Location per distinct frame; a kernel frame ("..._[k]") keeps its name
// without the suffix and has the file name "[kernel]", a JIT frame ("..._[j]") likewise
// "[jit]", any other frame the file name "". Each sample's locations are leaf first. The
// process name at a stack's root is its outermost frame. A truncated profile says so in a
// comment. InvalidArgument for period_ns 0, or a stack whose samples × period_ns pprof's int64
// values cannot hold.
Result<std::string> ToPprof(const FoldedProfile& profile, const PprofOptions& options);

// The profile in speedscope's file format (https://www.speedscope.app/file-format-schema.json):
// the frames once each in shared.frames, named as in the folded text (kernel and JIT frames with
// their "_[k]" and "_[j]"), and one "sampled" profile called `name` with a sample per stack (its
// frame indices, root first) weighing samples × sample_weight_us, in "microseconds",
// startValue 0 and endValue the sum of the weights. A sample_weight_us that is not positive and
// finite makes the weights the sample counts and the unit "none".
std::string ToSpeedscope(const FoldedProfile& profile, const std::string& name,
                         double sample_weight_us);

// The profile as d3-flame-graph's tree: {"name": "all", "value": N, "children": [...]}, where a
// node's value is the samples of every stack that passes through it (its subtree's total, as
// d3-flame-graph expects by default) and the root's children are the process names. Children
// are sorted by name, so the same profile gives the same JSON.
nlohmann::json FlameTree(const FoldedProfile& profile);

// The differential tree of `next` against `base`, for d3-flame-graph's differential mode: the
// nodes of both profiles merged, sorted by name, each with
//   "value": the samples of `next` through it (0 where only `base` has it);
//   "base":  the samples of `base` through it;
//   "delta": value - base × (samples of next / samples of base).
// The base is scaled to the next profile's total before it is subtracted, so "delta" says how
// much of next's time a frame gained or lost as a share, counted in next's samples, whatever
// the two profiles' durations or frequencies: two profiles with the same shares give delta 0
// everywhere. A base without samples scales to 0 (delta = value); a next without samples
// scales everything to 0 (delta 0). A node only `base` has carries "vanished": true (so a
// viewer can show what went away) and value 0; its children are vanished too.
nlohmann::json DiffFlameTree(const FoldedProfile& base, const FoldedProfile& next);

}  // namespace benchlab
