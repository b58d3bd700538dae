// Worker: one load-generator thread's event loop (internal to the engine). A worker owns an
// epoll fd, its connections, one read buffer, its histogram and counters; it shares only the
// read-only WorkerPlan and an abort flag, so nothing is locked or allocated per request.
// Construct, Run() on the thread that owns it, then read the result after joining.
#pragma once

#include <sys/socket.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/histogram.h"
#include "common/status.h"
#include "loadgen/http_response_parser.h"
#include "loadgen/load.h"

namespace benchlab {

// What every worker reads; fixed before the first thread starts. Times are steady_clock
// (CLOCK_MONOTONIC) nanoseconds since its epoch.
struct WorkerPlan {
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  std::string request;  // the exact bytes sent for every request
  bool head_request = false;
  int64_t measure_start_ns = 0;  // completions before this are warm-up and not counted
  int64_t end_ns = 0;            // completions at or after this are not counted; workers stop
  int64_t timeout_ns = 0;        // per request, and per connection attempt
  size_t seconds = 0;            // whole (or final partial) seconds in the measured interval
};

struct WorkerResult {
  Histogram latency_us;
  std::array<uint64_t, 1000> status_counts{};  // indexed by status code (100..999)
  ErrorCounts errors;
  uint64_t requests = 0;
  uint64_t reconnects = 0;
  uint64_t bytes_read = 0;
  std::vector<uint64_t> per_second;
  double cpu_s = 0;
};

class Worker {
 public:
  Worker(const WorkerPlan& plan, int connections, const std::atomic<bool>& abort);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs until plan.end_ns (or abort). Fails only if the event loop cannot be set up; network
  // trouble is counted in the result instead.
  Status Run();
  const WorkerResult& result() const { return result_; }

 private:
  enum class Failure { kConnect, kRead, kWrite, kParse };

  struct Conn {
    int fd = -1;
    uint32_t generation = 0;  // tells a stale epoll event for a closed fd from a live one
    bool connecting = false;
    bool out_armed = false;  // EPOLLOUT registered (connect in progress or partial write)
    bool opened_before = false;
    size_t written = 0;
    int64_t sent_ns = 0;      // when the outstanding request was sent; 0 when none
    int64_t deadline_ns = 0;  // of the connect attempt or the outstanding request
    int64_t retry_ns = 0;     // when a failed connection may be reopened
    HttpResponseParser parser;
  };

  void Open(Conn& c, int64_t now);
  void Close(Conn& c);
  void Fail(Conn& c, Failure what, int64_t now);
  void Reopen(Conn& c, int64_t now);
  void SendRequest(Conn& c);
  void Write(Conn& c);
  void Read(Conn& c);
  void OnEvent(uint64_t token, uint32_t events);
  void OnResponse(Conn& c, int64_t now);    // Record, then Continue
  void Record(const Conn& c, int64_t now);  // counts the completed response if in the window
  void Continue(Conn& c, int64_t now);      // the next request, or a new connection
  void Sweep(int64_t now);
  bool SetInterest(Conn& c, bool want_out);
  bool Counting(int64_t now) const { return now >= plan_.measure_start_ns && now < plan_.end_ns; }

  const WorkerPlan& plan_;
  const std::atomic<bool>& abort_;
  std::vector<Conn> conns_;
  int epoll_fd_ = -1;
  // One read buffer for the thread rather than one per connection: the parser is incremental,
  // so no bytes need to survive between reads, and a single buffer stays in cache.
  std::unique_ptr<char[]> read_buf_;
  WorkerResult result_;
};

// Steady-clock (CLOCK_MONOTONIC) nanoseconds, the worker's time base.
int64_t MonotonicNowNs();

}  // namespace benchlab
