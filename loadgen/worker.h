// Worker: one load-generator thread's event loop (internal to the engine). A worker owns an
// epoll fd or an io_uring (WorkerPlan::engine), its connections with their rings of in-flight
// requests, one read buffer, its histograms and counters; it shares only the read-only WorkerPlan,
// the start gate, an abort flag and the caller's stop flag, so nothing is locked or allocated per
// request. Construct, Run() on the thread that owns it, then read the result after joining.
// worker.cc holds the loop, the open-loop schedule and the accounting; worker_conn.cc the
// connections' reads and writes over epoll and what both engines share; worker_uring.cc the
// io_uring engine.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <atomic>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/histogram.h"
#include "common/status.h"
#include "loadgen/arrival.h"
#include "loadgen/http_response_parser.h"
#include "loadgen/load.h"

namespace benchlab {

class TlsClient;
class TlsStream;

// One request kind, built once: the bytes sent and how its response is checked.
struct PlannedRequest {
  std::string bytes;     // one request
  std::string repeated;  // `bytes` depth times over, so a run of them is one contiguous write
  bool head = false;
  bool check_status = false;
  std::bitset<1000> allowed_status;
  std::optional<std::string> expect_body;
};

// What every worker reads. Fixed before the first thread starts, except the instants, which the
// engine writes before it opens the start gate (release) and workers read after (acquire).
// Times are steady_clock (CLOCK_MONOTONIC) nanoseconds since its epoch.
struct WorkerPlan {
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  std::vector<PlannedRequest> requests;
  std::vector<uint32_t> cycle;  // the weighted order of request indices
  int depth = 1;
  IoEngine engine = IoEngine::kEpoll;  // resolved: never kAuto
  bool open_loop = false;
  double rate = 0;
  Arrival arrival = Arrival::kConstant;
  uint64_t seed = 1;
  int workers = 1;
  int64_t timeout_ns = 0;
  int64_t spin_ns = 0;
  uint64_t max_body = 0;                 // bytes of a response body; 0: no limit
  const TlsLoadOptions* tls = nullptr;   // https: the options; null: plain HTTP
  std::string tls_host;                  // the URL's host, for SNI and verification
  uint32_t requests_per_connection = 0;  // 0: connections are kept
  // The caller's LoadOptions::stop, or a flag never set: read relaxed once per loop iteration.
  const std::atomic<bool>* stop = nullptr;
  size_t seconds = 0;            // whole (or final partial) seconds in the measured interval
  int64_t start_ns = 0;          // the schedule's t0 and the start of warm-up
  int64_t measure_start_ns = 0;  // requests sent (scheduled) before this are warm-up
  int64_t end_ns = 0;            // no request is sent (scheduled) at or after this
};

// Per-worker share of the connections and the queue, and where to run.
struct WorkerSetup {
  int index = 0;
  int connections = 1;  // opened at start
  int max_conns = 1;    // open loop may grow to this
  size_t max_queue = 0;
  int cpu = -1;  // pin to this CPU; -1: keep the inherited affinity
};

struct WorkerResult {
  Histogram latency_us;
  Histogram latency_uncorrected_us;
  Histogram lag_us;
  std::array<uint64_t, 1000> status_counts{};  // indexed by status code (100..999)
  ErrorCounts errors;
  uint64_t requests = 0;
  uint64_t completed_in_interval = 0;  // of `requests`, before plan.end_ns
  uint64_t sent = 0;
  uint64_t scheduled = 0;
  uint64_t dropped = 0;
  uint64_t retries = 0;
  uint64_t reconnects = 0;
  uint64_t bytes_read = 0;
  std::vector<uint64_t> per_second;
  std::vector<std::string> second_histograms;  // Histogram::Serialize() of each second
  std::vector<uint64_t> mix_sent;
  SyscallCounts syscalls;
  // TLS handshakes that ended in the measured interval.
  uint64_t handshakes_full = 0;
  uint64_t handshakes_resumed = 0;
  uint64_t handshakes_failed = 0;
  Histogram handshake_us;
  std::string tls_alpn;   // the first protocol a server chose
  std::string tls_error;  // the first handshake failure
  double cpu_user_s = 0;
  double cpu_sys_s = 0;
  int peak_connections = 0;
  std::vector<int> cpus;  // the affinity the thread ran with
  bool stopped = false;   // the run ended early because *plan.stop became true
};

class Worker {
 public:
  Worker(const WorkerPlan& plan, const WorkerSetup& setup, const std::atomic<bool>& abort);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Pins the thread and creates the event loop (the epoll fd, or the ring and its buffers); call
  // on the worker's own thread before Run.
  Status Prepare();
  // Runs from plan.start_ns until plan.end_ns, then drains the interval's requests still in
  // flight (each for at most its timeout), or until abort or *plan.stop: no wait lasts longer
  // than kMaxSweepNs, so a stop closes every connection within that (result().stopped). Network
  // trouble is counted in the result, not returned.
  Status Run();
  const WorkerResult& result() const { return result_; }

