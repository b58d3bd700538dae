#include "common/folded_profile.h"

#include <zlib.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace benchlab {

namespace {

constexpr std::string_view kTruncatedFrame = "[truncated]";
constexpr std::string_view kOtherStacks = "[other stacks]";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A frame as a flame graph shows it: no ';' (the separator), no control byte, bounded.
std::string CleanFrame(std::string_view name) {
  std::string out;
  out.reserve(std::min(name.size(), kMaxFrameBytes));
  for (char c : name) {
    if (out.size() >= kMaxFrameBytes) break;
    const auto u = static_cast<unsigned char>(c);
    out += c == ';' ? ':' : (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  return out.empty() ? "[unknown]" : out;
}

std::string BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// V8 marks a JIT function's name with the tier that compiled it ("JS:*parse" optimised,
// "JS:~parse" interpreted, "^" Sparkplug, "+" Maglev; "LazyCompile:*parse" before Node 20). One
// function keeps one name whatever its tier, so a diff of two profiles compares it with itself
// (docs/profiles.md, "Folded stacks").
std::string WithoutJitTier(std::string frame) {
  const size_t colon = frame.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= frame.size()) return frame;
  for (size_t i = 0; i < colon; ++i) {
    const char c = frame[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) return frame;
  }
  const char tier = frame[colon + 1];
  if (tier == '*' || tier == '~' || tier == '^' || tier == '+') frame.erase(colon + 1, 1);
  return frame;
}

// One frame line of `perf script`: "ADDRESS SYMBOL (DSO)", the symbol possibly "[unknown]".
std::string FrameOf(std::string_view line) {
  line = Trim(line);
  const size_t space = line.find(' ');
  std::string_view rest = space == std::string_view::npos ? "" : Trim(line.substr(space + 1));
  std::string_view dso;
  if (!rest.empty() && rest.back() == ')') {
    // The DSO is the last parenthesised group; a C++ symbol's own parentheses come before it.
    const size_t open = rest.rfind(" (");
    if (open != std::string_view::npos) {
      dso = rest.substr(open + 2, rest.size() - open - 3);
      rest = Trim(rest.substr(0, open));
    } else if (rest.front() == '(') {
      dso = rest.substr(1, rest.size() - 2);
      rest = "";
    }
  }
  const size_t offset = rest.rfind("+0x");  // with -F symoff
  if (offset != std::string_view::npos && offset > 0) rest = rest.substr(0, offset);
  const bool kernel = dso.rfind("[kernel", 0) == 0 || dso.rfind("[vdso", 0) == 0;
  const bool jit = dso.rfind("/tmp/perf-", 0) == 0;
  if (rest.empty() || rest == "[unknown]") {
    // No raw address leaves the agent: the object file names what perf could not. JIT code
    // that no perf map names is "[jit]", not its map's file, whose name changes with the pid.
    if (jit) return "[jit]";
    return dso.empty() || dso == "unknown" || dso == "[unknown]"
               ? "[unknown]"
               : CleanFrame("[" + BaseName(dso) + "]");
  }
  std::string frame = CleanFrame(rest);
  if (kernel) frame += "_[k]";
  if (jit) frame = WithoutJitTier(std::move(frame)) + "_[j]";
  return frame;
}

std::vector<std::string_view> SplitFrames(std::string_view stack) {
  std::vector<std::string_view> frames;
  size_t start = 0;
  while (true) {
    const size_t semi = stack.find(';', start);
    frames.push_back(
        stack.substr(start, semi == std::string_view::npos ? stack.npos : semi - start));
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  return frames;
}

// Keeps the `keep` most sampled stacks and merges the rest into "[other stacks]".
void KeepMostSampled(FoldedProfile& profile, size_t keep) {
  if (profile.stacks.size() <= keep) return;
  std::vector<std::pair<uint64_t, std::string>> by_count;
  for (auto& [stack, count] : profile.stacks) by_count.emplace_back(count, stack);
  std::sort(by_count.begin(), by_count.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  FoldedProfile kept;
  uint64_t other = 0;
  for (size_t i = 0; i < by_count.size(); ++i) {
    if (i + 1 < keep) {
      kept.stacks[by_count[i].second] += by_count[i].first;
    } else {
      other += by_count[i].first;
    }
  }
  kept.stacks[std::string(kOtherStacks)] += other;
  kept.truncated = true;
  profile = std::move(kept);
}

// Past kMaxProfileStacks, the rarest stacks are merged into one.
void EnforceStackLimit(FoldedProfile& profile) { KeepMostSampled(profile, kMaxProfileStacks); }

}  // namespace

uint64_t FoldedProfile::samples() const {
  uint64_t n = 0;
  for (const auto& [stack, count] : stacks) n += count;
  return n;
}

Result<FoldedProfile> FoldPerfScript(std::string_view text) {
  FoldedProfile profile;
  std::string comm;
  bool in_sample = false;
  std::vector<std::string> frames;  // leaf first, as perf prints them
  auto finish = [&] {
    if (!in_sample) return;
    std::string stack = CleanFrame(comm);
    size_t first = 0;
    if (frames.size() > kMaxProfileDepth) {
      first = frames.size() - kMaxProfileDepth;  // keep the root end
      profile.truncated = true;
    }
    for (size_t i = frames.size(); i-- > first;) stack += ";" + frames[i];
    if (first > 0) stack += ";" + std::string(kTruncatedFrame);
    ++profile.stacks[stack];
    in_sample = false;
    frames.clear();
  };
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (Trim(line).empty()) {
      finish();
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t') {
      if (!in_sample) {
        return Status::InvalidArgument("perf script line " + std::to_string(line_no) +
                                       ": a frame before any sample's header");
      }
      frames.push_back(FrameOf(line));
      continue;
    }
    finish();
    // "COMM PERIOD": the process name may hold spaces; the period is the last field.
    const std::string_view header = Trim(line);
    const size_t space = header.rfind(' ');
    if (space == std::string_view::npos || !AllDigits(header.substr(space + 1))) {
      return Status::InvalidArgument("perf script line " + std::to_string(line_no) +
                                     ": expected \"COMM PERIOD\" (perf script -F comm,period,ip,"
                                     "sym,dso)");
    }
    comm = std::string(Trim(header.substr(0, space)));
    in_sample = true;
  }
  finish();
  EnforceStackLimit(profile);
  return profile;
}

std::string FormatFolded(const FoldedProfile& profile) {
  std::string out;
  for (const auto& [stack, count] : profile.stacks) {
    out += stack;
    out += ' ';
    out += std::to_string(count);
    out += '\n';
  }
  return out;
}

Result<FoldedProfile> ParseFolded(std::string_view text) {
  FoldedProfile profile;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    auto bad = [&](const std::string& what) {
      return Status::InvalidArgument("folded profile line " + std::to_string(line_no) + ": " +
                                     what);
    };
    const size_t space = line.rfind(' ');
    if (space == std::string_view::npos || space == 0 || !AllDigits(line.substr(space + 1)) ||
        line.size() - space - 1 > 19) {
      return bad("expected \"FRAME;FRAME;... COUNT\"");
    }
    const std::string_view stack = line.substr(0, space);
    const auto frames = SplitFrames(stack);
    if (frames.size() > kMaxProfileDepth + 2) {  // the process, the frames, "[truncated]"
      return bad("more than " + std::to_string(kMaxProfileDepth) + " frames");
    }
    for (std::string_view frame : frames) {
      if (frame.empty()) return bad("an empty frame");
      if (frame.size() > kMaxFrameBytes) {
        return bad("a frame over " + std::to_string(kMaxFrameBytes) + " bytes");
      }
      for (char c : frame) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) return bad("a control byte in a frame");
      }
    }
    profile.stacks[std::string(stack)] += std::stoull(std::string(line.substr(space + 1)));
    if (profile.stacks.size() > kMaxProfileStacks) {
      return bad("more than " + std::to_string(kMaxProfileStacks) + " stacks");
    }
    if (stack == kOtherStacks || stack.find(kTruncatedFrame) != std::string_view::npos) {
      profile.truncated = true;
    }
  }
  return profile;
}

