// GenerateLoad: validates the options, resolves the target once, builds the requests, starts one
// Worker per thread and lets them all go at one instant once every one is pinned and ready,
// then merges what they counted. The calling thread only sleeps and marks instants.
#include <netdb.h>
#include <sched.h>
#include <strings.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <latch>
#include <memory>
#include <system_error>
#include <thread>

#include "loadgen/load.h"
#include "loadgen/request.h"
#include "loadgen/request_mix.h"
#include "loadgen/worker.h"

namespace benchlab {

namespace {

using std::chrono::nanoseconds;

// Headers sent with a mix entry: its own, then the run's that it does not name (all of them,
// repeated names included).
HeaderList MergedHeaders(const HeaderList& own, const HeaderList& run) {
  HeaderList headers = own;
  for (const auto& [name, value] : run) {
    // A named capture: clang 14 cannot capture a structured binding.
    const bool overridden = std::any_of(own.begin(), own.end(), [&name_ = name](const auto& h) {
      return strcasecmp(h.first.c_str(), name_.c_str()) == 0;
    });
    if (!overridden) headers.emplace_back(name, value);
  }
  return headers;
}

// One request as it will be sent: one well-formed head (no CR/LF to split it), a body framed
// by its length alone, and status expectations that are codes.
Status ValidateRequest(const std::string& where, const std::string& method, const std::string& path,
                       const HeaderList& headers, const std::string& body,
                       const std::vector<int>& expect_status) {
  BENCHLAB_RETURN_IF_ERROR(CheckRequestParts(where, method, path, headers));
  BENCHLAB_RETURN_IF_ERROR(CheckRequestFraming(where, headers, body));
  for (int code : expect_status) {
    if (code < 100 || code > 999) {
      return Status::InvalidArgument(where + ": expected status " + std::to_string(code) +
                                     " is not 100-999");
    }
  }
  return Status::Ok();
}

Status Validate(const LoadOptions& o) {
  auto positive = [](const char* what, int64_t v) {
    return v >= 1 ? Status::Ok()
                  : Status::InvalidArgument(std::string(what) + " must be at least 1, got " +
                                            std::to_string(v));
  };
  BENCHLAB_RETURN_IF_ERROR(positive("connections", o.connections));
  BENCHLAB_RETURN_IF_ERROR(positive("threads", o.threads));
  BENCHLAB_RETURN_IF_ERROR(positive("depth", o.depth));
  if (o.depth > LoadOptions::kMaxDepth) {
    return Status::InvalidArgument("depth must be at most " +
                                   std::to_string(LoadOptions::kMaxDepth) + ", got " +
                                   std::to_string(o.depth));
  }
  if (o.duration <= nanoseconds::zero()) return Status::InvalidArgument("duration must be > 0");
  if (o.warmup < nanoseconds::zero()) return Status::InvalidArgument("warmup must be >= 0");
  if (o.timeout <= nanoseconds::zero()) return Status::InvalidArgument("timeout must be > 0");
  if (!(o.rate >= 0) || !std::isfinite(o.rate) || o.rate > 1e9) {
    return Status::InvalidArgument("rate must be between 0 (closed loop) and 1e9 requests/s");
  }
  if (o.max_conns != 0 && o.max_conns < o.connections) {
    return Status::InvalidArgument("max_conns (" + std::to_string(o.max_conns) +
                                   ") must be at least connections (" +
                                   std::to_string(o.connections) + ")");
  }
  if (o.max_queue < 0) return Status::InvalidArgument("max_queue must be >= 0");
  if (o.spin < nanoseconds::zero() || o.spin > std::chrono::seconds(1)) {
    return Status::InvalidArgument("spin must be between 0 and 1s");
  }
  if (o.host.empty()) return Status::InvalidArgument("host is empty");
  if (o.tls) BENCHLAB_RETURN_IF_ERROR(ValidateTlsOptions(*o.tls));
  BENCHLAB_RETURN_IF_ERROR(
      ValidateRequest("request", o.method, o.path, o.headers, o.body, o.expect_status));
  uint64_t weights = 0;
  for (size_t i = 0; i < o.mix.size(); ++i) {
    const MixRequest& m = o.mix[i];
    const std::string where = "mix entry " + std::to_string(i + 1);
    BENCHLAB_RETURN_IF_ERROR(ValidateRequest(
        where, m.method, m.path, MergedHeaders(m.headers, o.headers), m.body, m.expect_status));
    if (m.weight < 1) return Status::InvalidArgument(where + ": weight must be at least 1");
    weights += m.weight;
  }
  if (weights > kMaxMixWeightSum) {
    return Status::InvalidArgument("mix weights add up to more than " +
                                   std::to_string(kMaxMixWeightSum));
  }
  for (int cpu : o.cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
      return Status::InvalidArgument("cpu " + std::to_string(cpu) + " is out of range");
    }
  }
  return Status::Ok();
}

Status Resolve(const std::string& host, uint16_t port, WorkerPlan& plan) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addrs = nullptr;
  const std::string port_text = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), port_text.c_str(), &hints, &addrs); rc != 0) {
    return Status::Unavailable("resolve " + host + ": " + ::gai_strerror(rc));
  }
  std::memcpy(&plan.addr, addrs->ai_addr, addrs->ai_addrlen);
  plan.addr_len = addrs->ai_addrlen;
  ::freeaddrinfo(addrs);
  return Status::Ok();
}

