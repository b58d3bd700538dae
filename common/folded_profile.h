// A CPU profile as folded stacks (docs/profiles.md): each distinct call stack, root first, with
// the samples that ended in it. Folding `perf script` output happens on the agent, so no raw
// address leaves it; the coordinator parses what agents send back under the same limits. Pure
// functions without I/O; any thread may call them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace benchlab {

// Bounds on one folded profile (docs/security.md, "Limits"): whatever an agent sends, a
// profile is at most this many distinct stacks, each of at most kMaxProfileDepth frames of at
// most kMaxFrameBytes. Beyond them a stack is cut at its leaf end ("[truncated]") or the rarest
// stacks are merged into "[other stacks]", and the profile says so (FoldedProfile::truncated).
inline constexpr size_t kMaxProfileStacks = 20000;
inline constexpr size_t kMaxProfileDepth = 256;
inline constexpr size_t kMaxFrameBytes = 512;

// Sampling frequencies ([profile] frequency, StartTargetRequest.profile_hz): the default, 99 Hz,
// is off the beat of the kernel's 100 and 250 Hz ticks and of periodic work in the target; the
// highest a coordinator may ask for bounds the sampler's own cost (docs/profiles.md).
inline constexpr int kDefaultProfileHz = 99;
inline constexpr int kMaxProfileHz = 1000;

// One window's profile as it travels and is stored: zlib-compressed folded text, at most this
// many bytes (well under a spooled result's 1 MiB, kMaxOfferedPayloadBytes), and at most
// kMaxProfileTextBytes once uncompressed.
inline constexpr size_t kMaxProfileBytes = 512 * 1024;
inline constexpr size_t kMaxProfileTextBytes = 32 * 1024 * 1024;

struct FoldedProfile {
  // "root;caller;...;leaf" -> samples. Frames hold no ';' nor control byte; a kernel frame ends
  // in "_[k]", a JIT frame (from a perf map) in "_[j]", and a frame perf could not name is
  // "[unknown]" or "[DSO]" (the file's base name), never an address.
  std::map<std::string, uint64_t> stacks;
  bool truncated = false;  // a limit above cut stacks or merged rare ones

  uint64_t samples() const;
};

// Folds the output of `perf script -F comm,period,ip,sym,dso` (a sample's header line "COMM
// PERIOD", then one "ADDRESS SYMBOL (DSO)" line per frame, leaf first, then a blank line) into
// stacks rooted at the process name. InvalidArgument naming the line for text of another shape.
Result<FoldedProfile> FoldPerfScript(std::string_view text);

// The collapsed text format of flame graph tools: one "STACK COUNT" line per stack, sorted.
std::string FormatFolded(const FoldedProfile& profile);
// Parses it back, holding it to the limits above; InvalidArgument naming the line otherwise.
Result<FoldedProfile> ParseFolded(std::string_view text);

// The folded text, zlib-compressed, in at most `max_bytes`: when it does not fit, the rarest
// stacks are merged into "[other stacks]" (and the profile marked truncated) until it does.
Result<std::string> CompressFolded(FoldedProfile profile, size_t max_bytes = kMaxProfileBytes);
// The profile back from CompressFolded's bytes, under the limits of ParseFolded and
// kMaxProfileTextBytes; InvalidArgument for bytes that are not such a profile.
Result<FoldedProfile> DecompressFolded(std::string_view bytes);

// Adds `more` into `into` (the limits hold after).
void MergeProfile(FoldedProfile& into, const FoldedProfile& more);

// A function's samples: self (stacks that end in it) and total (stacks that hold it anywhere,
// once per stack however deep it recurses).
struct FunctionSamples {
  uint64_t self = 0;
  uint64_t total = 0;
};
std::map<std::string, FunctionSamples> SamplesByFunction(const FoldedProfile& profile);

}  // namespace benchlab