 private:
  enum class Failure { kConnect, kRead, kWrite, kParse, kTimeout, kBodyTooLarge };

  // A request handed to a connection, waiting for its response.
  struct InFlight {
    int64_t intended_ns = 0;  // open loop: its slot; closed loop: when it was first sent
    int64_t sent_ns = 0;      // when its bytes were (last) written
    uint32_t request = 0;     // index into plan.requests
    bool counted = false;     // belongs to the measured interval
  };

  struct Conn {
    int fd = -1;
    uint32_t generation = 0;  // tells a stale epoll event for a closed fd from a live one
    bool connecting = false;
    bool out_armed = false;  // epoll: EPOLLOUT registered (connect in progress or a blocked write)
    bool send_queued = false;  // io_uring: a send is submitted and its completion not yet seen
    bool opened_before = false;
    bool idle_listed = false;     // open loop: on the idle stack
    InFlight* ring = nullptr;     // plan.depth slots in the worker's array
    uint32_t head = 0;            // oldest in flight
    uint32_t count = 0;           // in flight
    uint32_t written = 0;         // of `count`, fully written (from head)
    size_t partial = 0;           // bytes of the next one already written
    uint64_t response_bytes = 0;  // of the response being read
    int64_t deadline_ns = 0;      // of the connect attempt
    int64_t retry_ns = 0;         // when a failed connection may be reopened
    uint32_t served = 0;          // requests dispatched since it was opened
    HttpResponseParser parser;
    TlsStream* tls = nullptr;  // https: this slot's stream, reused across reconnects
    bool handshaking = false;  // https: connected, and the TLS handshake not yet done
    int64_t handshake_start_ns = 0;
  };

  // worker.cc: the loop, the schedule and the accounting.
  void DropQueued();  // at the very end: slots still queued were never sent
  void HandleDueSlots(int64_t now);
  Conn* TakeIdle();
  void MarkIdle(Conn& c);
  void MaybeGrow(int64_t now);
  void Dispatch(Conn& c, int64_t intended_ns);  // queues one request on the connection
  void Refill(Conn& c, int64_t now);            // the connection's next requests, then writes them
  void RecordResponse(const InFlight& f, int64_t now, int status, bool mismatch);
  void RecordLoss(const InFlight& f, Failure what, int64_t now);
  void RecordLatency(const InFlight& f, int64_t now);
  void FlushLatency();
  void CountFailure(Failure what);
  void RollSecond(int64_t now);
  void Sweep(int64_t now);
  bool Sending(int64_t now) const { return now < plan_.end_ns && !draining_; }
  // The connection still has work: new requests, its own, or queued slots.
  bool Wanted(const Conn& c, int64_t now) const {
    return Sending(now) || c.count > 0 || queue_len_ > 0;
  }
  bool Counting(int64_t now) const { return now >= plan_.measure_start_ns && now < plan_.end_ns; }
  bool Drained() const { return counted_in_flight_ == 0; }

  // worker_conn.cc: connections, over epoll, and what both engines share.
  Status Wait(int64_t wait_ns);  // one turn of the loop: wait up to wait_ns, handle what came
  void Open(Conn& c, int64_t now);
  void Close(Conn& c);
  void Fail(Conn& c, Failure what, int64_t now);
  void Reopen(Conn& c, int64_t now);
  void Connected(Conn& c, int64_t now);
  void Flush(Conn& c, int64_t now);
  void Read(Conn& c);
  // Feeds n bytes read from the connection to its parser and settles the responses they
  // complete (n == 0: the server closed it).
  void Consume(Conn& c, const char* data, size_t n, int64_t now);
  void ConsumePlain(Conn& c, const char* data, size_t n, int64_t now);  // HTTP bytes
  void Advance(Conn& c, size_t bytes);  // `bytes` more of the in-flight requests were written
  void OnEvent(uint64_t token, uint32_t events);
  bool SetInterest(Conn& c, bool want_out);
  void PrepareParser(Conn& c);  // for the response to the oldest request in flight
  void CloseGracefully(Conn& c, int64_t now);
  uint64_t Token(const Conn& c) const;
  size_t Index(const Conn& c) const { return static_cast<size_t>(&c - conns_.data()); }

