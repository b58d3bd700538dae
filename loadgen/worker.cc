// Worker's loop, open-loop schedule and accounting. The connections' I/O is in worker_conn.cc.
#include "loadgen/worker.h"

#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "loadgen/tls_stream.h"

namespace benchlab {

namespace {

// User and system CPU seconds of the calling thread.
void ThreadCpu(double& user, double& sys) {
  rusage ru{};
  ::getrusage(RUSAGE_THREAD, &ru);
  user = static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) * 1e-6;
  sys = static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) * 1e-6;
}

uint64_t ToUs(int64_t ns) { return ns <= 0 ? 0 : static_cast<uint64_t>((ns + 500) / 1000); }

}  // namespace

int64_t MonotonicNowNs() {
  // Direct, not through Clock: read per request on the hot path (docs/load.md, "Threads, CPUs").
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Worker::Worker(const WorkerPlan& plan, const WorkerSetup& setup, const std::atomic<bool>& abort)
    : plan_(plan),
      setup_(setup),
      abort_(abort),
      conns_(static_cast<size_t>(setup.max_conns)),
      in_flight_(static_cast<size_t>(setup.max_conns) * static_cast<size_t>(plan.depth)),
      iov_(static_cast<size_t>(plan.depth)),
      read_buf_(new char[kReadBufferBytes]) {
  for (size_t i = 0; i < conns_.size(); ++i) {
    conns_[i].ring = &in_flight_[i * static_cast<size_t>(plan.depth)];
    conns_[i].parser.set_max_body(plan.max_body);
  }
  if (plan.open_loop) {
    idle_.reserve(conns_.size());
    queue_.assign(std::max<size_t>(setup.max_queue, 1), 0);
  }
  result_.per_second.assign(plan.seconds, 0);
  result_.second_histograms.assign(plan.seconds, std::string());
  result_.mix_sent.assign(plan.requests.size(), 0);
  // Each worker starts at its own point of the weighted cycle, so short runs with several
  // threads still see the whole mix.
  cycle_pos_ = plan.cycle.size() * static_cast<size_t>(setup.index) /
               static_cast<size_t>(std::max(plan.workers, 1));
}

Worker::~Worker() {
  // The ring goes first: it belongs to the worker's thread (IORING_SETUP_SINGLE_ISSUER) and this
  // may run on another, so the sockets left open (a run that ended in an error) are closed
  // without submitting anything; closing the ring cancels what it still had in flight.
  uring_.reset();
  for (Conn& c : conns_) Close(c);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

Status Worker::Prepare() {
  if (setup_.cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(setup_.cpu, &set);
    if (int rc = ::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set); rc != 0) {
      return Status::InvalidArgument("pin worker thread to CPU " + std::to_string(setup_.cpu) +
                                     ": " + std::strerror(rc));
    }
  }
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (::sched_getaffinity(0, sizeof(mine), &mine) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &mine)) result_.cpus.push_back(cpu);
    }
  }
  // Timers wake within a microsecond of the slot instead of the default 50 us slack.
  if (plan_.open_loop) ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  BENCHLAB_RETURN_IF_ERROR(PrepareTls());
  if (plan_.engine == IoEngine::kIoUring) return PrepareUring();
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return Status::Internal(std::string("epoll_create1: ") + std::strerror(errno));
  return Status::Ok();
}

