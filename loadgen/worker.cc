#include "loadgen/worker.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace benchlab {

namespace {

constexpr size_t kReadBufferBytes = 64 * 1024;
constexpr int kMaxEvents = 256;
// Timeouts and reconnects are checked this often, so the loop never sleeps longer than this.
constexpr int64_t kSweepNs = 10'000'000;
// A connection that failed waits this long before reopening, so a dead server costs a few
// syscalls per connection every 10 ms instead of a busy loop.
constexpr int64_t kRetryBackoffNs = 10'000'000;

double ThreadCpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int64_t MonotonicNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Worker::Worker(const WorkerPlan& plan, int connections, const std::atomic<bool>& abort)
    : plan_(plan),
      abort_(abort),
      conns_(static_cast<size_t>(connections)),
      read_buf_(new char[kReadBufferBytes]) {
  result_.per_second.assign(plan.seconds, 0);
  for (Conn& c : conns_) c.parser.set_head_request(plan.head_request);
}

Worker::~Worker() {
  for (Conn& c : conns_) Close(c);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

Status Worker::Run() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return Status::Internal(std::string("epoll_create1: ") + std::strerror(errno));

  int64_t now = MonotonicNowNs();
  for (Conn& c : conns_) Open(c, now);
  bool measuring = false;
  double cpu_start = 0;
  int64_t next_sweep = now + kSweepNs;
  epoll_event events[kMaxEvents];
  while (!abort_.load(std::memory_order_relaxed)) {
    now = MonotonicNowNs();
    if (now >= plan_.end_ns) break;
    if (!measuring && now >= plan_.measure_start_ns) {
      measuring = true;
      cpu_start = ThreadCpuSeconds();
    }
    if (now >= next_sweep) {
      Sweep(now);
      next_sweep = now + kSweepNs;
    }
    // Wake for the next sweep, and close to the measure start and end instants.
    int64_t wake = std::min(next_sweep, plan_.end_ns);
    if (!measuring) wake = std::min(wake, plan_.measure_start_ns);
    const int wait_ms = static_cast<int>(std::max<int64_t>(0, (wake - now + 999'999) / 1'000'000));
    const int n = ::epoll_wait(epoll_fd_, events, kMaxEvents, wait_ms);
    if (n < 0 && errno != EINTR) {
      return Status::Internal(std::string("epoll_wait: ") + std::strerror(errno));
    }
    for (int i = 0; i < n; ++i) OnEvent(events[i].data.u64, events[i].events);
  }
  if (measuring) result_.cpu_s = ThreadCpuSeconds() - cpu_start;
  for (Conn& c : conns_) Close(c);
  return Status::Ok();
}

void Worker::Open(Conn& c, int64_t now) {
  if (c.opened_before && Counting(now)) ++result_.reconnects;
  c.opened_before = true;
  c.sent_ns = 0;
  c.retry_ns = 0;
  const sockaddr* addr = reinterpret_cast<const sockaddr*>(&plan_.addr);
  c.fd = ::socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c.fd < 0) return Fail(c, Failure::kConnect, now);
  const int one = 1;
  ::setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ++c.generation;
  const int rc = ::connect(c.fd, addr, plan_.addr_len);
  if (rc != 0 && errno != EINPROGRESS) return Fail(c, Failure::kConnect, now);
  c.connecting = rc != 0;
  c.out_armed = false;
  epoll_event ev{};
  ev.events = EPOLLIN | (c.connecting ? uint32_t{EPOLLOUT} : 0u);
  ev.data.u64 = (static_cast<uint64_t>(&c - conns_.data()) << 32) | c.generation;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c.fd, &ev) != 0) return Fail(c, Failure::kConnect, now);
  c.out_armed = c.connecting;
  if (c.connecting) {
    c.deadline_ns = now + plan_.timeout_ns;
  } else {
    SendRequest(c);
  }
}

void Worker::Close(Conn& c) {
  if (c.fd >= 0) ::close(c.fd);  // also removes it from the epoll set
  c.fd = -1;
  c.connecting = false;
  c.out_armed = false;
  c.sent_ns = 0;
}

void Worker::Fail(Conn& c, Failure what, int64_t now) {
  if (Counting(now)) {
    switch (what) {
      case Failure::kConnect:
        ++result_.errors.connect;
        break;
      case Failure::kRead:
        ++result_.errors.read;
        break;
      case Failure::kWrite:
        ++result_.errors.write;
        break;
      case Failure::kParse:
        ++result_.errors.parse;
        break;
    }
  }
  Close(c);
  c.retry_ns = now + kRetryBackoffNs;
}

void Worker::Reopen(Conn& c, int64_t now) {
  Close(c);
  Open(c, now);
}

bool Worker::SetInterest(Conn& c, bool want_out) {
  if (c.out_armed == want_out) return true;
  epoll_event ev{};
  ev.events = EPOLLIN | (want_out ? uint32_t{EPOLLOUT} : 0u);
  ev.data.u64 = (static_cast<uint64_t>(&c - conns_.data()) << 32) | c.generation;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev) != 0) return false;
  c.out_armed = want_out;
  return true;
}

