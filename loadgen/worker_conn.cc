// Worker's connections: open, write the in-flight requests, read and match responses, fail.
// Per request at depth 1 this costs one send and one recv; read interest stays registered and
// write interest is armed only when a send would block, so there is no epoll_ctl per request.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "loadgen/worker.h"

namespace benchlab {

namespace {

constexpr int kMaxEvents = 256;

// A connection that failed waits this long before reopening, so a dead server costs a few
// syscalls per connection every 10 ms instead of a busy loop.
constexpr int64_t kRetryBackoffNs = 10'000'000;

}  // namespace

Status Worker::Wait(int64_t wait_ns) {
  if (uring_) return WaitUring(wait_ns);
  const timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000),
                    static_cast<long>(wait_ns % 1'000'000'000)};
  epoll_event events[kMaxEvents];
  ++result_.syscalls.epoll_waits;
  const int n = ::epoll_pwait2(epoll_fd_, events, kMaxEvents, &ts, nullptr);
  if (n < 0 && errno != EINTR) {
    return Status::Internal(std::string("epoll_pwait2: ") + std::strerror(errno));
  }
  for (int i = 0; i < n; ++i) OnEvent(events[i].data.u64, events[i].events);
  return Status::Ok();
}

uint64_t Worker::Token(const Conn& c) const {
  return (static_cast<uint64_t>(&c - conns_.data()) << 32) | c.generation;
}

void Worker::Open(Conn& c, int64_t now) {
  if (c.opened_before && Counting(now)) ++result_.reconnects;
  c.opened_before = true;
  c.retry_ns = 0;
  c.served = 0;
  const sockaddr* addr = reinterpret_cast<const sockaddr*>(&plan_.addr);
  // io_uring waits for a blocking socket's readiness itself; epoll needs it non-blocking.
  const int flags = SOCK_STREAM | SOCK_CLOEXEC | (uring_ ? 0 : SOCK_NONBLOCK);
  c.fd = ::socket(addr->sa_family, flags, 0);
  if (c.fd < 0) return Fail(c, Failure::kConnect, now);
  ++open_;
  result_.peak_connections = std::max(result_.peak_connections, open_);
  const int one = 1;
  ::setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ++c.generation;
  if (uring_) return ConnectUring(c, now);
  const int rc = ::connect(c.fd, addr, plan_.addr_len);
  if (rc != 0 && errno != EINPROGRESS) return Fail(c, Failure::kConnect, now);
  c.connecting = rc != 0;
  epoll_event ev{};
  ev.events = EPOLLIN | (c.connecting ? uint32_t{EPOLLOUT} : 0u);
  ev.data.u64 = Token(c);
  ++result_.syscalls.epoll_ctls;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c.fd, &ev) != 0) {
    c.connecting = false;
    return Fail(c, Failure::kConnect, now);
  }
  c.out_armed = c.connecting;
  if (c.connecting) {
    ++connecting_;
    c.deadline_ns = now + plan_.timeout_ns;
  } else {
    Connected(c, now);
  }
}

void Worker::Connected(Conn& c, int64_t now) {
  if (c.connecting) --connecting_;
  c.connecting = false;
  if (c.tls != nullptr) return StartTls(c, now);
  Refill(c, now);
  if (c.fd >= 0 && c.out_armed && c.written == c.count && !SetInterest(c, false)) {
    Fail(c, Failure::kWrite, now);
  }
}

void Worker::Close(Conn& c) {
  if (uring_) CloseUring(c);
  if (c.fd >= 0) {
    ::close(c.fd);  // also removes it from the epoll set
    --open_;
  }
  if (c.connecting) --connecting_;
  c.fd = -1;
  c.connecting = false;
  c.out_armed = false;
  c.send_queued = false;
  c.handshaking = false;
  c.response_bytes = 0;
  c.parser.Reset();
}