// The request kinds and their weighted order. Without a mix, the one request of the options.
void PlanRequests(const LoadOptions& o, WorkerPlan& plan) {
  std::vector<MixRequest> mix = o.mix;
  if (mix.empty()) {
    MixRequest only;
    only.method = o.method;
    only.path = o.path;
    only.body = o.body;
    mix.push_back(std::move(only));
  }
  std::vector<uint32_t> weights;
  for (const MixRequest& m : mix) {
    const HeaderList headers = MergedHeaders(m.headers, o.headers);
    PlannedRequest p;
    p.bytes = BuildRequest({.method = m.method,
                            .path = m.path,
                            .host = o.host,
                            .port = o.port,
                            .headers = &headers,
                            .body = m.body,
                            .connection_close = false});
    if (mix.size() == 1) {
      p.repeated.reserve(p.bytes.size() * static_cast<size_t>(o.depth));
      for (int i = 0; i < o.depth; ++i) p.repeated += p.bytes;
    }
    p.head = m.method == "HEAD";
    const std::vector<int>& codes = m.expect_status.empty() ? o.expect_status : m.expect_status;
    p.check_status = !codes.empty();
    for (int code : codes) p.allowed_status.set(static_cast<size_t>(code));
    p.expect_body = m.expect_body ? m.expect_body : o.expect_body;
    plan.requests.push_back(std::move(p));
    weights.push_back(m.weight);
  }
  plan.cycle = WeightedCycle(weights);
}

