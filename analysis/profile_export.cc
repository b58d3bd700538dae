#include "analysis/profile_export.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "github.com/google/pprof/proto/profile.pb.h"

namespace benchlab {

namespace {

constexpr std::string_view kTruncatedFrame = "[truncated]";
constexpr std::string_view kKernelSuffix = "_[k]";
constexpr std::string_view kJitSuffix = "_[j]";

// A stack's frames, root first, cut as the folded limits cut one (common/folded_profile.h): the
// process, at most kMaxProfileDepth frames, then "[truncated]". Views into `stack`.
std::vector<std::string_view> FramesOf(std::string_view stack) {
  std::vector<std::string_view> frames;
  size_t pos = 0;
  while (true) {
    if (frames.size() == kMaxProfileDepth + 2) {
      frames.back() = kTruncatedFrame;
      break;
    }
    const size_t semi = stack.find(';', pos);
    frames.push_back(stack.substr(pos, semi == std::string_view::npos ? semi : semi - pos));
    if (semi == std::string_view::npos) break;
    pos = semi + 1;
  }
  return frames;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Length of the well-formed UTF-8 sequence at s[i], 0 if there is none.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) low = 0xA0;
    if (c == 0xED) high = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) low = 0x90;
    if (c == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (b < low || b > high) : (b < 0x80 || b > 0xBF)) return 0;
  }
  return len;
}

// The frame as JSON and protobuf strings must hold it: valid UTF-8, each byte of an ill-formed
// sequence shown as U+FFFD. perf names symbols with whatever bytes the binary has; the folded
// limits keep out only ';' and control bytes.
std::string_view Utf8(std::string_view s, std::string& scratch) {
  size_t i = 0;
  while (i < s.size()) {
    const size_t len = Utf8Length(s, i);
    if (len == 0) break;
    i += len;
  }
  if (i == s.size()) return s;
  scratch.assign(s.substr(0, i));
  while (i < s.size()) {
    const size_t len = Utf8Length(s, i);
    if (len == 0) {
      scratch += "\xEF\xBF\xBD";
      ++i;
    } else {
      scratch.append(s.substr(i, len));
      i += len;
    }
  }
  return scratch;
}

Result<std::string> Gzip(const std::string& data) {
  if (data.size() > UINT_MAX) return Status::ResourceExhausted("pprof export: profile over 4 GiB");
  z_stream z{};
  // 16 + MAX_WBITS: a gzip header and trailer, as pprof reads a profile from a file.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return Status::Internal("pprof export: zlib could not start");
  }
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(std::min<size_t>(out.size(), UINT_MAX));
  const int rc = deflate(&z, Z_FINISH);
  const size_t written = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Status::Internal("pprof export: zlib could not compress");
  out.resize(written);
  return out;
}

}  // namespace

Result<std::string> ToPprof(const FoldedProfile& profile, const PprofOptions& options) {
  constexpr auto kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (options.period_ns == 0 || options.period_ns > kInt64Max) {
    return Status::InvalidArgument(
        "pprof export: period_ns " + std::to_string(options.period_ns) +
        ": expected the nanoseconds one sample stands for, 1e9 / the frequency in Hz");
  }
  perftools::profiles::Profile out;
  std::unordered_map<std::string, int64_t> string_index;
  auto intern = [&](std::string_view s) -> int64_t {
    auto [it, added] = string_index.try_emplace(std::string(s), out.string_table_size());
    if (added) out.add_string_table(it->first);
    return it->second;
  };
  intern("");  // string_table[0] is "" (profile.proto)
  auto value_type = [&](perftools::profiles::ValueType* t, std::string_view type,
                        std::string_view unit) {
    t->set_type(intern(type));
    t->set_unit(intern(unit));
  };
  value_type(out.add_sample_type(), "samples", "count");
  value_type(out.add_sample_type(), "cpu", "nanoseconds");
  value_type(out.mutable_period_type(), "cpu", "nanoseconds");
  out.set_period(static_cast<int64_t>(options.period_ns));
  if (!options.name.empty()) {
    std::string scratch;
    out.add_comment(intern(Utf8(options.name, scratch)));
  }
  if (profile.truncated) {
    out.add_comment(intern("profile limits cut deep stacks or merged the rarest ones"));
  }

  // One Function and one Location per distinct frame, the same id for both.
  std::unordered_map<std::string_view, uint64_t> location_of;
  auto location = [&](std::string_view frame) -> uint64_t {
    auto [it, added] = location_of.try_emplace(frame, location_of.size() + 1);
    if (!added) return it->second;
    std::string_view name = frame;
    std::string_view file;
    if (EndsWith(frame, kKernelSuffix)) {
      name.remove_suffix(kKernelSuffix.size());
      file = "[kernel]";
    } else if (EndsWith(frame, kJitSuffix)) {
      name.remove_suffix(kJitSuffix.size());
      file = "[jit]";
    }
    std::string scratch;
    const int64_t name_index = intern(Utf8(name, scratch));
    perftools::profiles::Function* function = out.add_function();
    function->set_id(it->second);
    function->set_name(name_index);
    function->set_system_name(name_index);
    function->set_filename(intern(file));
    perftools::profiles::Location* loc = out.add_location();
    loc->set_id(it->second);
    loc->add_line()->set_function_id(it->second);
    return it->second;
  };

  for (const auto& [stack, count] : profile.stacks) {
    if (count > kInt64Max / options.period_ns) {
      return Status::InvalidArgument(
          "pprof export: stack \"" + stack.substr(0, 200) + "\" has " + std::to_string(count) +
          " samples, which at " + std::to_string(options.period_ns) +
          " ns each are more nanoseconds than pprof's int64 values hold");
    }
    const std::vector<std::string_view> frames = FramesOf(stack);
    perftools::profiles::Sample* sample = out.add_sample();
    for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
      sample->add_location_id(location(*f));  // leaf first, as pprof orders them
    }
    sample->add_value(static_cast<int64_t>(count));
    sample->add_value(static_cast<int64_t>(count * options.period_ns));
  }

  std::string bytes;
  if (!out.SerializeToString(&bytes)) {
    return Status::ResourceExhausted("pprof export: the profile is over protobuf's 2 GiB");
  }
  return Gzip(bytes);
}

