// The load generator's engine: HTTP/1.1 keep-alive load over epoll, closed loop (-c N, each
// connection sends its next request when a response completes) or open loop (--rate R, requests
// scheduled at t0 + k/R or by a Poisson process, latency measured from the intended send time).
// Each worker thread owns its epoll loop, connections, buffers, prebuilt requests and
// histograms; nothing is shared, locked or allocated per request. Results merge when the window
// ends. GenerateLoad blocks the calling thread for warmup + duration (plus the drain of requests
// still in flight, at most one timeout), or until LoadOptions::stop, and may be called from any
// thread. docs/load.md is the reference for every option and output.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/histogram.h"
#include "common/status.h"

namespace benchlab {

enum class Arrival { kConstant, kPoisson };

// How the workers do their I/O (docs/load.md, "Engines"). io_uring: sends batched into one
// io_uring_enter per loop turn, responses read by a multishot receive into a ring of provided
// buffers. epoll: one send and one recv call per request and an epoll_pwait2 per turn. Auto:
// io_uring where the kernel allows it, else epoll, with the reason in LoadResult::engine_note.
enum class IoEngine { kAuto, kIoUring, kEpoll };

// "auto", "io_uring", "epoll".
const char* IoEngineName(IoEngine engine);
// The inverse of IoEngineName; nullopt for any other text.
std::optional<IoEngine> ParseIoEngine(std::string_view text);

// Empty when this kernel gives a worker what the io_uring engine needs (a ring, a provided-buffer
// ring, multishot receive); else why not, e.g. "io_uring_queue_init: Operation not permitted"
// (a seccomp profile or kernel.io_uring_disabled refusing it).
std::string IoUringUnavailableReason();

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// HTTPS (docs/load.md, "HTTPS"): set for an https:// URL. Each connection makes a TLS handshake
// once its TCP connection is up; requests go only after it, and the handshake is counted and
// timed apart from them (LoadResult::tls).
struct TlsLoadOptions {
  // The share of new connections that resume the worker's newest session (session tickets);
  // the rest make a full handshake. A worker's first connections are full: it has no session.
  double resumption = 1.0;
  std::string version = "1.3";                   // "1.3" or "1.2": the only version offered
  std::vector<std::string> alpn = {"http/1.1"};  // offered in order; empty: no ALPN
  bool verify = true;       // check the chain and that the certificate names server_name
  std::string ca_file;      // verify against this PEM bundle; empty: ca_pem, else the system's
  std::string ca_pem;       // verify against these PEM certificates (a target's own CA)
  std::string server_name;  // SNI and the name verified; empty: the URL's host
};

// Checks the options' values: InvalidArgument naming the field ("tls.version: ...").
Status ValidateTlsOptions(const TlsLoadOptions& options);

// One weighted request of a request mix (see ParseRequestMix in loadgen/request_mix.h).
struct MixRequest {
  std::string method = "GET";
  std::string path = "/";
  HeaderList headers;  // added after LoadOptions::headers; same-named ones here win
  std::string body;
  uint32_t weight = 1;
  std::vector<int> expect_status;          // empty: LoadOptions::expect_status applies
  std::optional<std::string> expect_body;  // unset: LoadOptions::expect_body applies
};

struct LoadOptions {
  std::string host = "127.0.0.1";  // an IPv4/IPv6 literal or a name resolved once at start
  uint16_t port = 80;
  std::string method = "GET";
  std::string path = "/";
  HeaderList headers;  // extra request headers, on every request
  std::string body;
  int connections = 1;  // total, spread over threads (open loop: those opened at start)
  int threads = 1;
  // Worker threads pinned round-robin, one CPU each; empty: every worker keeps the affinity of
  // the calling thread (as taskset set it) and never runs outside it.
  std::vector<int> cpus;
  std::chrono::nanoseconds warmup{0};
  std::chrono::nanoseconds duration{std::chrono::seconds(1)};
  std::chrono::nanoseconds timeout{std::chrono::seconds(2)};  // per request, and per connect