void Worker::Fail(Conn& c, Failure what, int64_t now) {
  // Every request still on the connection is lost with it; one that could not even be written
  // again after a reconnect is a write failure. A failure with nothing in flight is counted once.
  if (what == Failure::kConnect && Counting(now)) ++result_.errors.connect;
  const Failure loss = what == Failure::kConnect ? Failure::kWrite : what;
  const uint32_t depth = static_cast<uint32_t>(plan_.depth);
  if (c.count == 0 && what != Failure::kConnect && what != Failure::kTimeout && Counting(now)) {
    CountFailure(what);
  }
  for (uint32_t k = 0; k < c.count; ++k) RecordLoss(c.ring[(c.head + k) % depth], loss, now);
  c.head = c.count = c.written = 0;
  c.partial = 0;
  Close(c);
  if (what == Failure::kTimeout) {
    // The server is slow, not gone: reopen at once rather than after the error backoff.
    if (Wanted(c, now)) Open(c, now);
  } else {
    c.retry_ns = now + kRetryBackoffNs;
  }
}

void Worker::Reopen(Conn& c, int64_t now) {
  Close(c);
  if (Wanted(c, now)) Open(c, now);
}

void Worker::CloseGracefully(Conn& c, int64_t now) {
  // The server closed after a response. Requests pipelined behind it were never processed
  // (RFC 9112 9.6), so they go again, whole, on a new connection.
  const uint32_t depth = static_cast<uint32_t>(plan_.depth);
  for (uint32_t k = 0; k < c.count; ++k) {
    InFlight& f = c.ring[(c.head + k) % depth];
    if (f.sent_ns != 0 && f.counted) ++result_.retries;
    f.sent_ns = 0;
  }
  c.written = 0;
  c.partial = 0;
  Reopen(c, now);
}

bool Worker::SetInterest(Conn& c, bool want_out) {
  if (c.out_armed == want_out) return true;
  epoll_event ev{};
  ev.events = EPOLLIN | (want_out ? uint32_t{EPOLLOUT} : 0u);
  ev.data.u64 = Token(c);
  ++result_.syscalls.epoll_ctls;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev) != 0) return false;
  c.out_armed = want_out;
  return true;
}

void Worker::PrepareParser(Conn& c) {
  const PlannedRequest& req = plan_.requests[c.ring[c.head].request];
  c.parser.set_head_request(req.head);
  c.parser.set_expected_body(req.expect_body ? &*req.expect_body : nullptr);
}

void Worker::Flush(Conn& c, int64_t now) {
  if (c.tls != nullptr) return FlushTls(c, now);
  if (uring_) return FlushUring(c, now);
  const uint32_t depth = static_cast<uint32_t>(plan_.depth);
  for (uint32_t k = c.written; k < c.count; ++k) {
    InFlight& f = c.ring[(c.head + k) % depth];
    if (f.sent_ns == 0) f.sent_ns = now;
  }
  while (c.written < c.count) {
    ssize_t n;
    if (plan_.requests.size() == 1) {
      // Every request is the same, so the unwritten ones are one run of the repeated copy.
      const PlannedRequest& req = plan_.requests[0];
      const size_t total = (c.count - c.written) * req.bytes.size() - c.partial;
      n = ::send(c.fd, req.repeated.data() + c.partial, total, MSG_NOSIGNAL);
    } else {
      int iovcnt = 0;
      for (uint32_t k = c.written; k < c.count; ++k) {
        const std::string& bytes = plan_.requests[c.ring[(c.head + k) % depth].request].bytes;
        const size_t skip = k == c.written ? c.partial : 0;
        iov_[static_cast<size_t>(iovcnt++)] = {const_cast<char*>(bytes.data()) + skip,
                                               bytes.size() - skip};
      }
      msghdr msg{};
      msg.msg_iov = iov_.data();
      msg.msg_iovlen = static_cast<size_t>(iovcnt);
      n = ::sendmsg(c.fd, &msg, MSG_NOSIGNAL);
    }
    ++result_.syscalls.writes;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        // The socket buffer is full: only now is write readiness worth an epoll_ctl.
        if (!SetInterest(c, true)) Fail(c, Failure::kWrite, now);
        return;
      }
      return Fail(c, Failure::kWrite, now);
    }
    Advance(c, static_cast<size_t>(n));
  }
  if (c.out_armed && !c.connecting && !SetInterest(c, false)) Fail(c, Failure::kWrite, now);
}

