#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <numeric>
#include <vector>

#include "loadgen/load.h"
#include "tests/unit/loadgen/engine_param.h"
#include "tests/unit/loadgen/test_http_server.h"

namespace benchlab {
namespace {

using namespace std::chrono_literals;
using Mode = TestHttpServer::Mode;

class EngineTest : public EngineParamTest {
 protected:
  LoadOptions Options(uint16_t port, int threads, int connections) const {
    LoadOptions o;
    o.host = "127.0.0.1";
    o.port = port;
    o.threads = threads;
    o.connections = connections;
    o.duration = 300ms;
    o.timeout = 1s;
    o.engine = GetParam();
    return o;
  }
};
INSTANTIATE_TEST_SUITE_P(Engines, EngineTest, kEngines, EngineParamName);

uint64_t SumStatuses(const LoadResult& r) {
  uint64_t sum = 0;
  for (const auto& [status, n] : r.status_counts) sum += n;
  return sum;
}

uint64_t Sum(const std::vector<uint64_t>& v) { return std::accumulate(v.begin(), v.end(), 0ull); }

TEST_P(EngineTest, KeepAliveLoadIsCountedConsistently) {
  TestHttpServer server(Mode::kOk);
  ASSERT_TRUE(server.ok());
  std::vector<bool> marks;
  Result<LoadResult> r =
      GenerateLoad(Options(server.port(), 2, 4), [&](bool m) { marks.push_back(m); });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->requests, 0u);
  EXPECT_EQ(r->requests, SumStatuses(*r));
  EXPECT_EQ(r->status_counts[200], r->requests);
  EXPECT_EQ(r->non_2xx, 0u);
  EXPECT_EQ(r->errors.Total(), 0u);
  EXPECT_EQ(r->reconnects, 0u);
  EXPECT_EQ(r->latency_us.Count(), r->requests);
  ASSERT_EQ(r->per_second_requests.size(), 1u);  // 300 ms is one partial second
  EXPECT_LE(Sum(r->per_second_requests), r->requests);
  EXPECT_EQ(r->thread_cpu_s.size(), 2u);
  EXPECT_DOUBLE_EQ(r->duration_s, 0.3);
  EXPECT_DOUBLE_EQ(r->rps, static_cast<double>(r->requests) / 0.3);
  EXPECT_EQ(r->bytes_read, r->requests * 43);  // each response is 43 bytes
  EXPECT_EQ(marks, (std::vector<bool>{true, false}));
  EXPECT_LE(r->measure_start, r->measure_end);
  EXPECT_EQ(server.accepted(), 4u);
  EXPECT_GE(server.responses(), r->requests);  // no phantom responses
}

TEST_P(EngineTest, WarmupResponsesAreNotCounted) {
  TestHttpServer server(Mode::kOk);
  LoadOptions o = Options(server.port(), 1, 2);
  o.warmup = 200ms;
  o.duration = 200ms;
  cpu_set_t allowed;
  ASSERT_EQ(::sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int first_allowed = 0;
  while (!CPU_ISSET(first_allowed, &allowed)) ++first_allowed;
  o.cpus = {first_allowed};  // pinned threads must still work
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->requests, 0u);
  EXPECT_EQ(r->latency_us.Count(), r->requests);
  // The server also answered during the warm-up, which the client must have dropped.
  EXPECT_GT(server.responses(), r->requests);
}

TEST_P(EngineTest, NonSuccessStatusesAreCounted) {
  TestHttpServer server(Mode::kNotFound);
  Result<LoadResult> r = GenerateLoad(Options(server.port(), 1, 2));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->requests, 0u);
  EXPECT_EQ(r->status_counts[404], r->requests);
  EXPECT_EQ(r->status_counts.count(200), 0u);
  EXPECT_EQ(r->non_2xx, r->requests);
  EXPECT_EQ(r->errors.Total(), 0u);
  EXPECT_GE(server.responses(), r->requests);
}