  int depth = 1;  // requests in flight per connection (HTTP/1.1 pipelining), 1..kMaxDepth
  // Open loop when > 0: requests per second over all threads, on the `arrival` schedule.
  double rate = 0;
  Arrival arrival = Arrival::kConstant;
  uint64_t seed = 1;  // of the Poisson schedule
  int max_conns = 0;  // open loop: connections may grow to this many; 0 means `connections`
  // Open loop: slots waiting for a free connection, over all threads; a slot due when the queue
  // is full is dropped (and counted). 0 means one second of slots (at least 16 per thread).
  int64_t max_queue = 0;
  // Open loop: within this much of the next slot the worker polls instead of sleeping, trading
  // CPU for punctuality. 0: it always sleeps, in epoll_pwait2 with a nanosecond timeout.
  std::chrono::nanoseconds spin{0};
  // kIoUring fails the run (Unavailable, with why) where the kernel refuses io_uring; kAuto
  // falls back to epoll.
  IoEngine engine = IoEngine::kAuto;
  // Set for https:// (ParseUrlInto sets the default options); unset: plain HTTP.
  std::optional<TlsLoadOptions> tls;
  // A connection is closed and a new one opened once this many requests were sent on it and
  // answered, so connects (and TLS handshakes) are part of the load at rps / N per second.
  // 0: connections are kept for the whole run.
  uint32_t requests_per_connection = 0;

  // When non-empty, requests are drawn from the mix by weight instead of method/path/body.
  std::vector<MixRequest> mix;
  // Every response is checked (a failed check counts errors.mismatch): its status must be one of
  // these (empty: any status), and its decoded body must equal expect_body when set.
  std::vector<int> expect_status;
  std::optional<std::string> expect_body;
  // A response whose body is longer than this is not read further: it counts as
  // errors.body_too_large and its connection is closed, so memory stays flat whatever a server
  // sends (docs/security.md). 0: no limit.
  uint64_t max_body = kDefaultMaxBody;
  // When set, the run ends early once *stop is true (the caller went away or its deadline
  // passed), in warm-up, measurement or drain: workers close their connections within
  // kStopLatency, and GenerateLoad joins them and returns Status::Cancelled (no partial result).
  // Read with relaxed loads; the caller owns the flag and keeps it alive during GenerateLoad.
  const std::atomic<bool>* stop = nullptr;

  static constexpr int kMaxDepth = 1024;
  static constexpr uint64_t kDefaultMaxBody = 16ull << 20;
  static constexpr std::chrono::milliseconds kStopLatency{50};
};

struct ErrorCounts {
  uint64_t connect = 0;         // connection attempts that failed or timed out
  uint64_t read = 0;            // requests lost to a read error or a close before their response
  uint64_t write = 0;           // requests lost to a write error
  uint64_t timeout = 0;         // requests without a response after --timeout (latency recorded)
  uint64_t parse = 0;           // requests lost to a malformed response
  uint64_t mismatch = 0;        // responses that failed --expect-status / --expect-body
  uint64_t body_too_large = 0;  // requests lost to a body over LoadOptions::max_body
  // Requests sent that never got a complete response: sent == requests + Failed() after a run.
  uint64_t Failed() const { return read + write + timeout + parse + body_too_large; }
  uint64_t Total() const { return connect + Failed() + mismatch; }
};

// One second of the measured interval, by completion time (the drain counts in the last one).
// Not "SeriesPoint": that is a campaign of a series (analysis/changepoint.h), and two classes of
// one name in one namespace break the one-definition rule in the binary that links both.
struct SecondPoint {
  uint32_t t = 0;  // seconds since the measured interval began
  uint64_t requests = 0;
  uint64_t p99_us = 0;  // of latency_us in that second (timed-out requests included)
};

struct SyscallCounts {
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t epoll_waits = 0;
  uint64_t epoll_ctls = 0;
  uint64_t ring_enters = 0;  // io_uring: io_uring_enter calls (each submits and reaps a batch)
};

// HTTPS handshakes of the measured interval (those that ended in it), apart from requests.
struct TlsFigures {
  bool on = false;       // the run was over TLS
  std::string version;   // the version offered: "1.3" or "1.2"
  uint64_t full = 0;     // handshakes that made a new session
  uint64_t resumed = 0;  // handshakes that resumed the worker's session (a ticket)
  uint64_t failed = 0;   // handshakes refused or broken (also in errors.connect)
  double per_s = 0;      // (full + resumed) / duration_s
  // From the TCP connection's establishment to the handshake's end, as the client saw it.
  Histogram handshake_us;
  std::string alpn;         // the protocol the server chose ("" when it chose none)
  std::string first_error;  // of the first failed handshake, e.g. "certificate verify failed"
};

struct LoadResult {
  // Over the measured interval only (warm-up excluded). A request belongs to the interval when
  // it was sent (closed loop) or scheduled (open loop) inside it; its outcome counts even if it
  // arrives after the interval ended, while the workers drain.
  uint64_t requests = 0;  // completed responses, any status
  double duration_s = 0;  // the measured interval
  double rps = 0;         // requests / duration_s
  // Responses completed before the interval ended, per second of it: the throughput the server
  // delivered. In open loop, below `rate` means the server (or the generator) fell behind.
  double throughput_rps = 0;
  // Closed loop: send to complete. Open loop: intended send time to complete (corrected).
  // Timed-out requests are recorded too, with their latency when abandoned.
  Histogram latency_us;
  std::map<int, uint64_t> status_counts;
  ErrorCounts errors;
  uint64_t non_2xx = 0;
  uint64_t reconnects = 0;
  uint64_t bytes_read = 0;                    // of the responses counted in `requests`
  std::vector<double> thread_cpu_s;           // CPU (user+sys) of each worker over the interval
  std::vector<uint64_t> per_second_requests;  // responses completed in each second (= series)
  // Wall-clock instants of the measured interval's start and end (for alignment).
  std::chrono::system_clock::time_point measure_start;
  std::chrono::system_clock::time_point measure_end;