Status Worker::Run() {
  const int64_t sweep_ns = std::clamp<int64_t>(plan_.timeout_ns / 10, kMinSweepNs, kMaxSweepNs);
  const std::atomic<bool>& stop = *plan_.stop;
  int64_t now = MonotonicNowNs();
  if (plan_.open_loop) {
    schedule_.emplace(plan_.arrival, plan_.rate, plan_.start_ns, setup_.index, plan_.workers,
                      plan_.seed);
    next_slot_ns_ = schedule_->Next();
  }
  next_second_ns_ = plan_.seconds > 1 ? plan_.measure_start_ns + 1'000'000'000 : INT64_MAX;
  active_ = static_cast<size_t>(setup_.connections);
  for (size_t i = 0; i < active_; ++i) Open(conns_[i], now);

  bool measuring = false;
  double user0 = 0, sys0 = 0;
  int64_t next_sweep = now + sweep_ns;
  // Every request of the interval was sent before end_ns and times out by end_ns + timeout.
  // Slots still queued at the end go out as connections free up, within the same bound.
  const int64_t drain_deadline = plan_.end_ns + plan_.timeout_ns + 2 * sweep_ns;
  while (!abort_.load(std::memory_order_relaxed)) {
    if (stop.load(std::memory_order_relaxed)) {
      result_.stopped = true;
      break;
    }
    now = MonotonicNowNs();
    if (!measuring && now >= plan_.measure_start_ns) {
      measuring = true;
      ThreadCpu(user0, sys0);
    }
    if (plan_.open_loop && !draining_) HandleDueSlots(now);
    if (!draining_ && now >= plan_.end_ns) draining_ = true;
    if (draining_ && ((Drained() && queue_len_ == 0) || now >= drain_deadline)) break;
    if (now >= next_sweep) {
      Sweep(now);
      next_sweep = now + sweep_ns;
    }
    int64_t wake = std::min(next_sweep, draining_ ? drain_deadline : plan_.end_ns);
    if (!measuring) wake = std::min(wake, plan_.measure_start_ns);
    // Close to the next slot, poll rather than sleep, if asked to.
    if (!draining_) wake = std::min(wake, next_slot_ns_ - plan_.spin_ns);
    const int64_t wait_ns = std::max<int64_t>(0, wake - MonotonicNowNs());
    BENCHLAB_RETURN_IF_ERROR(Wait(wait_ns));
  }
  now = MonotonicNowNs();
  DropQueued();
  // What the drain could not settle had no response: requests never written (waiting for a
  // connection) were lost to writing, the rest to the timeout.
  for (size_t i = 0; i < active_; ++i) {
    Conn& c = conns_[i];
    for (uint32_t k = 0; k < c.count; ++k) {
      const InFlight& f = c.ring[(c.head + k) % static_cast<uint32_t>(plan_.depth)];
      RecordLoss(f, f.sent_ns == 0 ? Failure::kWrite : Failure::kTimeout, now);
    }
    c.count = c.written = 0;
    Close(c);
  }
  if (measuring) {
    double user1 = 0, sys1 = 0;
    ThreadCpu(user1, sys1);
    result_.cpu_user_s = user1 - user0;
    result_.cpu_sys_s = sys1 - sys0;
  }
  next_second_ns_ = 0;
  RollSecond(INT64_MAX);
  if (second_latency_.Count() > 0 && second_ < result_.second_histograms.size()) {
    result_.second_histograms[second_] = second_latency_.Serialize();
  }
  return Status::Ok();
}

void Worker::DropQueued() {
  // Slots still queued when the drain ended were due inside the run but never sent.
  for (size_t i = 0; i < queue_len_; ++i) {
    const int64_t slot = queue_[(queue_head_ + i) % queue_.size()];
    if (slot >= plan_.measure_start_ns) ++result_.dropped;
  }
  queue_len_ = 0;
}

void Worker::HandleDueSlots(int64_t now) {
  bool queued = false;
  while (next_slot_ns_ <= now && next_slot_ns_ < plan_.end_ns) {
    const int64_t slot = next_slot_ns_;
    next_slot_ns_ = schedule_->Next();
    const bool counted = slot >= plan_.measure_start_ns;
    if (counted) {
      ++result_.scheduled;
      result_.lag_us.Record(ToUs(now - slot));
    }
    if (queue_len_ == 0) {
      if (Conn* c = TakeIdle()) {
        Dispatch(*c, slot);
        Flush(*c, now);
        MarkIdle(*c);
        continue;
      }
    }
    if (queue_len_ < queue_.size()) {
      queue_[(queue_head_ + queue_len_) % queue_.size()] = slot;
      ++queue_len_;
      queued = true;
    } else if (counted) {
      ++result_.dropped;
    }
  }
  if (next_slot_ns_ >= plan_.end_ns) next_slot_ns_ = INT64_MAX;
  if (queued) MaybeGrow(now);
}

Worker::Conn* Worker::TakeIdle() {
  while (!idle_.empty()) {
    Conn& c = conns_[idle_.back()];
    if (c.fd >= 0 && !c.connecting && !c.handshaking && HasRoom(c) &&
        c.count < static_cast<uint32_t>(plan_.depth)) {
      return &c;
    }
    c.idle_listed = false;
    idle_.pop_back();
  }
  return nullptr;
}

void Worker::MarkIdle(Conn& c) {
  if (!plan_.open_loop || c.idle_listed || c.fd < 0 || c.connecting || c.handshaking) return;
  if (!HasRoom(c)) return;
  if (c.count >= static_cast<uint32_t>(plan_.depth)) return;
  c.idle_listed = true;
  idle_.push_back(static_cast<uint32_t>(&c - conns_.data()));
}

void Worker::MaybeGrow(int64_t now) {
  // One new connection per queued slot not already covered by one being opened.
  while (queue_len_ > static_cast<size_t>(connecting_) * static_cast<size_t>(plan_.depth) &&
         active_ < conns_.size()) {
    Open(conns_[active_++], now);
  }
}

void Worker::Dispatch(Conn& c, int64_t intended_ns) {
  const uint32_t depth = static_cast<uint32_t>(plan_.depth);
  InFlight& f = c.ring[(c.head + c.count) % depth];
  f.intended_ns = intended_ns;
  f.sent_ns = 0;
  f.request = plan_.cycle[cycle_pos_];
  if (++cycle_pos_ == plan_.cycle.size()) cycle_pos_ = 0;
  f.counted = intended_ns >= plan_.measure_start_ns && intended_ns < plan_.end_ns;
  ++c.served;
  if (++c.count == 1) PrepareParser(c);
  if (f.counted) {
    ++counted_in_flight_;
    ++result_.sent;
    ++result_.mix_sent[f.request];
  }
}