void MergeInto(LoadResult& out, uint64_t& completed, const WorkerResult& w) {
  out.requests += w.requests;
  completed += w.completed_in_interval;
  out.latency_us.Merge(w.latency_us);
  out.latency_uncorrected_us.Merge(w.latency_uncorrected_us);
  out.generator_lag_us.Merge(w.lag_us);
  for (size_t status = 0; status < w.status_counts.size(); ++status) {
    const uint64_t n = w.status_counts[status];
    if (n == 0) continue;
    out.status_counts[static_cast<int>(status)] += n;
    if (status < 200 || status > 299) out.non_2xx += n;
  }
  out.errors.connect += w.errors.connect;
  out.errors.read += w.errors.read;
  out.errors.write += w.errors.write;
  out.errors.timeout += w.errors.timeout;
  out.errors.parse += w.errors.parse;
  out.errors.mismatch += w.errors.mismatch;
  out.errors.body_too_large += w.errors.body_too_large;
  out.sent += w.sent;
  out.scheduled += w.scheduled;
  out.dropped += w.dropped;
  out.retries += w.retries;
  out.reconnects += w.reconnects;
  out.bytes_read += w.bytes_read;
  out.thread_cpu_s.push_back(w.cpu_user_s + w.cpu_sys_s);
  out.cpu_user_s += w.cpu_user_s;
  out.cpu_sys_s += w.cpu_sys_s;
  out.syscalls.reads += w.syscalls.reads;
  out.syscalls.writes += w.syscalls.writes;
  out.syscalls.epoll_waits += w.syscalls.epoll_waits;
  out.syscalls.epoll_ctls += w.syscalls.epoll_ctls;
  out.syscalls.ring_enters += w.syscalls.ring_enters;
  out.tls.full += w.handshakes_full;
  out.tls.resumed += w.handshakes_resumed;
  out.tls.failed += w.handshakes_failed;
  out.tls.handshake_us.Merge(w.handshake_us);
  if (out.tls.alpn.empty()) out.tls.alpn = w.tls_alpn;
  if (out.tls.first_error.empty()) out.tls.first_error = w.tls_error;
  out.peak_connections += w.peak_connections;
  out.worker_cpus.push_back(w.cpus);
  if (out.mix_sent.size() < w.mix_sent.size()) out.mix_sent.resize(w.mix_sent.size(), 0);
  for (size_t i = 0; i < w.mix_sent.size(); ++i) out.mix_sent[i] += w.mix_sent[i];
  for (size_t i = 0; i < w.per_second.size() && i < out.per_second_requests.size(); ++i) {
    out.per_second_requests[i] += w.per_second[i];
  }
}

// Each second's latency over all workers, merged exactly, then its p99.
void BuildSeries(LoadResult& out, const std::vector<std::unique_ptr<Worker>>& workers) {
  for (size_t s = 0; s < out.per_second_requests.size(); ++s) {
    Histogram second;
    for (const auto& w : workers) {
      const std::string& text = w->result().second_histograms[s];
      if (text.empty()) continue;
      Result<Histogram> h = Histogram::Deserialize(text);
      if (h.ok()) second.Merge(*h);
    }
    out.series.push_back({.t = static_cast<uint32_t>(s),
                          .requests = out.per_second_requests[s],
                          .p99_us = second.ValueAtPercentile(99)});
  }
}

bool Stopped(const std::atomic<bool>& stop) { return stop.load(std::memory_order_relaxed); }

// Sleeps until `until`, looking at the stop flag at least every kStopPoll. False when stopped.
bool SleepUnlessStopped(std::chrono::steady_clock::time_point until,
                        const std::atomic<bool>& stop) {
  constexpr auto kStopPoll = LoadOptions::kStopLatency / 5;
  while (!Stopped(stop)) {
    // Direct, not Clock: the workers' clock, on the hot path (docs/load.md, "Threads, CPUs").
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(until - now, kStopPoll));
  }
  return false;
}

// "load stopped by its caller 312 ms into the run, during the warm-up".
Status CancelledStatus(std::chrono::steady_clock::time_point start,
                       std::chrono::steady_clock::time_point measure_start,
                       std::chrono::steady_clock::time_point end,
                       std::chrono::steady_clock::time_point stopped) {
  const char* phase = stopped < measure_start ? "the warm-up"
                      : stopped < end         ? "the measured interval"
                                              : "the drain after the measured interval";
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(stopped - start).count();
  return Status::Cancelled("load stopped by its caller " + std::to_string(ms) +
                           " ms into the run, during " + phase + "; nothing is reported");
}

}  // namespace

const char* IoEngineName(IoEngine engine) {
  switch (engine) {
    case IoEngine::kAuto:
      return "auto";
    case IoEngine::kIoUring:
      return "io_uring";
    case IoEngine::kEpoll:
      return "epoll";
  }
  return "auto";
}

