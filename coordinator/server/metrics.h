// CoordinatorMetrics: the coordinator's metrics in Prometheus text format 0.0.4, served at
// /metrics on its --http port (docs/metrics.md). Counters of events since the process started:
//   benchlab_windows_total{verdict}                    counter   windows stored
//   benchlab_window_reasons_total{kind, reason}        counter   their reasons (gate or step name)
//   benchlab_window_duration_seconds{verdict}          histogram claim to stored, in seconds
//   grpc_server_*                                      the gRPC service's calls (RpcMetrics)
// and gauges read when scraped, from the store and the agent registry:
//   benchlab_build_info{version, daemon}               gauge 1
//   benchlab_campaigns{state}                          gauge     campaigns in each state
//   benchlab_agents{state}                             gauge     agents in each lease state
//   benchlab_store_bytes{file="db"|"wal"}              gauge     the database's files' sizes
// Labels come from fixed sets (verdicts, states, reason kinds, the gates' and steps' names):
// never a campaign, an agent or a token. A restart starts the counters from zero, as Prometheus
// expects of counters. Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "coordinator/outcome.h"
#include "rpc/metrics_interceptor.h"

namespace prometheus {
class Registry;
class Counter;
class Histogram;
template <typename T>
class Family;
}  // namespace prometheus

namespace benchlab {

class AgentRegistry;
class Store;

class CoordinatorMetrics {
 public:
  // `db_path`: the store's database; its size and its -wal file's are reported.
  explicit CoordinatorMetrics(std::string db_path);
  ~CoordinatorMetrics();
  CoordinatorMetrics(const CoordinatorMetrics&) = delete;
  CoordinatorMetrics& operator=(const CoordinatorMetrics&) = delete;

  // Counts one stored window: its verdict (VerdictName), each of its reasons and how long it
  // took from claim to stored, in seconds.
  void RecordWindow(const std::string& verdict, const std::vector<WindowReason>& reasons,
                    double seconds);

  // The gRPC service's call counts and times; its interceptor goes on the coordinator's server.
  RpcMetrics& rpc() { return rpc_; }

  // The store's database, as given.
  const std::string& db_path() const { return db_path_; }

  // The whole exposition: the counters and the gauges read now from `store` and `agents`.
  std::string Scrape(Store& store, AgentRegistry& agents) const;

 private:
  const std::string db_path_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& windows_;
  prometheus::Family<prometheus::Counter>& reasons_;
  prometheus::Family<prometheus::Histogram>& durations_;
  RpcMetrics rpc_;
};

// The content type of the text exposition format.
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace benchlab
