// The io_uring engine (docs/load.md, "Engines"): the same Worker, its schedule, parser and
// accounting, with its I/O through one ring per worker thread. Sends are queued as submission
// entries while the loop handles a batch of completions and go to the kernel together in the
// next io_uring_enter, which also waits for the next batch; responses arrive by one multishot
// receive per connection into a ring of buffers the worker provides and recycles. At depth 1 a
// turn of the loop is then one system call however many connections it serves, where epoll
// needs a send and a recv per request. Nothing is allocated or locked per request.
#include <liburing.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "loadgen/tls_stream.h"
#include "loadgen/worker.h"

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

namespace benchlab {

namespace {

constexpr uint16_t kBufferGroup = 1;
constexpr size_t kUringBufferBytes = 8 * 1024;
constexpr unsigned kMinBuffers = 64;
constexpr unsigned kMaxBuffers = 4096;  // at most 32 MiB of receive buffers per worker

// What a completion answers. Its user_data is op << 56 | connection << 32 | generation, so a
// completion for a connection closed since (a stale generation) is recognised and only its
// buffer is given back.
enum class UringOp : uint8_t { kConnect = 1, kSend = 2, kRecv = 3 };
constexpr uint64_t kMaxUringConns = uint64_t{1} << 24;

uint64_t UringData(UringOp op, size_t index, uint32_t generation) {
  return (static_cast<uint64_t>(op) << 56) | (static_cast<uint64_t>(index) << 32) | generation;
}

std::string UringError(const char* what, int negative_errno) {
  return std::string(what) + ": " + std::strerror(-negative_errno);
}

// Flags for the ring, best first: completions run only when the worker asks for them (6.1),
// then cooperative task work (5.19), then none. The completion queue holds four per entry: a
// multishot receive posts one per read, so completions outnumber submissions.
int InitRing(io_uring& ring, unsigned entries) {
  const unsigned kTries[] = {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
                             IORING_SETUP_COOP_TASKRUN, 0};
  int rc = -EINVAL;
  for (unsigned flags : kTries) {
    io_uring_params params{};
    params.flags = flags | IORING_SETUP_CQSIZE;
    params.cq_entries = 4 * entries;
    rc = io_uring_queue_init_params(entries, &ring, &params);
    if (rc != -EINVAL) return rc;
  }
  return rc;
}

// ThreadSanitizer and the rings' memory. liburing maps and unmaps a ring's queues with its own
// system calls (Debian's liburing 2.3 imports neither mmap nor munmap from libc), so TSan never
// sees a ring's pages go: when another worker's ring is mapped later at the same address, TSan
// takes its accesses for a race with the old ring's (seen in FleetTest, two load agents in one
// process: io_uring_get_sqe in one worker against a finished worker's io_uring_prep_send, at the
// same page). The kernel orders the two: an address is handed out again only after it was
// unmapped. Each page of a ring is released before the ring is unmapped and acquired once a new
// ring is mapped, which tells TSan that order and no other. Nothing outside TSan's build.
#if defined(__SANITIZE_THREAD__)
template <typename Fn>
void ForEachRingPage(const io_uring& ring, Fn fn) {
  constexpr uintptr_t kPage = 4096;
  auto pages = [&](const void* start, size_t bytes) {
    const auto first = reinterpret_cast<uintptr_t>(start) & ~(kPage - 1);
    for (uintptr_t p = first; p < reinterpret_cast<uintptr_t>(start) + bytes; p += kPage) {
      fn(reinterpret_cast<void*>(p));
    }
  };
  // With one mapping for both queues (IORING_FEAT_SINGLE_MMAP), liburing gives both its size.
  pages(ring.sq.ring_ptr, ring.sq.ring_sz);
  if (ring.cq.ring_ptr != ring.sq.ring_ptr) pages(ring.cq.ring_ptr, ring.cq.ring_sz);
  pages(ring.sq.sqes, sizeof(io_uring_sqe) * ring.sq.ring_entries *
                          ((ring.flags & IORING_SETUP_SQE128) != 0 ? 2 : 1));
}

// io_uring_queue_exit, once TSan knows the ring's pages are done with.
void ExitRing(io_uring& ring) {
  ForEachRingPage(ring, [](void* page) { __tsan_release(page); });
  io_uring_queue_exit(&ring);
}

// Once a ring is mapped: its pages come after whatever ring held their addresses before.
void AcquireRingPages(const io_uring& ring) {
  ForEachRingPage(ring, [](void* page) { __tsan_acquire(page); });
}
#else
void ExitRing(io_uring& ring) { io_uring_queue_exit(&ring); }
void AcquireRingPages(const io_uring&) {}
#endif

}  // namespace

struct Worker::Uring {
  io_uring ring{};
  bool ring_ready = false;
  io_uring_buf_ring* buf_ring = nullptr;
  size_t buf_ring_bytes = 0;
  unsigned buffers = 0;
  std::unique_ptr<char[]> memory;  // buffers * kUringBufferBytes
  unsigned recycled = 0;           // buffers given back since the ring's tail last moved
  // Per connection: the iovecs and header of its one send in flight (a mix's requests at once).
  std::vector<iovec> iov;
  std::vector<msghdr> msg;