  // Whether another request may go on the connection (LoadOptions::requests_per_connection).
  bool HasRoom(const Conn& c) const {
    return plan_.requests_per_connection == 0 || c.served < plan_.requests_per_connection;
  }

  // worker_tls.cc: HTTPS over either engine (docs/load.md, "HTTPS").
  Status PrepareTls();
  void StartTls(Conn& c, int64_t now);  // the TCP connection is up: send the ClientHello
  void ConsumeTls(Conn& c, const char* data, size_t n, int64_t now);
  void FinishHandshake(Conn& c, int64_t now);
  void FailTls(Conn& c, std::string_view why, int64_t now);
  void FlushTls(Conn& c, int64_t now);  // encrypts the unwritten requests, then SendTls
  void SendTls(Conn& c, int64_t now);   // writes the stream's ciphertext
  void SendTlsUring(Conn& c, int64_t now);

  // worker_uring.cc: the io_uring engine (docs/load.md, "Engines").
  struct Uring;
  struct UringDeleter {
    void operator()(Uring* u) const;
  };
  Status PrepareUring();
  Status WaitUring(int64_t wait_ns);
  void ConnectUring(Conn& c, int64_t now);
  void FlushUring(Conn& c, int64_t now);
  void SendDone(Conn& c, int res, int64_t now);
  void ArmRecv(Conn& c);
  void CloseUring(Conn& c);
  void OnCompletion(uint64_t data, int res, uint32_t flags, int64_t now);

  static constexpr size_t kReadBufferBytes = 64 * 1024;
  // Timeouts and reconnects are checked every tenth of the timeout, within these bounds; the
  // upper one also bounds every wait of the loop, so a stop is seen well within kStopLatency.
  static constexpr int64_t kMinSweepNs = 1'000'000;
  static constexpr int64_t kMaxSweepNs = 10'000'000;
  static_assert(kMaxSweepNs * 4 <= std::chrono::nanoseconds(LoadOptions::kStopLatency).count());

  const WorkerPlan& plan_;
  const WorkerSetup setup_;
  const std::atomic<bool>& abort_;
  std::vector<Conn> conns_;  // max_conns slots; the first `active_` are in use
  size_t active_ = 0;
  std::vector<InFlight> in_flight_;  // max_conns * depth
  std::vector<iovec> iov_;           // depth entries, for writing a mix's requests at once
  std::vector<uint32_t> idle_;       // open loop: connections with room, as a stack
  std::vector<int64_t> queue_;       // open loop: slots waiting for a connection (a ring)
  size_t queue_head_ = 0;
  size_t queue_len_ = 0;
  std::optional<ArrivalSchedule> schedule_;
  int64_t next_slot_ns_ = INT64_MAX;
  size_t cycle_pos_ = 0;
  uint64_t counted_in_flight_ = 0;
  int connecting_ = 0;
  int open_ = 0;
  bool draining_ = false;
  size_t second_ = 0;                   // the series' current second
  int64_t next_second_ns_ = INT64_MAX;  // when second_ ends (INT64_MAX: it is the last)
  Histogram second_latency_;
  struct LatencyRun {
    uint64_t us = 0;
    uint64_t uncorrected = 0;
    uint64_t count = 0;
  } run_;  // equal latencies not yet in the histograms
  int epoll_fd_ = -1;
  std::unique_ptr<Uring, UringDeleter> uring_;
  std::unique_ptr<TlsClient> tls_client_;
  std::vector<std::unique_ptr<TlsStream>> tls_streams_;  // one per connection slot
  std::string tls_plain_;  // plaintext of one read, reused (its capacity stays)
  // One read buffer for the thread rather than one per connection: the parser is incremental,
  // so no bytes need to survive between reads, and a single buffer stays in cache.
  std::unique_ptr<char[]> read_buf_;
  WorkerResult result_;
};

// Steady-clock (CLOCK_MONOTONIC) nanoseconds, the worker's time base.
int64_t MonotonicNowNs();

}  // namespace benchlab