std::string ToSpeedscope(const FoldedProfile& profile, const std::string& name,
                         double sample_weight_us) {
  const bool timed = std::isfinite(sample_weight_us) && sample_weight_us > 0;
  nlohmann::json frames = nlohmann::json::array();
  std::unordered_map<std::string_view, size_t> index_of;
  nlohmann::json samples = nlohmann::json::array();
  nlohmann::json weights = nlohmann::json::array();
  double end_us = 0;
  uint64_t end_count = 0;
  std::string scratch;
  for (const auto& [stack, count] : profile.stacks) {
    nlohmann::json sample = nlohmann::json::array();
    for (std::string_view frame : FramesOf(stack)) {
      auto [it, added] = index_of.try_emplace(frame, index_of.size());
      if (added) frames.push_back({{"name", Utf8(frame, scratch)}});
      sample.push_back(it->second);
    }
    samples.push_back(std::move(sample));
    if (timed) {
      const double weight = static_cast<double>(count) * sample_weight_us;
      weights.push_back(weight);
      end_us += weight;
    } else {
      weights.push_back(count);
      end_count += count;
    }
  }
  nlohmann::json sampled = {
      {"type", "sampled"},
      {"name", Utf8(name, scratch)},
      {"unit", timed ? "microseconds" : "none"},
      {"startValue", 0},
      {"samples", std::move(samples)},
      {"weights", std::move(weights)},
  };
  if (timed) {
    sampled["endValue"] = end_us;
  } else {
    sampled["endValue"] = end_count;
  }
  const nlohmann::json file = {
      {"$schema", "https://www.speedscope.app/file-format-schema.json"},
      {"shared", {{"frames", std::move(frames)}}},
      {"profiles", nlohmann::json::array({std::move(sampled)})},
      {"name", Utf8(name, scratch)},
      {"activeProfileIndex", 0},
      {"exporter", "benchlab " BENCHLAB_VERSION},
  };
  return file.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// A call tree merged from one or two profiles. Depth is bounded by FramesOf, so the recursion
// below (and the destructor's) is at most kMaxProfileDepth + 3 calls deep.
struct Node {
  uint64_t next = 0;  // samples of `next` (or the only profile) through this node
  uint64_t base = 0;  // samples of `base`
  bool in_next = false;
  std::map<std::string, std::unique_ptr<Node>, std::less<>> children;
};

void AddStacks(Node& root, const FoldedProfile& profile, bool is_base) {
  std::string scratch;
  for (const auto& entry : profile.stacks) {
    // Named, not bound: the lambda below uses it (clang 14 does not capture structured bindings).
    const std::string& stack = entry.first;
    const uint64_t count = entry.second;
    Node* node = &root;
    auto add = [&](Node& n) {
      (is_base ? n.base : n.next) += count;
      if (!is_base) n.in_next = true;
    };
    add(root);
    for (std::string_view frame : FramesOf(stack)) {
      const std::string_view name = Utf8(frame, scratch);
      auto it = node->children.find(name);
      if (it == node->children.end()) {
        it = node->children.emplace(std::string(name), std::make_unique<Node>()).first;
      }
      node = it->second.get();
      add(*node);
    }
  }
}

nlohmann::json TreeJson(const std::string& name, const Node& node, bool diff, double scale) {
  nlohmann::json out = {{"name", name}, {"value", node.next}};
  if (diff) {
    out["base"] = node.base;
    out["delta"] = static_cast<double>(node.next) - static_cast<double>(node.base) * scale;
    if (!node.in_next) out["vanished"] = true;
  }
  nlohmann::json children = nlohmann::json::array();
  for (const auto& [child_name, child] : node.children) {
    children.push_back(TreeJson(child_name, *child, diff, scale));
  }
  out["children"] = std::move(children);
  return out;
}

}  // namespace

nlohmann::json FlameTree(const FoldedProfile& profile) {
  Node root;
  AddStacks(root, profile, false);
  return TreeJson("all", root, false, 0);
}

nlohmann::json DiffFlameTree(const FoldedProfile& base, const FoldedProfile& next) {
  Node root;
  AddStacks(root, next, false);
  AddStacks(root, base, true);
  root.in_next = true;  // "all" is in both, even when one side has no stack
  const double scale =
      root.base == 0 ? 0.0 : static_cast<double>(root.next) / static_cast<double>(root.base);
  return TreeJson("all", root, true, scale);
}

}  // namespace benchlab
