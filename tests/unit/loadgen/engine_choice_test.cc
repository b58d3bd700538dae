// The two I/O engines side by side (docs/load.md, "Engines"): the same open-loop schedule
// against the same server gives the same counts, statuses and bytes; `engine` picks one, auto
// falls back to epoll with the reason where io_uring is refused (here by a seccomp filter, as a
// container runtime's profile would), and io_uring asked for explicitly then fails.
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <thread>

#include "loadgen/load.h"
#include "tests/unit/loadgen/raw_http_server.h"
#include "tests/unit/loadgen/test_http_server.h"

namespace benchlab {
namespace {

using namespace std::chrono_literals;
using Mode = TestHttpServer::Mode;

bool UringHere() { return IoUringUnavailableReason().empty(); }

// 1,000 slots over half a second: every one is sent and answered by a server that keeps up, so
// both engines must count exactly the same.
LoadOptions Schedule(uint16_t port, IoEngine engine, int depth) {
  LoadOptions o;
  o.port = port;
  o.engine = engine;
  o.threads = 2;
  o.connections = 4;
  o.max_conns = 16;
  o.depth = depth;
  o.rate = 2000;
  o.duration = 500ms;
  o.timeout = 2s;
  auto entry = [](const char* method, const char* path, const char* body, uint32_t weight) {
    MixRequest m;
    m.method = method;
    m.path = path;
    m.body = body;
    m.weight = weight;
    return m;
  };
  o.mix = {entry("GET", "/a", "", 3), entry("HEAD", "/b", "", 1),
           entry("POST", "/c", "payload", 2)};
  return o;
}

// The error counts by kind, for a failure's message.
std::string Errors(const LoadResult& r) {
  const ErrorCounts& e = r.errors;
  char text[200];
  std::snprintf(
      text, sizeof text,
      "connect %llu read %llu write %llu timeout %llu parse %llu mismatch %llu "
      "reconnects %llu",
      static_cast<unsigned long long>(e.connect), static_cast<unsigned long long>(e.read),
      static_cast<unsigned long long>(e.write), static_cast<unsigned long long>(e.timeout),
      static_cast<unsigned long long>(e.parse), static_cast<unsigned long long>(e.mismatch),
      static_cast<unsigned long long>(r.reconnects));
  return text;
}

// `same_bytes`: every response of the server has one length, so the bytes read must match too.
void ExpectSameCounts(const LoadResult& epoll, const LoadResult& uring, bool same_bytes) {
  SCOPED_TRACE("epoll: " + Errors(epoll) + "; io_uring: " + Errors(uring));
  EXPECT_EQ(epoll.engine, IoEngine::kEpoll);
  EXPECT_EQ(uring.engine, IoEngine::kIoUring);
  EXPECT_EQ(epoll.scheduled, 1000u);
  EXPECT_EQ(uring.scheduled, epoll.scheduled);
  EXPECT_EQ(uring.sent, epoll.sent);
  EXPECT_EQ(uring.requests, epoll.requests);
  EXPECT_EQ(uring.status_counts, epoll.status_counts);
  if (same_bytes) {
    EXPECT_EQ(uring.bytes_read, epoll.bytes_read);
  }
  EXPECT_EQ(uring.mix_sent, epoll.mix_sent);
  EXPECT_EQ(uring.errors.Total(), 0u);
  EXPECT_EQ(epoll.errors.Total(), 0u);
  EXPECT_EQ(epoll.requests, epoll.scheduled);
}

struct Case {
  const char* name;
  TestHttpServer::Behavior server;
  int depth;
  // false where responses differ in length by timing: closing every third response, which of
  // the pipelined requests gets the one with "Connection: close" depends on which were retried.
  bool same_bytes = true;
};

TEST(EngineChoiceTest, BothEnginesCountTheSameAgainstOneServer) {
  if (!UringHere())
    GTEST_SKIP() << "io_uring is not available here: " << IoUringUnavailableReason();
  const Case cases[] = {
      {"keep-alive", {.mode = Mode::kOk}, 1},
      {"pipelined", {.mode = Mode::kOk}, 8},
      {"chunked", {.mode = Mode::kChunked}, 4},
      {"404", {.mode = Mode::kNotFound}, 1},
      {"closing every response", {.mode = Mode::kCloseEach}, 1},
      {"closing every third, pipelined", {.mode = Mode::kOk, .close_every = 3}, 4, false},
      {"stalling for 100 ms", {.mode = Mode::kOk, .stall_at = 300, .stall_ms = 100}, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TestHttpServer server(c.server);
    ASSERT_TRUE(server.ok());
    Result<LoadResult> epoll = GenerateLoad(Schedule(server.port(), IoEngine::kEpoll, c.depth));
    Result<LoadResult> uring = GenerateLoad(Schedule(server.port(), IoEngine::kIoUring, c.depth));
    ASSERT_TRUE(epoll.ok()) << epoll.status().ToString();
    ASSERT_TRUE(uring.ok()) << uring.status().ToString();
    ExpectSameCounts(*epoll, *uring, c.same_bytes);
  }
}

// 300 ms of closed-loop load with one engine.
LoadOptions ClosedLoop(uint16_t port, IoEngine engine, int connections) {
  LoadOptions o;
  o.port = port;
  o.engine = engine;
  o.connections = connections;
  o.duration = 300ms;
  return o;
}

TEST(EngineChoiceTest, BothEnginesSurviveAServerThatResetsConnections) {
  if (!UringHere())
    GTEST_SKIP() << "io_uring is not available here: " << IoUringUnavailableReason();
  // One response, then a reset (SO_LINGER 0): every request is either answered or counted lost.
  RawHttpServer server([](RawHttpServer& s, int fd) {
    s.Send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    const linger reset{.l_onoff = 1, .l_linger = 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    return false;
  });
  ASSERT_TRUE(server.ok());
  for (IoEngine engine : {IoEngine::kEpoll, IoEngine::kIoUring}) {
    SCOPED_TRACE(IoEngineName(engine));
    LoadOptions o = ClosedLoop(server.port(), engine, 4);
    o.depth = 2;
    Result<LoadResult> r = GenerateLoad(o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->engine, engine);
    EXPECT_GT(r->requests, 20u);
    EXPECT_GT(r->reconnects, 20u);
    EXPECT_EQ(r->status_counts.at(200), r->requests);
    EXPECT_EQ(r->bytes_read, r->requests * 40);  // 38 bytes of head and 2 of body each
    EXPECT_EQ(r->sent, r->requests + r->errors.Failed());
    EXPECT_EQ(r->errors.parse, 0u);
  }
}

TEST(EngineChoiceTest, BothEnginesLoseTheNextRequestWhenAKeptConnectionCloses) {
  if (!UringHere())
    GTEST_SKIP() << "io_uring is not available here: " << IoUringUnavailableReason();
  // A keep-alive response, then the server closes: the request sent (or queued) after it is
  // lost, a read error, with either engine; none is sent again unannounced.
  RawHttpServer server([](RawHttpServer& s, int fd) {
    s.Send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    return false;
  });
  ASSERT_TRUE(server.ok());
  for (IoEngine engine : {IoEngine::kEpoll, IoEngine::kIoUring}) {
    SCOPED_TRACE(IoEngineName(engine));
    const LoadOptions o = ClosedLoop(server.port(), engine, 2);
    Result<LoadResult> r = GenerateLoad(o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_GT(r->requests, 10u);
    EXPECT_EQ(r->retries, 0u);
    EXPECT_EQ(r->sent, r->requests + r->errors.Failed());
    EXPECT_GE(r->errors.read + 2, r->requests);
    EXPECT_LE(r->errors.read, r->requests + 2);
  }
}

TEST(EngineChoiceTest, NamesParseBothWays) {
  for (IoEngine e : {IoEngine::kAuto, IoEngine::kIoUring, IoEngine::kEpoll}) {
    EXPECT_EQ(ParseIoEngine(IoEngineName(e)), e);
  }
  EXPECT_EQ(ParseIoEngine("uring"), std::nullopt);
  EXPECT_EQ(ParseIoEngine(""), std::nullopt);
}

TEST(EngineChoiceTest, AutoUsesIoUringWhereTheKernelAllowsIt) {
  TestHttpServer server(Mode::kOk);
  ASSERT_TRUE(server.ok());
  LoadOptions o;
  o.port = server.port();
  o.duration = 100ms;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  if (UringHere()) {
    EXPECT_EQ(r->engine, IoEngine::kIoUring);
    EXPECT_EQ(r->engine_note, "");
    EXPECT_GT(r->syscalls.ring_enters, 0u);
    EXPECT_EQ(r->syscalls.epoll_waits, 0u);
  } else {
    EXPECT_EQ(r->engine, IoEngine::kEpoll);
    EXPECT_NE(r->engine_note, "");
  }
  o.engine = IoEngine::kEpoll;
  r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->engine, IoEngine::kEpoll);
  EXPECT_EQ(r->engine_note, "");
  EXPECT_EQ(r->syscalls.ring_enters, 0u);
  EXPECT_GT(r->syscalls.epoll_waits, 0u);
}

// Two loads one after the other on threads nothing orders, as two load agents in one process
// run them: the second's rings are mapped where the first's were (liburing unmaps them with its
// own system calls). Built with ThreadSanitizer, this fails with a data race unless the engine
// tells TSan that a ring's pages are unmapped before their addresses come back
// (loadgen/worker_uring.cc, ForEachRingPage); elsewhere it checks that both loads ran.
TEST(EngineChoiceTest, RingsMappedWhereAFinishedLoadsWereDoNotRace) {
  if (!UringHere()) {
    GTEST_SKIP() << "io_uring is not available here: " << IoUringUnavailableReason();
  }
  TestHttpServer server(Mode::kOk);
  ASSERT_TRUE(server.ok());
  LoadOptions o;
  o.port = server.port();
  o.engine = IoEngine::kIoUring;
  o.threads = 2;
  o.connections = 4;
  o.duration = 100ms;
  // A relaxed flag: the second thread waits for the first without a happens-before edge, so
  // TSan sees the two loads as concurrent.
  std::atomic<bool> first_done{false};
  Result<LoadResult> first = Status::Unavailable("not run");
  Result<LoadResult> second = Status::Unavailable("not run");
  std::thread a([&] {
    first = GenerateLoad(o);
    first_done.store(true, std::memory_order_relaxed);
  });
  std::thread b([&] {
    while (!first_done.load(std::memory_order_relaxed)) std::this_thread::sleep_for(1ms);
    second = GenerateLoad(o);
  });
  a.join();
  b.join();
  for (const Result<LoadResult>* r : {&first, &second}) {
    ASSERT_TRUE(r->ok()) << r->status().ToString();
    EXPECT_EQ((*r)->engine, IoEngine::kIoUring);
    EXPECT_GT((*r)->requests, 0u) << Errors(**r);
  }
}

// Makes io_uring_setup fail with EPERM for this process from now on, as Docker's default
// seccomp profile does.
bool RefuseIoUring() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{.len = static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])),
                  .filter = filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// In a child process (the filter cannot be lifted): auto falls back with the reason, and
// io_uring asked for by name fails with it. Exits 0 when all of that held.
void FallBackWhereRefused(uint16_t port) {
  if (!RefuseIoUring()) {
    std::fprintf(stderr, "seccomp filter not installed\n");
    std::_Exit(3);
  }
  LoadOptions o;
  o.port = port;
  o.duration = 100ms;
  Result<LoadResult> automatic = GenerateLoad(o);
  if (!automatic.ok() || automatic->engine != IoEngine::kEpoll || automatic->requests == 0 ||
      automatic->engine_note.find("io_uring_queue_init: Operation not permitted") ==
          std::string::npos) {
    std::fprintf(
        stderr, "auto: %s\n",
        automatic.ok() ? automatic->engine_note.c_str() : automatic.status().ToString().c_str());
    std::_Exit(1);
  }
  o.engine = IoEngine::kIoUring;
  Result<LoadResult> forced = GenerateLoad(o);
  if (forced.ok() || forced.status().code() != StatusCode::kUnavailable ||
      forced.status().message().find("Operation not permitted") == std::string::npos) {
    std::fprintf(stderr, "io_uring: %s\n",
                 forced.ok() ? "ran" : forced.status().ToString().c_str());
    std::_Exit(2);
  }
  std::_Exit(0);
}

TEST(EngineChoiceDeathTest, AutoFallsBackToEpollWhereIoUringIsRefused) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TestHttpServer server(Mode::kOk);
  ASSERT_TRUE(server.ok());
  EXPECT_EXIT(FallBackWhereRefused(server.port()), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace benchlab
