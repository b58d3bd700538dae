#include "agent/server/limits.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "common/config_fields.h"
#include "common/parse.h"
#include "loadgen/load.h"

namespace benchlab {
namespace {

using config::Table;
using config::Value;

std::string Number(double value) {
  std::ostringstream out;
  out.precision(15);
  out << value;
  return out.str();
}

Status Over(std::string_view field, const std::string& value, std::string_view key,
            const std::string& limit) {
  return Status::InvalidArgument(std::string(field) + " " + value + " exceeds limits." +
                                 std::string(key) + " = " + limit);
}

Status Nonsense(std::string_view field, const std::string& value, std::string_view expected) {
  return Status::InvalidArgument(std::string(field) + " " + value + ": expected " +
                                 std::string(expected));
}

// field must be in [lo, limit]; below lo is nonsense, above the limit names limits.<key>.
Status CheckCount(std::string_view field, int64_t value, int64_t lo, std::string_view key,
                  int64_t limit) {
  if (value < lo) {
    return Nonsense(field, std::to_string(value), lo == 0 ? "0 or more" : "1 or more");
  }
  if (value > limit) return Over(field, std::to_string(value), key, std::to_string(limit));
  return Status::Ok();
}

Status CheckMs(std::string_view field, int64_t value, bool allow_zero, std::string_view key,
               std::chrono::milliseconds limit) {
  if (value < 0 || (value == 0 && !allow_zero)) {
    return Nonsense(field, std::to_string(value), allow_zero ? "0 or more" : "more than 0");
  }
  if (value > limit.count()) return Over(field, std::to_string(value), key, FormatLimit(limit));
  return Status::Ok();
}

void ReadMs(Table& t, std::string_view key, const Value& v, std::chrono::milliseconds& out) {
  if (auto d = config::ReadDuration(t, key, v, /*allow_zero=*/false)) {
    out = std::max(std::chrono::milliseconds(1), std::chrono::ceil<std::chrono::milliseconds>(*d));
  }
}

void ReadInt64(Table& t, std::string_view key, const Value& v, int64_t lo, int64_t hi,
               int64_t& out) {
  // toml11 saturates integers too large for 64 bits, so a huge number fails the range check too.
  if (v.is_integer() && v.as_integer() >= lo && v.as_integer() <= hi) {
    out = v.as_integer();
    return;
  }
  t.Expect(v, key, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
}

void ReadBytes(Table& t, std::string_view key, const Value& v, int64_t lo, int64_t hi,
               uint64_t& out) {
  int64_t bytes = static_cast<int64_t>(out);
  if (v.is_integer() && v.as_integer() >= lo && v.as_integer() <= hi) {
    out = static_cast<uint64_t>(v.as_integer());
    return;
  }
  t.Expect(v, key,
           "a number of bytes from " + std::to_string(lo) + " to " + std::to_string(hi) +
               " such as " + std::to_string(bytes));
}

constexpr int64_t kMaxConnections = 1'000'000;
constexpr int64_t kMaxThreads = 1024;
constexpr double kMaxRate = 1e9;
constexpr int64_t kMaxCases = 100'000;
constexpr int64_t kMaxTargets = 4096;
constexpr int64_t kMaxBytes = int64_t{1} << 40;
constexpr int64_t kMinSpool = int64_t{1} << 20;  // one page of OfferResults

}  // namespace

AgentLimits ResolveLimits(AgentLimits limits, size_t allowed_cpus) {
  const int64_t per_cpu = std::max<int64_t>(1, static_cast<int64_t>(allowed_cpus));
  if (limits.max_threads == 0) limits.max_threads = per_cpu;
  if (limits.max_targets == 0) limits.max_targets = per_cpu;
  return limits;
}

std::string FormatLimit(std::chrono::milliseconds limit) {
  if (limit.count() > 0 && limit.count() % 60000 == 0) {
    return std::to_string(limit.count() / 60000) + "m";
  }
  return FormatDuration(limit);
}

void ReadLimits(Table& root, const Value& v, config::Issues& issues, AgentLimits& out) {
  if (!v.is_table()) return root.Expect(v, "limits", "a table such as [limits]");
  Table t(
      v, "limits",
      {"max_duration", "max_warmup", "max_timeout", "max_connections", "max_threads", "max_rate",
       "max_depth", "max_body", "max_conformance_cases", "max_targets", "spool_max_bytes"},
      issues);
  if (const Value* x = t.Get("max_duration")) ReadMs(t, "max_duration", *x, out.max_duration);
  if (const Value* x = t.Get("max_warmup")) ReadMs(t, "max_warmup", *x, out.max_warmup);
  if (const Value* x = t.Get("max_timeout")) ReadMs(t, "max_timeout", *x, out.max_timeout);
  if (const Value* x = t.Get("max_connections")) {
    ReadInt64(t, "max_connections", *x, 1, kMaxConnections, out.max_connections);
  }
  if (const Value* x = t.Get("max_threads")) {
    ReadInt64(t, "max_threads", *x, 1, kMaxThreads, out.max_threads);
  }
  if (const Value* x = t.Get("max_rate")) {
    const bool number = x->is_integer() || x->is_floating();
    const double rate = x->is_integer() ? static_cast<double>(x->as_integer())
                                        : (x->is_floating() ? x->as_floating() : 0.0);
    if (number && rate > 0 && rate <= kMaxRate) {
      out.max_rate = rate;
    } else {
      t.Expect(*x, "max_rate", "requests per second, more than 0 and at most 1000000000");
    }
  }
  if (const Value* x = t.Get("max_depth")) {
    ReadInt64(t, "max_depth", *x, 1, LoadOptions::kMaxDepth, out.max_depth);
  }
  if (const Value* x = t.Get("max_body")) ReadBytes(t, "max_body", *x, 1, kMaxBytes, out.max_body);
  if (const Value* x = t.Get("max_conformance_cases")) {
    ReadInt64(t, "max_conformance_cases", *x, 1, kMaxCases, out.max_conformance_cases);
  }
  if (const Value* x = t.Get("max_targets")) {
    ReadInt64(t, "max_targets", *x, 1, kMaxTargets, out.max_targets);
  }
  if (const Value* x = t.Get("spool_max_bytes")) {
    ReadBytes(t, "spool_max_bytes", *x, kMinSpool, kMaxBytes, out.spool_max_bytes);
  }
}

toml::table LimitsToToml(const AgentLimits& limits) {
  const AgentLimits d;
  toml::table out;
  auto ms = [&](const char* key, std::chrono::milliseconds value, std::chrono::milliseconds def) {
    if (value != def) out[key] = FormatLimit(value);
  };
  auto count = [&](const char* key, int64_t value, int64_t def) {
    if (value != def) out[key] = value;
  };
  ms("max_duration", limits.max_duration, d.max_duration);
  ms("max_warmup", limits.max_warmup, d.max_warmup);
  ms("max_timeout", limits.max_timeout, d.max_timeout);
  count("max_connections", limits.max_connections, d.max_connections);
  count("max_threads", limits.max_threads, d.max_threads);
  if (limits.max_rate != d.max_rate) out["max_rate"] = limits.max_rate;
  count("max_depth", limits.max_depth, d.max_depth);
  count("max_body", static_cast<int64_t>(limits.max_body), static_cast<int64_t>(d.max_body));
  count("max_conformance_cases", limits.max_conformance_cases, d.max_conformance_cases);
  count("max_targets", limits.max_targets, d.max_targets);
  count("spool_max_bytes", static_cast<int64_t>(limits.spool_max_bytes),
        static_cast<int64_t>(d.spool_max_bytes));
  return out;
}

Status CheckLoadLimits(const v1::RunLoadRequest& req, const AgentLimits& limits) {
  BENCHLAB_RETURN_IF_ERROR(
      CheckMs("duration_ms", req.duration_ms(), false, "max_duration", limits.max_duration));
  BENCHLAB_RETURN_IF_ERROR(
      CheckMs("warmup_ms", req.warmup_ms(), true, "max_warmup", limits.max_warmup));
  BENCHLAB_RETURN_IF_ERROR(
      CheckMs("timeout_ms", req.timeout_ms(), true, "max_timeout", limits.max_timeout));
  BENCHLAB_RETURN_IF_ERROR(
      CheckCount("connections", req.connections(), 1, "max_connections", limits.max_connections));
  BENCHLAB_RETURN_IF_ERROR(
      CheckCount("max_conns", req.max_conns(), 0, "max_connections", limits.max_connections));
  BENCHLAB_RETURN_IF_ERROR(
      CheckCount("threads", req.threads(), 0, "max_threads", limits.max_threads));
  BENCHLAB_RETURN_IF_ERROR(CheckCount("depth", req.depth(), 0, "max_depth", limits.max_depth));
  if (!std::isfinite(req.rate()) || req.rate() < 0) {
    return Nonsense("rate", Number(req.rate()),
                    "a finite number of requests per second, 0 or more");
  }
  if (req.rate() > limits.max_rate) {
    return Over("rate", Number(req.rate()), "max_rate", Number(limits.max_rate));
  }
  return Status::Ok();
}

Status CheckConformanceLimits(const v1::CheckConformanceRequest& req, const AgentLimits& limits) {
  BENCHLAB_RETURN_IF_ERROR(CheckCount("cases", req.cases_size(), 0, "max_conformance_cases",
                                      limits.max_conformance_cases));
  return CheckMs("timeout_ms", req.timeout_ms(), true, "max_timeout", limits.max_timeout);
}

}  // namespace benchlab