  bool open_loop = false;
  double rate = 0;         // requested (open loop)
  uint64_t sent = 0;       // requests of the interval handed to a connection
  uint64_t scheduled = 0;  // open loop: slots of the interval (= sent + dropped)
  uint64_t dropped = 0;    // open loop: slots never sent (queue full, or still queued at end)
  uint64_t retries = 0;    // pipelined requests re-sent after the server closed
  Histogram latency_uncorrected_us;  // open loop: actual send to complete
  Histogram generator_lag_us;        // open loop: how late the generator handled each slot
  // The generator, not the server, limited the run: in open loop its lag p99 exceeded
  // kGeneratorLagBoundUs; in either loop a worker thread was busy for kBusyBound of the interval.
  bool generator_bound = false;
  double cpu_user_s = 0;  // all workers, over the interval and the drain
  double cpu_sys_s = 0;
  std::vector<SecondPoint> series;
  SyscallCounts syscalls;                     // whole run, warm-up included
  int peak_connections = 0;                   // the sum of each thread's most open at once
  std::vector<std::vector<int>> worker_cpus;  // each worker's affinity, as the worker saw it
  std::vector<uint64_t> mix_sent;             // requests sent per mix entry (or one entry)
  IoEngine engine = IoEngine::kEpoll;         // the engine the workers ran (never kAuto)
  std::string engine_note;                    // auto: why io_uring was not used; else empty
  TlsFigures tls;

  static constexpr uint64_t kGeneratorLagBoundUs = 1000;
  static constexpr double kBusyBound = 0.95;
};

// Called once, from a worker-independent thread, at the instant warm-up ends and the measured
// interval begins (and again with measuring=false when it ends; not when a stop cut it short).
using MeasureMarkFn = std::function<void(bool measuring)>;

// Before any connection is opened, options are checked: InvalidArgument for a bad value, or a
// method, path, header or body framing that CheckRequestParts / CheckRequestFraming refuse (for
// the plain request and each mix entry, named "request" or "mix entry N").
Result<LoadResult> GenerateLoad(const LoadOptions& options, const MeasureMarkFn& on_mark = {});

// Human output in the spirit of wrk's.
std::string FormatLoadResult(const LoadOptions& options, const LoadResult& result);
// The JSON record documented in docs/load.md ("requests", "duration_s", "rps", "latency_us",
// "latency_uncorrected_us" in open loop, "errors", "status", "dropped", "generator_bound", "cpu",
// "series", and more).
std::string LoadResultToJson(const LoadResult& result);

// "http[s]://host[:port]/path?query" into options.host/port/path (port 80 or 443 by default).
// https:// sets options.tls (to the defaults when it was unset); http:// clears it.
Status ParseUrlInto(const std::string& url, LoadOptions& options);

}  // namespace benchlab
