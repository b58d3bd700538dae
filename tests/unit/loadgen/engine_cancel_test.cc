// LoadOptions::stop: a run of 30 s is stopped from the test after ~300 ms, in warm-up,
// measurement or drain, closed and open loop. Measured from the test: the server sees every
// connection closed within kCloseBound of the flag being set, GenerateLoad returns Cancelled, and
// no thread or file descriptor of the run is left behind.
#include <dirent.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "loadgen/load.h"
#include "tests/sanitizer.h"
#include "tests/unit/loadgen/engine_param.h"
#include "tests/unit/loadgen/test_http_server.h"

namespace benchlab {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Mode = TestHttpServer::Mode;

// The requirement (issue 13, item 3) is 100 ms from the caller's cancellation; the engine
// promises kStopLatency (50 ms), which leaves a 50 ms margin for a loaded test machine.
// ThreadSanitizer's slowdown stretches it, and the time before the stop (kStopAfter), alike.
constexpr auto kCloseBound = 100ms * kSanitizerTimeScale;
constexpr auto kStopAfter = 300ms * kSanitizerTimeScale;

// Entries of a /proc/self directory: file descriptors ("fd") or threads ("task").
int CountEntries(const char* dir) {
  DIR* d = ::opendir(dir);
  if (d == nullptr) return -1;
  int n = 0;
  while (const dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
  ::closedir(d);
  return n;
}

struct Stopped {
  int open_before = 0;           // connections the server had open when the flag was set
  Clock::duration all_closed{};  // from the flag to the server seeing none open
  Clock::duration returned{};    // from the flag to GenerateLoad returning
  std::optional<Result<LoadResult>> result;
  int marks = 0;  // on_mark calls
};

// Runs GenerateLoad(o) on a thread, sets its stop flag after `after`, and measures from here.
Stopped RunAndStop(LoadOptions o, const TestHttpServer& server, Clock::duration after) {
  std::atomic<bool> stop{false};
  std::atomic<int> marks{0};
  o.stop = &stop;
  Stopped out;
  std::atomic<bool> returned{false};
  Clock::time_point returned_at;
  std::thread run([&] {
    out.result.emplace(GenerateLoad(o, [&](bool) { ++marks; }));
    returned_at = Clock::now();
    returned.store(true);
  });
  std::this_thread::sleep_for(after);
  out.open_before = server.open();
  const Clock::time_point set = Clock::now();
  stop.store(true);
  while (server.open() > 0 && Clock::now() - set < 5s) std::this_thread::sleep_for(200us);
  out.all_closed = Clock::now() - set;
  run.join();
  out.returned = returned_at - set;
  out.marks = marks.load();
  return out;
}

class EngineCancelTest : public EngineParamTest {
 protected:
  void SetUp() override {
    EngineParamTest::SetUp();
    if (IsSkipped()) return;
    StartSanitizerThread();
    fds_ = CountEntries("/proc/self/fd");
    threads_ = CountEntries("/proc/self/task");
  }
  // After the server is gone: what the run opened is closed and joined.
  void ExpectNothingLeft() {
    EXPECT_EQ(CountEntries("/proc/self/fd"), fds_);
    EXPECT_EQ(CountEntries("/proc/self/task"), threads_);
  }

  LoadOptions Options(uint16_t port) const {
    LoadOptions o;
    o.port = port;
    o.connections = 4;
    o.threads = 2;
    o.duration = 30s;
    o.engine = GetParam();
    return o;
  }

  static void ExpectStopped(const Stopped& s, const std::string& phase) {
    EXPECT_GT(s.open_before, 0);
    EXPECT_LT(s.all_closed, kCloseBound)
        << std::chrono::duration_cast<std::chrono::microseconds>(s.all_closed).count() << " us";
    EXPECT_LT(s.returned, kCloseBound)
        << std::chrono::duration_cast<std::chrono::microseconds>(s.returned).count() << " us";
    ASSERT_TRUE(s.result.has_value());
    ASSERT_FALSE(s.result->ok());
    EXPECT_EQ(s.result->status().code(), StatusCode::kCancelled);
    EXPECT_NE(s.result->status().message().find("load stopped by its caller"), std::string::npos)
        << s.result->status().message();
    EXPECT_NE(s.result->status().message().find("during " + phase), std::string::npos)
        << s.result->status().message();
  }

  int fds_ = 0;
  int threads_ = 0;
};
INSTANTIATE_TEST_SUITE_P(Engines, EngineCancelTest, kEngines, EngineParamName);

TEST_P(EngineCancelTest, StopsDuringMeasurement) {
  {
    TestHttpServer server(Mode::kOk);
    ASSERT_TRUE(server.ok());
    const Stopped s = RunAndStop(Options(server.port()), server, kStopAfter);
    ExpectStopped(s, "the measured interval");
    EXPECT_EQ(s.marks, 1);  // the interval began and never ended
    EXPECT_GT(server.responses(), 0u);
  }
  ExpectNothingLeft();
}

TEST_P(EngineCancelTest, StopsDuringWarmup) {
  {
    TestHttpServer server(Mode::kOk);
    ASSERT_TRUE(server.ok());
    LoadOptions o = Options(server.port());
    o.warmup = 30s;
    const Stopped s = RunAndStop(o, server, kStopAfter);
    ExpectStopped(s, "the warm-up");
    EXPECT_EQ(s.marks, 0);
  }
  ExpectNothingLeft();
}

TEST_P(EngineCancelTest, StopsAnOpenLoopBetweenSlots) {
  // At 20 requests/s a worker sleeps 100 ms between its slots: longer than the bound.
  {
    TestHttpServer server(Mode::kOk);
    ASSERT_TRUE(server.ok());
    LoadOptions o = Options(server.port());
    o.rate = 20;
    o.max_conns = 8;
    const Stopped s = RunAndStop(o, server, kStopAfter);
    ExpectStopped(s, "the measured interval");
  }
  ExpectNothingLeft();
}

TEST_P(EngineCancelTest, StopsDuringTheDrain) {
  // A silent server: the interval's requests wait for their 30 s timeout after it ends.
  {
    TestHttpServer server(Mode::kSilent);
    ASSERT_TRUE(server.ok());
    LoadOptions o = Options(server.port());
    o.duration = 100ms;
    o.timeout = 30s;
    const Stopped s = RunAndStop(o, server, kStopAfter);
    ExpectStopped(s, "the drain");
    EXPECT_EQ(s.marks, 2);
  }
  ExpectNothingLeft();
}

TEST_P(EngineCancelTest, StoppedBeforeItStartsOpensNothing) {
  TestHttpServer server(Mode::kOk);
  ASSERT_TRUE(server.ok());
  const std::atomic<bool> stop{true};
  LoadOptions o = Options(server.port());
  o.stop = &stop;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(server.accepted(), 0u);
}

TEST_P(EngineCancelTest, AFlagNeverSetChangesNothing) {
  TestHttpServer server(Mode::kOk);
  ASSERT_TRUE(server.ok());
  const std::atomic<bool> stop{false};
  LoadOptions o = Options(server.port());
  o.duration = 200ms;
  o.stop = &stop;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->requests, 0u);
}

}  // namespace
}  // namespace benchlab
