// AgentLimits: how much one call may ask of an agent, from the [limits] table of its
// configuration (docs/agent.md, "Limits"). A request over a limit is refused with
// INVALID_ARGUMENT naming the field, its value, the limit's key and the limit:
//   duration_ms 20000000000 exceeds limits.max_duration = 10m
// and a value that makes no sense whatever the limits (a negative duration, zero connections)
// names the field and what it must be. Value type; thread-safe to share once built.
#pragma once

#include <chrono>
#include <cstdint>

#include "benchlab/v1/agent.pb.h"
#include "common/config_toml.h"
#include "common/status.h"

namespace benchlab {

struct AgentLimits {
  std::chrono::milliseconds max_duration{std::chrono::minutes(10)};  // RunLoad duration_ms
  std::chrono::milliseconds max_warmup{std::chrono::minutes(5)};     // RunLoad warmup_ms
  // Per request and per connect: RunLoad and CheckConformance timeout_ms.
  std::chrono::milliseconds max_timeout{std::chrono::seconds(60)};
  int64_t max_connections = 10000;       // RunLoad connections and max_conns
  int64_t max_threads = 0;               // RunLoad threads; 0: one per allowed CPU
  double max_rate = 1e6;                 // RunLoad rate, requests per second
  int64_t max_depth = 128;               // RunLoad depth (requests in flight per connection)
  uint64_t max_body = 16ull << 20;       // bytes of one response body read (load and conformance)
  int64_t max_conformance_cases = 1000;  // cases in one CheckConformance
  int64_t max_targets = 0;               // running targets at once; 0: one per allowed CPU
  uint64_t spool_max_bytes = 256ull << 20;  // results awaiting acknowledgement, in bytes
};

// The limits with the per-CPU defaults (max_threads, max_targets = 0) made concrete: one per
// allowed CPU, at least 1.
AgentLimits ResolveLimits(AgentLimits limits, size_t allowed_cpus);

// Reads the value of the root's `limits` key (a table) into `out`; keys absent keep their
// defaults. Problems go to `issues` as "file:line: limits.max_duration: expected ..., got ...".
void ReadLimits(config::Table& root, const config::Value& v, config::Issues& issues,
                AgentLimits& out);
// The [limits] table of a written configuration: every limit that differs from the default.
toml::table LimitsToToml(const AgentLimits& limits);

// A duration limit as the configuration would write it: "10m", "60s", "250ms".
std::string FormatLimit(std::chrono::milliseconds limit);

// Checks a RunLoad request's sizes and durations against resolved limits.
Status CheckLoadLimits(const v1::RunLoadRequest& req, const AgentLimits& limits);
// Checks a CheckConformance request's number of cases and timeout against resolved limits.
Status CheckConformanceLimits(const v1::CheckConformanceRequest& req, const AgentLimits& limits);

}  // namespace benchlab