void Worker::SendRequest(Conn& c) {
  c.parser.Reset();
  c.written = 0;
  c.sent_ns = MonotonicNowNs();
  c.deadline_ns = c.sent_ns + plan_.timeout_ns;
  Write(c);
}

void Worker::Write(Conn& c) {
  const std::string& req = plan_.request;
  while (c.written < req.size()) {
    const ssize_t n = ::send(c.fd, req.data() + c.written, req.size() - c.written, MSG_NOSIGNAL);
    if (n > 0) {
      c.written += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      // The socket buffer is full: only now is write readiness worth an epoll_ctl.
      if (!SetInterest(c, true)) Fail(c, Failure::kWrite, MonotonicNowNs());
      return;
    } else {
      return Fail(c, Failure::kWrite, MonotonicNowNs());
    }
  }
  if (!SetInterest(c, false)) Fail(c, Failure::kWrite, MonotonicNowNs());
}

void Worker::OnEvent(uint64_t token, uint32_t events) {
  const size_t index = static_cast<size_t>(token >> 32);
  if (index >= conns_.size()) return;
  Conn& c = conns_[index];
  const uint32_t generation = static_cast<uint32_t>(token);
  if (c.fd < 0 || c.generation != generation) return;  // for a socket already closed
  if (c.connecting) {
    if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) == 0) return;
    int err = 0;
    socklen_t len = sizeof(err);
    if (::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      return Fail(c, Failure::kConnect, MonotonicNowNs());
    }
    c.connecting = false;
    return SendRequest(c);
  }
  if ((events & EPOLLOUT) && c.out_armed && c.sent_ns != 0) {
    Write(c);
    if (c.fd < 0 || c.generation != generation) return;
  }
  if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) Read(c);
}

void Worker::Read(Conn& c) {
  const ssize_t n = ::recv(c.fd, read_buf_.get(), kReadBufferBytes, 0);
  const int64_t now = MonotonicNowNs();
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return;
    return Fail(c, Failure::kRead, now);
  }
  if (n == 0) {
    if (c.sent_ns == 0) return Reopen(c, now);  // an idle connection closed by the server
    c.parser.FeedEof();
    if (c.parser.state() == HttpResponseParser::State::kComplete) return OnResponse(c, now);
    return Fail(c, Failure::kRead, now);
  }
  if (Counting(now)) result_.bytes_read += static_cast<uint64_t>(n);
  // Bytes with no request outstanding, or beyond the response, answer nothing we sent; the
  // stream can no longer be trusted to line up with our requests.
  if (c.sent_ns == 0) return Fail(c, Failure::kParse, now);
  const size_t used = c.parser.Feed(read_buf_.get(), static_cast<size_t>(n));
  switch (c.parser.state()) {
    case HttpResponseParser::State::kIncomplete:
      return;
    case HttpResponseParser::State::kError:
      return Fail(c, Failure::kParse, now);
    case HttpResponseParser::State::kComplete:
      Record(c, now);
      if (used < static_cast<size_t>(n)) return Fail(c, Failure::kParse, now);
      return Continue(c, now);
  }
}

void Worker::OnResponse(Conn& c, int64_t now) {
  Record(c, now);
  Continue(c, now);
}

void Worker::Record(const Conn& c, int64_t now) {
  if (Counting(now)) {
    ++result_.requests;
    result_.latency_us.Record(static_cast<uint64_t>((now - c.sent_ns + 500) / 1000));
    const int status = c.parser.status();
    if (status >= 0 && static_cast<size_t>(status) < result_.status_counts.size()) {
      ++result_.status_counts[static_cast<size_t>(status)];
    }
    const size_t second = static_cast<size_t>((now - plan_.measure_start_ns) / 1'000'000'000);
    if (second < result_.per_second.size()) ++result_.per_second[second];
  }
}

void Worker::Continue(Conn& c, int64_t now) {
  c.sent_ns = 0;
  if (!c.parser.keep_alive()) return Reopen(c, now);
  SendRequest(c);
}

void Worker::Sweep(int64_t now) {
  for (Conn& c : conns_) {
    if (c.fd < 0) {
      if (now >= c.retry_ns) Open(c, now);
    } else if (c.connecting) {
      if (now >= c.deadline_ns) Fail(c, Failure::kConnect, now);
    } else if (c.sent_ns != 0 && now >= c.deadline_ns) {
      // The server is slow, not gone: reopen at once rather than after the error backoff.
      if (Counting(now)) ++result_.errors.timeout;
      Reopen(c, now);
    }
  }
}

}  // namespace benchlab
