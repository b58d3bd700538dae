// The load generator's engine: closed-loop HTTP/1.1 keep-alive load over epoll. Each worker
// thread owns its epoll loop, connections, buffers, prebuilt request and histogram; nothing is
// shared or locked per request. Results merge when the window ends. RunLoad blocks the calling
// thread for warmup + duration and may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/histogram.h"
#include "common/status.h"

namespace benchlab {

struct LoadOptions {
  std::string host = "127.0.0.1";  // an IPv4/IPv6 literal or a name resolved once at start
  uint16_t port = 80;
  std::string method = "GET";
  std::string path = "/";
  std::vector<std::pair<std::string, std::string>> headers;  // extra request headers
  std::string body;
  int connections = 1;  // total, spread over threads
  int threads = 1;
  std::vector<int> cpus;  // worker threads pinned round-robin; empty: inherited affinity
  std::chrono::nanoseconds warmup{0};
  std::chrono::nanoseconds duration{std::chrono::seconds(1)};
  std::chrono::nanoseconds timeout{std::chrono::seconds(2)};  // per request
};

struct ErrorCounts {
  uint64_t connect = 0;
  uint64_t read = 0;
  uint64_t write = 0;
  uint64_t timeout = 0;
  uint64_t parse = 0;
  uint64_t Total() const { return connect + read + write + timeout + parse; }
};

struct LoadResult {
  // Over the measured interval only (warm-up excluded).
  uint64_t requests = 0;  // completed responses, any status
  double duration_s = 0;  // measured interval as the generator timed it
  double rps = 0;
  Histogram latency_us;   // send to complete, per response
  std::map<int, uint64_t> status_counts;
  ErrorCounts errors;
  uint64_t non_2xx = 0;
  uint64_t reconnects = 0;
  uint64_t bytes_read = 0;
  std::vector<double> thread_cpu_s;        // CPU (user+sys) of each worker over the interval
  std::vector<uint64_t> per_second_requests;  // responses completed in each whole second
  // Wall-clock instants of the measured interval's start and end (for alignment).
  std::chrono::system_clock::time_point measure_start;
  std::chrono::system_clock::time_point measure_end;
};

// Called once, from a worker-independent thread, at the instant warm-up ends and the measured
// interval begins (and again with measuring=false when it ends).
using MeasureMarkFn = std::function<void(bool measuring)>;

Result<LoadResult> RunLoad(const LoadOptions& options, const MeasureMarkFn& on_mark = {});

// Human output in the spirit of wrk's.
std::string FormatLoadResult(const LoadOptions& options, const LoadResult& result);
// {"requests", "duration_s", "rps", "latency_us": {mean,p50,p90,p99,p999,max}, "status": {...},
//  "errors": {...}, "per_second": [...], "thread_cpu_s": [...]} as JSON text.
std::string LoadResultToJson(const LoadResult& result);

// "http://host:port/path?query" into options.host/port/path. Only http:// is supported.
Status ParseUrlInto(const std::string& url, LoadOptions& options);

}  // namespace benchlab