void Worker::Refill(Conn& c, int64_t now) {
  const uint32_t depth = static_cast<uint32_t>(plan_.depth);
  // Every request the connection may carry is answered: a fresh one takes over.
  if (c.count == 0 && !HasRoom(c)) return Reopen(c, now);
  if (plan_.open_loop) {
    // The queue holds only slots due inside the run, so it empties even while draining.
    while (queue_len_ > 0 && c.count < depth && HasRoom(c)) {
      const int64_t slot = queue_[queue_head_];
      queue_head_ = (queue_head_ + 1) % queue_.size();
      --queue_len_;
      Dispatch(c, slot);
    }
  } else if (Sending(now)) {
    while (c.count < depth && HasRoom(c)) Dispatch(c, now);
  }
  if (c.written < c.count) Flush(c, now);
  if (c.fd >= 0) MarkIdle(c);
}

void Worker::RecordLatency(const InFlight& f, int64_t now) {
  RollSecond(now);
  const uint64_t us = ToUs(now - f.intended_ns);
  const uint64_t uncorrected = f.sent_ns == 0 ? us : ToUs(now - f.sent_ns);
  // Responses read together to requests written together have the same latency: one
  // histogram update covers the run of them.
  if (run_.count > 0 && run_.us == us && run_.uncorrected == uncorrected) {
    ++run_.count;
    return;
  }
  FlushLatency();
  run_ = {us, uncorrected, 1};
}

void Worker::FlushLatency() {
  if (run_.count == 0) return;
  if (run_.count == 1) {
    result_.latency_us.Record(run_.us);
    second_latency_.Record(run_.us);
    if (plan_.open_loop) result_.latency_uncorrected_us.Record(run_.uncorrected);
  } else {
    result_.latency_us.RecordN(run_.us, run_.count);
    second_latency_.RecordN(run_.us, run_.count);
    if (plan_.open_loop) result_.latency_uncorrected_us.RecordN(run_.uncorrected, run_.count);
  }
  run_.count = 0;
}

void Worker::RecordResponse(const InFlight& f, int64_t now, int status, bool mismatch) {
  if (!f.counted) return;
  --counted_in_flight_;
  ++result_.requests;
  if (now < plan_.end_ns) ++result_.completed_in_interval;
  RecordLatency(f, now);
  ++result_.per_second[second_];
  if (status >= 0 && static_cast<size_t>(status) < result_.status_counts.size()) {
    ++result_.status_counts[static_cast<size_t>(status)];
  }
  if (mismatch) ++result_.errors.mismatch;
}

void Worker::RecordLoss(const InFlight& f, Failure what, int64_t now) {
  if (!f.counted) return;
  --counted_in_flight_;
  CountFailure(what);
  if (what == Failure::kTimeout) RecordLatency(f, now);
}

void Worker::CountFailure(Failure what) {
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
    case Failure::kTimeout:
      ++result_.errors.timeout;
      break;
    case Failure::kBodyTooLarge:
      ++result_.errors.body_too_large;
      break;
  }
}

void Worker::RollSecond(int64_t now) {
  if (now < next_second_ns_) return;  // the usual case, without a division
  FlushLatency();                     // what is pending belongs to the second that ends
  const int64_t since = now - plan_.measure_start_ns;
  size_t second = since <= 0 ? 0 : static_cast<size_t>(since / 1'000'000'000);
  second = std::min(second, plan_.seconds - 1);
  while (second_ < second) {
    if (second_latency_.Count() > 0) {
      result_.second_histograms[second_] = second_latency_.Serialize();
      second_latency_.Reset();
    }
    ++second_;
  }
  next_second_ns_ =
      second_ + 1 >= plan_.seconds
          ? INT64_MAX
          : plan_.measure_start_ns + static_cast<int64_t>(second_ + 1) * 1'000'000'000;
}

void Worker::Sweep(int64_t now) {
  for (size_t i = 0; i < active_; ++i) {
    Conn& c = conns_[i];
    if (c.fd < 0) {
      if (now >= c.retry_ns && Wanted(c, now)) Open(c, now);
    } else if (c.connecting) {
      if (now >= c.deadline_ns) Fail(c, Failure::kConnect, now);
    } else if (c.handshaking) {
      if (now >= c.deadline_ns) FailTls(c, "the TLS handshake timed out", now);
    } else if (c.count > 0) {
      const InFlight& oldest = c.ring[c.head];
      if (oldest.sent_ns != 0 && now - oldest.sent_ns >= plan_.timeout_ns) {
        Fail(c, Failure::kTimeout, now);
      }
    }
  }
}

}  // namespace benchlab