  ~Uring() {
    if (ring_ready) ExitRing(ring);  // cancels what is still in flight
    if (buf_ring != nullptr) ::munmap(buf_ring, buf_ring_bytes);
  }

  void Recycle(unsigned id) {
    io_uring_buf_ring_add(buf_ring, memory.get() + static_cast<size_t>(id) * kUringBufferBytes,
                          kUringBufferBytes, static_cast<unsigned short>(id),
                          io_uring_buf_ring_mask(buffers), static_cast<int>(recycled));
    ++recycled;
  }
};

void Worker::UringDeleter::operator()(Uring* u) const { delete u; }

std::string IoUringUnavailableReason() {
  io_uring ring{};
  if (int rc = io_uring_queue_init(4, &ring, 0); rc < 0) {
    return UringError("io_uring_queue_init", rc);
  }
  std::string reason;
  // Multishot receive came with Linux 6.0, as did zero-copy send: the probe names opcodes only.
  io_uring_probe* probe = io_uring_get_probe_ring(&ring);
  if (probe == nullptr || !io_uring_opcode_supported(probe, IORING_OP_SEND_ZC)) {
    utsname u{};
    ::uname(&u);
    reason = std::string("multishot receive needs Linux 6.0 or later; this kernel is ") + u.release;
  }
  if (probe != nullptr) io_uring_free_probe(probe);
  if (reason.empty()) {
    const size_t bytes = sizeof(io_uring_buf) * kMinBuffers;
    void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (mem == MAP_FAILED) {
      reason = std::string("mmap: ") + std::strerror(errno);
    } else {
      io_uring_buf_reg reg{};
      reg.ring_addr = reinterpret_cast<uintptr_t>(mem);
      reg.ring_entries = kMinBuffers;
      reg.bgid = kBufferGroup;
      if (int rc = io_uring_register_buf_ring(&ring, &reg, 0); rc < 0) {
        reason = UringError("io_uring_register_buf_ring", rc);
      }
      ::munmap(mem, bytes);
    }
  }
  ExitRing(ring);
  return reason;
}

Status Worker::PrepareUring() {
  if (conns_.size() >= kMaxUringConns) {
    return Status::InvalidArgument("io_uring engine: at most " + std::to_string(kMaxUringConns) +
                                   " connections per thread");
  }
  std::unique_ptr<Uring, UringDeleter> u(new Uring);
  // Room for a connect or send and a receive per connection in one turn; a full queue is
  // submitted early (GetSqe), so this bounds batching, not correctness.
  const unsigned entries =
      std::clamp<unsigned>(std::bit_ceil(static_cast<unsigned>(2 * conns_.size() + 8)), 64, 4096);
  if (int rc = InitRing(u->ring, entries); rc < 0) {
    return Status::Unavailable(UringError("io_uring_queue_init", rc));
  }
  AcquireRingPages(u->ring);
  u->ring_ready = true;
  // Registered, the ring's own descriptor is not looked up on every io_uring_enter (5.18); an
  // older kernel just does without.
  io_uring_register_ring_fd(&u->ring);
  u->buffers = std::clamp<unsigned>(std::bit_ceil(static_cast<unsigned>(2 * conns_.size())),
                                    kMinBuffers, kMaxBuffers);
  u->buf_ring_bytes = sizeof(io_uring_buf) * u->buffers;
  void* mem = ::mmap(nullptr, u->buf_ring_bytes, PROT_READ | PROT_WRITE,
                     MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mem == MAP_FAILED) return Status::Unavailable(std::string("mmap: ") + std::strerror(errno));
  u->buf_ring = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_ring_init(u->buf_ring);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uintptr_t>(mem);
  reg.ring_entries = u->buffers;
  reg.bgid = kBufferGroup;
  if (int rc = io_uring_register_buf_ring(&u->ring, &reg, 0); rc < 0) {
    return Status::Unavailable(UringError("io_uring_register_buf_ring", rc));
  }
  u->memory.reset(new char[static_cast<size_t>(u->buffers) * kUringBufferBytes]);
  for (unsigned id = 0; id < u->buffers; ++id) u->Recycle(id);
  io_uring_buf_ring_advance(u->buf_ring, static_cast<int>(u->recycled));
  u->recycled = 0;
  if (plan_.requests.size() > 1) {
    u->iov.resize(conns_.size() * static_cast<size_t>(plan_.depth));
    u->msg.resize(conns_.size());
  }
  uring_ = std::move(u);
  return Status::Ok();
}

namespace {

// The next free submission entry, submitting the queue first when it is full.
io_uring_sqe* NextSqe(io_uring& ring, uint64_t& enters) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring);
  if (sqe == nullptr) {
    ++enters;
    io_uring_submit(&ring);
    sqe = io_uring_get_sqe(&ring);
  }
  return sqe;
}

}  // namespace