std::optional<IoEngine> ParseIoEngine(std::string_view text) {
  for (IoEngine e : {IoEngine::kAuto, IoEngine::kIoUring, IoEngine::kEpoll}) {
    if (text == IoEngineName(e)) return e;
  }
  return std::nullopt;
}

namespace {

// kAuto becomes io_uring where this kernel allows it, else epoll with the reason in `note`.
Result<IoEngine> ResolveEngine(IoEngine asked, std::string& note) {
  if (asked == IoEngine::kEpoll) return asked;
  const std::string why = IoUringUnavailableReason();
  if (why.empty()) return IoEngine::kIoUring;
  if (asked == IoEngine::kIoUring) {
    return Status::Unavailable("engine io_uring is not available here: " + why +
                               " (engine = \"auto\" falls back to epoll)");
  }
  note = "io_uring not available (" + why + "); epoll used";
  return IoEngine::kEpoll;
}

}  // namespace

Result<LoadResult> GenerateLoad(const LoadOptions& options, const MeasureMarkFn& on_mark) {
  BENCHLAB_RETURN_IF_ERROR(Validate(options));
  static const std::atomic<bool> kNeverStop{false};
  const std::atomic<bool>& stop = options.stop != nullptr ? *options.stop : kNeverStop;
  if (Stopped(stop)) return Status::Cancelled("load stopped by its caller before it started");
  WorkerPlan plan;
  BENCHLAB_RETURN_IF_ERROR(Resolve(options.host, options.port, plan));
  PlanRequests(options, plan);
  std::string engine_note;
  BENCHLAB_ASSIGN_OR_RETURN(plan.engine, ResolveEngine(options.engine, engine_note));
  const int threads = std::min(options.threads, options.connections);
  plan.depth = options.depth;
  plan.open_loop = options.rate > 0;
  plan.rate = options.rate;
  plan.arrival = options.arrival;
  plan.seed = options.seed;
  plan.workers = threads;
  plan.timeout_ns = options.timeout.count();
  plan.spin_ns = plan.open_loop ? options.spin.count() : 0;
  plan.max_body = options.max_body;
  if (options.tls) {
    plan.tls = &*options.tls;
    plan.tls_host = options.host;
  }
  plan.requests_per_connection = options.requests_per_connection;
  plan.stop = &stop;
  plan.seconds = static_cast<size_t>((options.duration.count() + 999'999'999) / 1'000'000'000);

  const int max_conns = std::max(options.max_conns, options.connections);
  int64_t queue = options.max_queue;
  if (queue == 0) queue = static_cast<int64_t>(std::min(options.rate, 16e6));
  std::atomic<bool> abort{false};
  std::atomic<bool> go{false};
  std::latch ready(threads);
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<Status> statuses(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) {
    auto share = [&](int64_t total) { return total / threads + (i < total % threads ? 1 : 0); };
    WorkerSetup setup;
    setup.index = i;
    setup.connections = static_cast<int>(share(options.connections));
    setup.max_conns = plan.open_loop ? static_cast<int>(share(max_conns)) : setup.connections;
    setup.max_queue = static_cast<size_t>(std::max<int64_t>(share(queue), 16));
    setup.cpu =
        options.cpus.empty() ? -1 : options.cpus[static_cast<size_t>(i) % options.cpus.size()];
    workers.push_back(std::make_unique<Worker>(plan, setup, abort));
  }
  std::vector<std::thread> pool;
  Status setup;
  for (int i = 0; i < threads; ++i) {
    Worker* w = workers[static_cast<size_t>(i)].get();
    Status* st = &statuses[static_cast<size_t>(i)];
    try {
      pool.emplace_back([w, st, &ready, &go, &abort] {
        *st = w->Prepare();
        ready.count_down();
        go.wait(false, std::memory_order_acquire);
        if (st->ok() && !abort.load()) *st = w->Run();
      });
    } catch (const std::system_error& e) {  // start-up only: the kernel refused a thread
      setup = Status::Unavailable(std::string("start worker thread: ") + e.what());
      for (int j = i; j < threads; ++j) ready.count_down();
      break;
    }
  }
  ready.wait();
  for (const Status& st : statuses) {
    if (setup.ok() && !st.ok()) setup = st;
  }

  // The clock starts only now that every worker is pinned and ready.
  // Direct, not Clock: the workers' clock, on the hot path (docs/load.md, "Threads, CPUs").
  const auto start = std::chrono::steady_clock::now();
  const auto measure_start = start + options.warmup;
  const auto end = measure_start + options.duration;
  plan.start_ns = std::chrono::duration_cast<nanoseconds>(start.time_since_epoch()).count();
  plan.measure_start_ns = plan.start_ns + options.warmup.count();
  plan.end_ns = plan.measure_start_ns + options.duration.count();
  if (!setup.ok()) abort.store(true);
  go.store(true, std::memory_order_release);
  go.notify_all();

  LoadResult result;
  bool stopped = false;
  if (setup.ok()) {
    stopped = !SleepUnlessStopped(measure_start, stop);
    if (!stopped) {
      // Direct, not Clock: the workers' clock, on the hot path (docs/load.md, "Threads, CPUs").
      result.measure_start = std::chrono::system_clock::now();
      if (on_mark) on_mark(true);
      stopped = !SleepUnlessStopped(end, stop);
    }
    if (!stopped) {
      // Direct, not Clock: the workers' clock, on the hot path (docs/load.md, "Threads, CPUs").
      result.measure_end = std::chrono::system_clock::now();
      if (on_mark) on_mark(false);
    }
  }
  // Seen here, the stop happened just now; seen by the workers only (in the drain), it
  // happened within their kMaxSweepNs of the join's end.
  // Direct, not Clock: the workers' clock, on the hot path (docs/load.md, "Threads, CPUs").
  auto stopped_at = std::chrono::steady_clock::now();
  for (std::thread& t : pool) t.join();
  BENCHLAB_RETURN_IF_ERROR(setup);
  for (const Status& st : statuses) BENCHLAB_RETURN_IF_ERROR(st);
  if (!stopped) {
    // Direct, not Clock: the workers' clock, on the hot path (docs/load.md, "Threads, CPUs").
    stopped_at = std::chrono::steady_clock::now();
    for (const auto& w : workers) stopped |= w->result().stopped;
  }
  if (stopped) return CancelledStatus(start, measure_start, end, stopped_at);

  // Workers count the requests sent (scheduled) inside [measure_start, end), so the interval
  // they measured is exactly the planned one, whenever this thread happened to wake.
  result.duration_s = std::chrono::duration<double>(options.duration).count();
  result.open_loop = plan.open_loop;
  result.engine = plan.engine;
  result.engine_note = std::move(engine_note);
  result.rate = options.rate;
  result.per_second_requests.assign(plan.seconds, 0);
  uint64_t completed = 0;
  for (const auto& w : workers) MergeInto(result, completed, w->result());
  BuildSeries(result, workers);
  if (options.tls) {
    result.tls.on = true;
    result.tls.version = options.tls->version;
    result.tls.per_s =
        static_cast<double>(result.tls.full + result.tls.resumed) / result.duration_s;
  }
  result.rps = static_cast<double>(result.requests) / result.duration_s;
  result.throughput_rps = static_cast<double>(completed) / result.duration_s;
  bool busy = false;
  for (double cpu : result.thread_cpu_s) busy |= cpu >= LoadResult::kBusyBound * result.duration_s;
  result.generator_bound = busy || (plan.open_loop && result.generator_lag_us.ValueAtPercentile(
                                                          99) > LoadResult::kGeneratorLagBoundUs);
  return result;
}

}  // namespace benchlab
