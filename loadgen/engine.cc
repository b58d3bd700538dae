// RunLoad: validates the options, resolves the target once, plans the window, runs one Worker
// per thread and merges what they counted. The calling thread only sleeps and marks instants.
#include <netdb.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <system_error>
#include <thread>

#include "loadgen/load.h"
#include "loadgen/request.h"
#include "loadgen/worker.h"

namespace benchlab {

namespace {

using std::chrono::nanoseconds;

Status Validate(const LoadOptions& o) {
  if (o.connections < 1) {
    return Status::InvalidArgument("connections must be at least 1, got " +
                                   std::to_string(o.connections));
  }
  if (o.threads < 1) {
    return Status::InvalidArgument("threads must be at least 1, got " + std::to_string(o.threads));
  }
  if (o.duration <= nanoseconds::zero()) return Status::InvalidArgument("duration must be > 0");
  if (o.warmup < nanoseconds::zero()) return Status::InvalidArgument("warmup must be >= 0");
  if (o.timeout <= nanoseconds::zero()) return Status::InvalidArgument("timeout must be > 0");
  if (o.host.empty()) return Status::InvalidArgument("host is empty");
  if (o.method.empty() || o.method.find_first_of(" \r\n") != std::string::npos) {
    return Status::InvalidArgument("method must be one token, got \"" + o.method + "\"");
  }
  if (o.path.empty() || o.path.find_first_of(" \r\n") != std::string::npos) {
    return Status::InvalidArgument("path must be non-empty without spaces, got \"" + o.path + "\"");
  }
  for (const auto& [name, value] : o.headers) {
    if (name.empty() || name.find_first_of(" :\r\n") != std::string::npos ||
        value.find_first_of("\r\n") != std::string::npos) {
      return Status::InvalidArgument("bad request header \"" + name + ": " + value + "\"");
    }
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

Status Pin(std::thread& thread, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (int rc = ::pthread_setaffinity_np(thread.native_handle(), sizeof(set), &set); rc != 0) {
    return Status::InvalidArgument("pin worker thread to CPU " + std::to_string(cpu) + ": " +
                                   std::strerror(rc));
  }
  return Status::Ok();
}

void MergeInto(LoadResult& out, const WorkerResult& w) {
  out.requests += w.requests;
  out.latency_us.Merge(w.latency_us);
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
  out.reconnects += w.reconnects;
  out.bytes_read += w.bytes_read;
  out.thread_cpu_s.push_back(w.cpu_s);
  if (out.per_second_requests.size() < w.per_second.size()) {
    out.per_second_requests.resize(w.per_second.size(), 0);
  }
  for (size_t i = 0; i < w.per_second.size(); ++i) out.per_second_requests[i] += w.per_second[i];
}

}  // namespace

Result<LoadResult> RunLoad(const LoadOptions& options, const MeasureMarkFn& on_mark) {
  BENCHLAB_RETURN_IF_ERROR(Validate(options));
  WorkerPlan plan;
  BENCHLAB_RETURN_IF_ERROR(Resolve(options.host, options.port, plan));
  plan.request = BuildRequest({.method = options.method,
                               .path = options.path,
                               .host = options.host,
                               .port = options.port,
                               .headers = &options.headers,
                               .body = options.body,
                               .connection_close = false});
  plan.head_request = options.method == "HEAD";
  plan.timeout_ns = options.timeout.count();
  plan.seconds = static_cast<size_t>((options.duration.count() + 999'999'999) / 1'000'000'000);

  const int threads = std::min(options.threads, options.connections);
  const auto start = std::chrono::steady_clock::now();
  const auto measure_start = start + options.warmup;
  const auto end = measure_start + options.duration;
  plan.measure_start_ns =
      std::chrono::duration_cast<nanoseconds>(measure_start.time_since_epoch()).count();
  plan.end_ns = plan.measure_start_ns + options.duration.count();

  std::atomic<bool> abort{false};
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<Status> statuses(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) {
    const int conns = options.connections / threads + (i < options.connections % threads ? 1 : 0);
    workers.push_back(std::make_unique<Worker>(plan, conns, abort));
  }
  std::vector<std::thread> pool;
  Status setup;
  for (int i = 0; i < threads && setup.ok(); ++i) {
    Worker* w = workers[static_cast<size_t>(i)].get();
    Status* st = &statuses[static_cast<size_t>(i)];
    try {
      pool.emplace_back([w, st] { *st = w->Run(); });
    } catch (const std::system_error& e) {  // start-up only: the kernel refused a thread
      setup = Status::Unavailable(std::string("start worker thread: ") + e.what());
      break;
    }
    if (!options.cpus.empty()) {
      setup = Pin(pool.back(), options.cpus[static_cast<size_t>(i) % options.cpus.size()]);
    }
  }

  LoadResult result;
  if (setup.ok()) {
    std::this_thread::sleep_until(measure_start);
    result.measure_start = std::chrono::system_clock::now();
    if (on_mark) on_mark(true);
    std::this_thread::sleep_until(end);
    result.measure_end = std::chrono::system_clock::now();
    if (on_mark) on_mark(false);
  } else {
    abort.store(true);
  }
  for (std::thread& t : pool) t.join();
  BENCHLAB_RETURN_IF_ERROR(setup);
  for (const Status& st : statuses) BENCHLAB_RETURN_IF_ERROR(st);

  // Workers count only completions stamped inside [measure_start, end), so the interval they
  // measured is exactly the planned one, whenever this thread happened to wake.
  result.duration_s = std::chrono::duration<double>(options.duration).count();
  result.per_second_requests.assign(plan.seconds, 0);
  for (const auto& w : workers) MergeInto(result, w->result());
  result.rps = static_cast<double>(result.requests) / result.duration_s;
  return result;
}

}  // namespace benchlab