Result<std::string> CompressFolded(FoldedProfile profile, size_t max_bytes) {
  while (true) {
    const std::string text = FormatFolded(profile);
    uLongf size = compressBound(static_cast<uLong>(text.size()));
    std::string packed(size, '\0');
    if (compress2(reinterpret_cast<Bytef*>(packed.data()), &size,
                  reinterpret_cast<const Bytef*>(text.data()), static_cast<uLong>(text.size()),
                  6) != Z_OK) {
      return Status::Internal("profile: zlib could not compress");
    }
    packed.resize(size);
    if (packed.size() <= max_bytes && text.size() <= kMaxProfileTextBytes) return packed;
    if (profile.stacks.size() <= 1) {
      return Status::ResourceExhausted("profile: one stack does not fit in " +
                                       std::to_string(max_bytes) + " bytes");
    }
    KeepMostSampled(profile, profile.stacks.size() / 2);
  }
}

Result<FoldedProfile> DecompressFolded(std::string_view bytes) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return Status::Internal("profile: zlib could not start");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  std::string text;
  char chunk[64 * 1024];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    text.append(chunk, sizeof chunk - z.avail_out);
    if (text.size() > kMaxProfileTextBytes) {
      inflateEnd(&z);
      return Status::InvalidArgument("profile: over " + std::to_string(kMaxProfileTextBytes) +
                                     " bytes once uncompressed");
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // input ended before the stream did
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END || z.avail_in != 0) {
    return Status::InvalidArgument("profile: not a zlib stream of a folded profile");
  }
  return ParseFolded(text);
}

void MergeProfile(FoldedProfile& into, const FoldedProfile& more) {
  for (const auto& [stack, count] : more.stacks) into.stacks[stack] += count;
  into.truncated = into.truncated || more.truncated;
  EnforceStackLimit(into);
}

std::map<std::string, FunctionSamples> SamplesByFunction(const FoldedProfile& profile) {
  std::map<std::string, FunctionSamples> out;
  for (const auto& [stack, count] : profile.stacks) {
    const auto frames = SplitFrames(stack);
    if (frames.size() < 2) continue;  // the process name alone: no function
    std::set<std::string_view> seen;
    for (size_t i = 1; i < frames.size(); ++i) {  // frames[0] is the process
      if (seen.insert(frames[i]).second) out[std::string(frames[i])].total += count;
    }
    out[std::string(frames.back())].self += count;
  }
  return out;
}

}  // namespace benchlab