TEST_P(EngineTest, ConnectionCloseReconnects) {
  TestHttpServer server(Mode::kCloseEach);
  Result<LoadResult> r = GenerateLoad(Options(server.port(), 2, 4));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->requests, 0u);
  EXPECT_EQ(r->status_counts[200], r->requests);
  EXPECT_GT(r->reconnects, 0u);
  EXPECT_EQ(r->errors.Total(), 0u);
  EXPECT_GE(server.responses(), r->requests);
  EXPECT_GE(server.accepted(), r->requests);  // one connection per response
}

TEST_P(EngineTest, NoListenerCountsConnectErrors) {
  // Bind a port and close it again: nothing listens there for the test's short life.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);

  LoadOptions o = Options(ntohs(addr.sin_port), 2, 4);
  o.duration = 200ms;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 0u);
  EXPECT_GT(r->errors.connect, 0u);
  EXPECT_EQ(r->errors.Total(), r->errors.connect);
  EXPECT_EQ(r->latency_us.Count(), 0u);
  EXPECT_EQ(r->rps, 0.0);
  // The backoff keeps a dead target from turning into a busy loop: 4 connections retrying
  // every 10 ms make tens of attempts in 200 ms, not hundreds of thousands.
  EXPECT_LT(r->errors.connect, 10000u);
}

TEST_P(EngineTest, SilentServerCountsTimeouts) {
  TestHttpServer server(Mode::kSilent);
  LoadOptions o = Options(server.port(), 1, 2);
  o.timeout = 200ms;
  o.duration = 500ms;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 0u);
  EXPECT_GT(r->errors.timeout, 0u);
  EXPECT_EQ(r->errors.Total(), r->errors.timeout);
  EXPECT_GT(r->reconnects, 0u);  // each timed-out connection was reopened
  EXPECT_GT(server.requests(), 2u);
  EXPECT_EQ(server.responses(), 0u);
}

TEST_P(EngineTest, FewerConnectionsThanThreadsUsesOneThreadPerConnection) {
  TestHttpServer server(Mode::kOk);
  LoadOptions o = Options(server.port(), 4, 2);
  o.duration = 100ms;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->thread_cpu_s.size(), 2u);
  EXPECT_EQ(server.accepted(), 2u);
}

TEST_P(EngineTest, HeadAndBodyRequests) {
  TestHttpServer server(Mode::kOk);
  LoadOptions o = Options(server.port(), 1, 1);
  o.duration = 100ms;
  o.method = "POST";
  o.body = "payload";
  o.headers = {{"X-Test", "1"}};
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->requests, 0u);
  EXPECT_EQ(r->errors.Total(), 0u);
}

TEST_P(EngineTest, InvalidOptionsAreRejected) {
  LoadOptions base = Options(1, 1, 1);
  auto expect_invalid = [](const LoadOptions& o, const char* what) {
    Result<LoadResult> r = GenerateLoad(o);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << what;
  };
  LoadOptions o = base;
  o.connections = 0;
  expect_invalid(o, "connections");
  o = base;
  o.threads = 0;
  expect_invalid(o, "threads");
  o = base;
  o.duration = 0ms;
  expect_invalid(o, "duration");
  o = base;
  o.timeout = 0ms;
  expect_invalid(o, "timeout");
  o = base;
  o.cpus = {-1};
  expect_invalid(o, "cpus");
  o = base;
  o.method = "GET /x";
  expect_invalid(o, "method");
  o = base;
  o.headers = {{"X", "a\r\nInjected: 1"}};
  expect_invalid(o, "header");
}

TEST_P(EngineTest, UnresolvableHostIsAnError) {
  LoadOptions o = Options(80, 1, 1);
  o.host = "no-such-host.invalid";
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no-such-host.invalid"), std::string::npos);
}

TEST_P(EngineTest, PinningToAMissingCpuFails) {
  TestHttpServer server(Mode::kOk);
  cpu_set_t allowed;
  ASSERT_EQ(::sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int missing = CPU_SETSIZE - 1;
  while (missing > 0 && CPU_ISSET(missing, &allowed)) --missing;
  LoadOptions o = Options(server.port(), 1, 1);
  o.cpus = {missing};
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("CPU " + std::to_string(missing)), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace benchlab