void Worker::ConnectUring(Conn& c, int64_t now) {
  io_uring_sqe* sqe = NextSqe(uring_->ring, result_.syscalls.ring_enters);
  if (sqe == nullptr) return Fail(c, Failure::kConnect, now);
  io_uring_prep_connect(sqe, c.fd, reinterpret_cast<const sockaddr*>(&plan_.addr), plan_.addr_len);
  io_uring_sqe_set_data64(sqe, UringData(UringOp::kConnect, Index(c), c.generation));
  c.connecting = true;
  ++connecting_;
  c.deadline_ns = now + plan_.timeout_ns;
}

void Worker::ArmRecv(Conn& c) {
  io_uring_sqe* sqe = NextSqe(uring_->ring, result_.syscalls.ring_enters);
  if (sqe == nullptr) return Fail(c, Failure::kRead, MonotonicNowNs());
  io_uring_prep_recv_multishot(sqe, c.fd, nullptr, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = kBufferGroup;
  io_uring_sqe_set_data64(sqe, UringData(UringOp::kRecv, Index(c), c.generation));
}

void Worker::FlushUring(Conn& c, int64_t now) {
  // One send in flight per connection keeps the bytes in order; what is dispatched meanwhile
  // goes when it completes (SendDone).
  if (c.fd < 0 || c.send_queued || c.connecting || c.written == c.count) return;
  const uint32_t depth = static_cast<uint32_t>(plan_.depth);
  for (uint32_t k = c.written; k < c.count; ++k) {
    InFlight& f = c.ring[(c.head + k) % depth];
    if (f.sent_ns == 0) f.sent_ns = now;
  }
  io_uring_sqe* sqe = NextSqe(uring_->ring, result_.syscalls.ring_enters);
  if (sqe == nullptr) return Fail(c, Failure::kWrite, now);
  const size_t index = Index(c);
  if (plan_.requests.size() == 1) {
    // Every request is the same, so the unwritten ones are one run of the repeated copy.
    const PlannedRequest& req = plan_.requests[0];
    const size_t total = (c.count - c.written) * req.bytes.size() - c.partial;
    io_uring_prep_send(sqe, c.fd, req.repeated.data() + c.partial, total, MSG_NOSIGNAL);
  } else {
    // The kernel copies the header and iovecs when it takes the entry (IORING_FEAT_SUBMIT_STABLE
    // since 5.5), so this connection's slots may be rewritten once it is submitted.
    iovec* iov = &uring_->iov[index * depth];
    size_t iovcnt = 0;
    for (uint32_t k = c.written; k < c.count; ++k) {
      const std::string& bytes = plan_.requests[c.ring[(c.head + k) % depth].request].bytes;
      const size_t skip = k == c.written ? c.partial : 0;
      iov[iovcnt++] = {const_cast<char*>(bytes.data()) + skip, bytes.size() - skip};
    }
    msghdr& msg = uring_->msg[index];
    msg = {};
    msg.msg_iov = iov;
    msg.msg_iovlen = iovcnt;
    io_uring_prep_sendmsg(sqe, c.fd, &msg, MSG_NOSIGNAL);
  }
  io_uring_sqe_set_data64(sqe, UringData(UringOp::kSend, index, c.generation));
  ++result_.syscalls.writes;
  c.send_queued = true;
}

void Worker::SendDone(Conn& c, int res, int64_t now) {
  c.send_queued = false;
  if (res == -EINTR || res == -EAGAIN) return Flush(c, now);
  if (res < 0) return Fail(c, Failure::kWrite, now);
  if (c.tls != nullptr) {
    c.tls->Sent(static_cast<size_t>(res));
    return FlushTls(c, now);
  }
  Advance(c, static_cast<size_t>(res));
  FlushUring(c, now);
}

void Worker::SendTlsUring(Conn& c, int64_t now) {
  // The stream keeps the bytes in place until Sent() covers them, so the entry may point at
  // them; one send in flight keeps the records in order.
  if (c.fd < 0 || c.send_queued || c.connecting) return;
  const std::string_view out = c.tls->Outgoing();
  if (out.empty()) return;
  io_uring_sqe* sqe = NextSqe(uring_->ring, result_.syscalls.ring_enters);
  if (sqe == nullptr) return Fail(c, Failure::kWrite, now);
  io_uring_prep_send(sqe, c.fd, out.data(), out.size(), MSG_NOSIGNAL);
  io_uring_sqe_set_data64(sqe, UringData(UringOp::kSend, Index(c), c.generation));
  ++result_.syscalls.writes;
  c.send_queued = true;
}

void Worker::CloseUring(Conn& c) {
  if (c.fd < 0) return;
  // Entries still queued for this socket name its descriptor's number, which the next socket
  // may be given: they become no-ops, whose completions (user_data 0) match no connection, and
  // nothing queued for a connection being closed reaches the server. shutdown then ends the
  // receive and any send already submitted; their completions carry this generation and are
  // ignored.
  io_uring& ring = uring_->ring;
  for (unsigned i = ring.sq.sqe_head; i != ring.sq.sqe_tail; ++i) {
    io_uring_sqe* sqe = &ring.sq.sqes[i & ring.sq.ring_mask];
    if (sqe->fd == c.fd) {
      io_uring_prep_nop(sqe);
      io_uring_sqe_set_data64(sqe, 0);
    }
  }
  ::shutdown(c.fd, SHUT_RDWR);
}

Status Worker::WaitUring(int64_t wait_ns) {
  Uring& u = *uring_;
  __kernel_timespec ts{};
  ts.tv_sec = wait_ns / 1'000'000'000;
  ts.tv_nsec = wait_ns % 1'000'000'000;
  io_uring_cqe* cqe = nullptr;
  ++result_.syscalls.ring_enters;
  const int rc = io_uring_submit_and_wait_timeout(&u.ring, &cqe, 1, &ts, nullptr);
  if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
    return Status::Internal(UringError("io_uring_submit_and_wait_timeout", rc));
  }
  const int64_t now = MonotonicNowNs();
  unsigned head = 0;
  unsigned seen = 0;
  io_uring_for_each_cqe(&u.ring, head, cqe) {
    OnCompletion(cqe->user_data, cqe->res, cqe->flags, now);
    ++seen;
  }
  io_uring_cq_advance(&u.ring, seen);
  if (u.recycled > 0) {
    io_uring_buf_ring_advance(u.buf_ring, static_cast<int>(u.recycled));
    u.recycled = 0;
  }
  return Status::Ok();
}

