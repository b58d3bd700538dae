// AgentMetrics: the agent's /metrics in Prometheus text format 0.0.4 (docs/metrics.md, "On an
// agent"), on `metrics_listen` in its configuration. Gauges are read when scraped from what
// the agent already knows (its service's readings, the spool, its registration), never measured
// for the scrape:
//   benchlab_build_info{version, daemon="agent", agent}        gauge 1
//   benchlab_agent_registered                                  gauge 0/1 with the coordinator
//   benchlab_agent_targets_running                             gauge
//   benchlab_agent_load_running                                gauge RunLoad calls producing load
//   benchlab_agent_spool_bytes, benchlab_agent_spool_limit_bytes   gauges (limit: when capped)
//   benchlab_agent_last_interval_foreign_cpu_cores             gauge \ the last measured interval's
//   benchlab_agent_last_interval_steal_cpu_cores               gauge  | host figures (Mark END or
//   benchlab_agent_last_interval_max_temperature_celsius       gauge  | RunLoad); absent before
//   benchlab_agent_last_interval_end_timestamp_seconds         gauge /  the first, temperature
//   benchlab_agent_selftest_seconds                            gauge    also without sensors
//   benchlab_agent_host_temperature_celsius                    gauge hottest thermal zone now
//   grpc_server_*                                              the agent's gRPC calls (RpcMetrics)
// /metrics is plain HTTP without a token, so Start refuses any address but loopback.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "agent/server/agent_service.h"
#include "common/parse.h"
#include "common/status.h"
#include "common/sysenv.h"
#include "rpc/metrics_interceptor.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace benchlab {

class HttpServer;

// What one scrape shows besides the gRPC calls.
struct AgentMetricsSnapshot {
  bool registered = false;
  AgentReadings readings;
  std::optional<uint64_t> spool_bytes;        // unset without a spool
  std::optional<uint64_t> spool_limit_bytes;  // unset without a cap
  std::optional<double> temperature_c;        // unset on a machine without thermal zones
};

// A snapshot of `service` (its readings and spool) and of the machine's thermal zones, read now.
AgentMetricsSnapshot SnapshotOf(SysEnv& env, AgentService& service, bool registered);

class AgentMetrics {
 public:
  using SnapshotFn = std::function<AgentMetricsSnapshot()>;
  AgentMetrics(std::string agent_name, SnapshotFn snapshot);
  ~AgentMetrics();
  AgentMetrics(const AgentMetrics&) = delete;
  AgentMetrics& operator=(const AgentMetrics&) = delete;

  // The agent's gRPC calls; its interceptor goes on the agent's server.
  RpcMetrics& rpc() { return *rpc_; }
  // The whole exposition, with a snapshot taken now.
  std::string Scrape() const;

  // Serves GET /metrics on `listen` (port 0: the kernel picks one) on threads of its own, behind
  // the HTTP front's deadlines and caps (rpc/http_server.h).
  // FailedPrecondition for an address beyond loopback; Unavailable when it cannot bind.
  // Returns the bound address.
  Result<HostPort> Start(const HostPort& listen);
  // Stops serving; safe to call twice.
  void Stop();

 private:
  const std::string agent_name_;
  const SnapshotFn snapshot_;
  std::unique_ptr<prometheus::Registry> registry_;
  std::unique_ptr<RpcMetrics> rpc_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace benchlab