void Worker::Advance(Conn& c, size_t bytes) {
  const uint32_t depth = static_cast<uint32_t>(plan_.depth);
  size_t done = c.partial + bytes;
  while (c.written < c.count) {
    const size_t size = plan_.requests[c.ring[(c.head + c.written) % depth].request].bytes.size();
    if (done < size) break;
    done -= size;
    ++c.written;
  }
  c.partial = done;
}

void Worker::OnEvent(uint64_t token, uint32_t events) {
  const size_t index = static_cast<size_t>(token >> 32);
  if (index >= active_) return;
  Conn& c = conns_[index];
  const uint32_t generation = static_cast<uint32_t>(token);
  if (c.fd < 0 || c.generation != generation) return;  // for a socket already closed
  if (c.connecting) {
    if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) == 0) return;
    const int64_t now = MonotonicNowNs();
    int err = 0;
    socklen_t len = sizeof(err);
    if (::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      return Fail(c, Failure::kConnect, now);
    }
    return Connected(c, now);
  }
  if ((events & EPOLLOUT) && c.out_armed) {
    Flush(c, MonotonicNowNs());
    if (c.fd < 0 || c.generation != generation) return;
  }
  if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) Read(c);
}

void Worker::Read(Conn& c) {
  const ssize_t n = ::recv(c.fd, read_buf_.get(), kReadBufferBytes, 0);
  ++result_.syscalls.reads;
  const int64_t now = MonotonicNowNs();
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return;
    return Fail(c, Failure::kRead, now);
  }
  Consume(c, read_buf_.get(), static_cast<size_t>(n), now);
}

void Worker::Consume(Conn& c, const char* data, size_t n, int64_t now) {
  if (c.tls != nullptr) return ConsumeTls(c, data, n, now);
  ConsumePlain(c, data, n, now);
}

void Worker::ConsumePlain(Conn& c, const char* data, size_t n, int64_t now) {
  const uint32_t depth = static_cast<uint32_t>(plan_.depth);
  // io_uring: a send queued or in flight has left, as far as the server can tell.
  auto nothing_sent = [&c] { return c.written == 0 && c.partial == 0 && !c.send_queued; };
  if (n == 0) {
    // Closed with nothing sent that awaits an answer: an idle keep-alive connection ended.
    if (nothing_sent()) return Reopen(c, now);
    c.parser.FeedEof();
    if (c.parser.state() != HttpResponseParser::State::kComplete) {
      return Fail(c, Failure::kRead, now);
    }
  }
  size_t off = 0;
  while (true) {
    if (c.parser.state() == HttpResponseParser::State::kIncomplete) {
      if (off == n || n == 0) break;
      // Bytes with nothing sent to answer cannot be lined up with our requests.
      if (nothing_sent()) return Fail(c, Failure::kParse, now);
      const size_t used = c.parser.Feed(data + off, n - off);
      off += used;
      c.response_bytes += used;
      continue;
    }
    if (c.parser.state() == HttpResponseParser::State::kError) {
      return Fail(c, c.parser.body_too_large() ? Failure::kBodyTooLarge : Failure::kParse, now);
    }
    // Complete: it answers the oldest request in flight.
    const InFlight& f = c.ring[c.head];
    const PlannedRequest& req = plan_.requests[f.request];
    const int status = c.parser.status();
    const bool mismatch = (req.check_status && !req.allowed_status[static_cast<size_t>(status)]) ||
                          !c.parser.body_matches();
    if (f.counted) result_.bytes_read += c.response_bytes;
    c.response_bytes = 0;
    RecordResponse(f, now, status, mismatch);
    const bool whole = c.written > 0;  // else the server answered before the request was sent
    const bool keep_alive = c.parser.keep_alive();
    c.head = (c.head + 1) % depth;
    --c.count;
    if (whole) {
      --c.written;
    } else {
      c.partial = 0;
    }
    c.parser.Reset();
    if (c.count > 0) PrepareParser(c);
    if (!keep_alive || !whole || n == 0) return CloseGracefully(c, now);
  }
  Refill(c, now);
}

}  // namespace benchlab