void Worker::OnCompletion(uint64_t data, int res, uint32_t flags, int64_t now) {
  const UringOp op = static_cast<UringOp>(data >> 56);
  const size_t index = static_cast<size_t>((data >> 32) & (kMaxUringConns - 1));
  const uint32_t generation = static_cast<uint32_t>(data);
  const char* bytes = nullptr;
  unsigned buffer = 0;
  if (flags & IORING_CQE_F_BUFFER) {
    buffer = flags >> IORING_CQE_BUFFER_SHIFT;
    bytes = uring_->memory.get() + static_cast<size_t>(buffer) * kUringBufferBytes;
  }
  Conn* live = nullptr;
  if (index < active_ && conns_[index].fd >= 0 && conns_[index].generation == generation) {
    live = &conns_[index];
  }
  if (live != nullptr) {
    Conn& c = *live;
    switch (op) {
      case UringOp::kConnect:
        if (!c.connecting) break;
        if (res < 0) {
          Fail(c, Failure::kConnect, now);
        } else {
          ArmRecv(c);
          if (c.fd >= 0) Connected(c, now);  // else ArmRecv failed it
        }
        break;
      case UringOp::kSend:
        SendDone(c, res, now);
        break;
      case UringOp::kRecv: {
        ++result_.syscalls.reads;
        if (res > 0 && bytes != nullptr) {
          Consume(c, bytes, static_cast<size_t>(res), now);
        } else if (res == 0) {
          Consume(c, nullptr, 0, now);
        } else if (res != -ENOBUFS) {
          Fail(c, Failure::kRead, now);
        }
        // A multishot receive ends when the buffers ran out (ENOBUFS): those of this batch are
        // given back before the next submission, so arming it again finds them.
        const bool more = (flags & IORING_CQE_F_MORE) != 0;
        if (!more && res != 0 && c.fd >= 0 && c.generation == generation && !c.connecting) {
          ArmRecv(c);
        }
        break;
      }
    }
  }
  if (bytes != nullptr) uring_->Recycle(buffer);
}

}  // namespace benchlab
