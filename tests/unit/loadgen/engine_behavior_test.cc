// The engine against servers that count, close, pipeline, time out, misbehave and answer
// wrongly: exact counts, pipelining depth, syscalls per request, reconnects and retries, the
// request mix, response checks and CPU affinity.
#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "loadgen/load.h"
#include "tests/unit/loadgen/engine_param.h"
#include "tests/unit/loadgen/raw_http_server.h"
#include "tests/unit/loadgen/test_http_server.h"

namespace benchlab {
namespace {

using namespace std::chrono_literals;
using Mode = TestHttpServer::Mode;
using Behavior = TestHttpServer::Behavior;

class EngineBehaviorTest : public EngineParamTest {
 protected:
  LoadOptions Options(uint16_t port, int threads, int connections) const {
    LoadOptions o;
    o.port = port;
    o.threads = threads;
    o.connections = connections;
    o.duration = 250ms;
    o.timeout = 1s;
    o.engine = GetParam();
    return o;
  }
};
INSTANTIATE_TEST_SUITE_P(Engines, EngineBehaviorTest, kEngines, EngineParamName);

MixRequest Entry(const char* path, uint32_t weight, const char* method = "GET",
                 const char* body = "") {
  MixRequest m;
  m.method = method;
  m.path = path;
  m.body = body;
  m.weight = weight;
  return m;
}

Behavior Server(int batch, int close_every = 0) {
  Behavior b;
  b.batch = batch;
  b.close_every = close_every;
  return b;
}

uint64_t SeriesSum(const LoadResult& r) {
  uint64_t sum = 0;
  for (const SecondPoint& p : r.series) sum += p.requests;
  return sum;
}

// Every request sent got a response or an error; the server saw exactly what was sent.
void ExpectExactCounts(const LoadResult& r, const TestHttpServer& server) {
  EXPECT_EQ(r.sent, r.requests + r.errors.Failed());
  EXPECT_EQ(SeriesSum(r), r.requests);
  EXPECT_EQ(std::accumulate(r.mix_sent.begin(), r.mix_sent.end(), uint64_t{0}), r.sent);
  ASSERT_TRUE(server.WaitQuiet());
  EXPECT_EQ(server.requests(), r.sent);
}

TEST_P(EngineBehaviorTest, CountsAreExactAgainstACountingServer) {
  TestHttpServer server(Mode::kOk);
  LoadOptions o = Options(server.port(), 2, 4);
  o.depth = 4;
  o.method = "POST";
  o.body = "0123456789";
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->requests, 100u);
  EXPECT_EQ(r->errors.Total(), 0u);
  ExpectExactCounts(*r, server);
  EXPECT_EQ(server.responses(), r->requests);  // the drain collected every answer
  EXPECT_EQ(r->bytes_read, r->requests * 43);
}

TEST_P(EngineBehaviorTest, RequestsPerConnectionOpensAFreshConnectionEveryNRequests) {
  TestHttpServer server(Mode::kOk);
  LoadOptions o = Options(server.port(), 1, 2);
  o.depth = 2;
  o.requests_per_connection = 5;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->requests, 100u);
  EXPECT_EQ(r->errors.Total(), 0u);
  EXPECT_EQ(r->retries, 0u) << "the client closes only once every request is answered";
  ExpectExactCounts(*r, server);
  // Each connection carried five requests: two opened at start, one more per five requests.
  EXPECT_NEAR(static_cast<double>(server.accepted()), static_cast<double>(r->sent) / 5.0, 3.0);
  EXPECT_NEAR(static_cast<double>(r->reconnects), static_cast<double>(r->sent) / 5.0, 3.0);
}

TEST_P(EngineBehaviorTest, DepthOneCostsOneWriteAndOneReadPerRequest) {
  TestHttpServer server(Mode::kOk);
  Result<LoadResult> r = GenerateLoad(Options(server.port(), 1, 4));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_GT(r->requests, 100u);
  // Warm-up is empty, so every write and read belongs to a counted request, give or take the
  // connections' first and last.
  EXPECT_LE(r->syscalls.writes, r->sent + 4);
  EXPECT_LE(r->syscalls.reads, r->requests + 8);
  // Interest in writes is never touched per request: one epoll_ctl per connection opened.
  EXPECT_LE(r->syscalls.epoll_ctls, 8u);
}

TEST_P(EngineBehaviorTest, PipelinesExactlyDepthRequests) {
  // This server answers only when eight requests wait on a connection: at depth 8 the client
  // makes progress, and it never has more than eight in flight.
  TestHttpServer server(Server(8));
  LoadOptions o = Options(server.port(), 1, 2);
  o.depth = 8;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->requests, 100u);
  EXPECT_EQ(r->errors.Total(), 0u);
  EXPECT_EQ(server.max_waiting(), 8);
  EXPECT_LE(r->syscalls.writes, r->sent / 8 + 4);  // a batch is written at once
  ExpectExactCounts(*r, server);
}

TEST_P(EngineBehaviorTest, DepthOneCannotSatisfyABatchingServer) {
  TestHttpServer server(Server(8));
  LoadOptions o = Options(server.port(), 1, 1);
  o.timeout = 100ms;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 0u);
  EXPECT_GT(r->errors.timeout, 0u);
  EXPECT_EQ(server.max_waiting(), 1);
}

TEST_P(EngineBehaviorTest, ServerClosesArePipelinedRetriesNotErrors) {
  // Every third response closes the connection; the fourth request in flight was never
  // processed, so it is sent again on a new connection.
  TestHttpServer server(Server(0, 3));
  LoadOptions o = Options(server.port(), 1, 2);
  o.depth = 4;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->requests, 30u);
  EXPECT_EQ(r->errors.Total(), 0u);
  EXPECT_GT(r->reconnects, 10u);
  EXPECT_GT(r->retries, 10u);
  EXPECT_EQ(r->sent, r->requests);
  ExpectExactCounts(*r, server);
}

TEST_P(EngineBehaviorTest, RetriedRequestsKeepTheirOwnResponseFraming) {
  // GET and HEAD alternate, pipelined, and every third response closes the connection: after
  // each reconnect the response to the oldest retried request must still be read as the answer
  // to a HEAD (no body) or a GET (a body), or the stream falls out of step.
  TestHttpServer server(Server(0, 3));
  LoadOptions o = Options(server.port(), 1, 2);
  o.depth = 4;
  o.mix = {Entry("/", 1), Entry("/", 1, "HEAD")};
  o.mix[0].expect_body = "hello";
  o.mix[1].expect_body = "";
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->retries, 10u);
  EXPECT_EQ(r->errors.Total(), 0u);
  EXPECT_EQ(r->sent, r->requests);
  ExpectExactCounts(*r, server);
}

TEST_P(EngineBehaviorTest, TimedOutRequestsAreErrorsWithTheirLatencyRecorded) {
  TestHttpServer server(Mode::kSilent);
  LoadOptions o = Options(server.port(), 1, 2);
  o.timeout = 100ms;
  o.duration = 300ms;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 0u);
  // Two connections, each timing out every 100 ms for 300 ms, and the drain waits for the last.
  EXPECT_GE(r->errors.timeout, 4u);
  EXPECT_LE(r->errors.timeout, 8u);
  EXPECT_EQ(r->sent, r->errors.timeout);
  EXPECT_EQ(r->latency_us.Count(), r->errors.timeout);
  EXPECT_GE(r->latency_us.Min(), 100'000u);
  EXPECT_LT(r->latency_us.Max(), 200'000u);
  ExpectExactCounts(*r, server);
}

TEST_P(EngineBehaviorTest, MalformedResponsesAreParseErrors) {
  TestHttpServer server(Mode::kGarbage);
  Result<LoadResult> r = GenerateLoad(Options(server.port(), 1, 2));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 0u);
  EXPECT_GT(r->errors.parse, 0u);
  EXPECT_EQ(r->errors.Total(), r->errors.parse);
  EXPECT_EQ(r->sent, r->errors.parse);
}

TEST_P(EngineBehaviorTest, RequestMixFollowsTheWeights) {
  TestHttpServer server(Mode::kOk);
  LoadOptions o = Options(server.port(), 2, 4);
  o.depth = 2;
  o.mix = {Entry("/a", 3), Entry("/b", 1), Entry("/c", 1, "POST", "xyz")};
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->mix_sent.size(), 3u);
  ASSERT_GT(r->sent, 200u);
  // Each thread walks the cycle 0 0 1 0 2 ... in order, so the shares are exact to within a
  // cycle per thread.
  const double cycles = static_cast<double>(r->sent) / 5;
  EXPECT_NEAR(static_cast<double>(r->mix_sent[0]), 3 * cycles, 2 * 3);
  EXPECT_NEAR(static_cast<double>(r->mix_sent[1]), cycles, 2 * 1);
  EXPECT_NEAR(static_cast<double>(r->mix_sent[2]), cycles, 2 * 1);
  ExpectExactCounts(*r, server);
  const auto paths = server.paths();
  EXPECT_EQ(paths.at("/a"), r->mix_sent[0]);
  EXPECT_EQ(paths.at("/b"), r->mix_sent[1]);
  EXPECT_EQ(paths.at("/c"), r->mix_sent[2]);
}

TEST_P(EngineBehaviorTest, EveryRunHeaderIsSentUnlessTheMixEntryNamesIt) {
  RawHttpServer server([](RawHttpServer& s, int fd) {
    return s.Send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  });
  LoadOptions o = Options(server.port(), 1, 1);
  o.duration = 50ms;
  o.headers = {{"X-Twice", "1"}, {"X-Twice", "2"}, {"X-Run", "run"}};
  o.mix = {Entry("/a", 1)};
  o.mix[0].headers = {{"x-run", "entry"}};
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string received = server.received();
  EXPECT_EQ(received.rfind("GET /a HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(server.port()) +
                               "\r\nx-run: entry\r\nX-Twice: 1\r\nX-Twice: 2\r\n\r\n",
                           0),
            0u)
      << received.substr(0, 200);
  EXPECT_EQ(received.find("X-Run: run"), std::string::npos);
}

TEST_P(EngineBehaviorTest, ExpectStatusAndBodyCountMismatches) {
  TestHttpServer server(Mode::kOk);
  auto run = [&](LoadOptions o) {
    o.duration = 100ms;
    Result<LoadResult> r = GenerateLoad(o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_GT(r->requests, 0u);
    return *r;
  };
  LoadOptions o = Options(server.port(), 1, 2);
  o.expect_status = {200};
  o.expect_body = "hello";
  EXPECT_EQ(run(o).errors.mismatch, 0u);
  o.expect_body = "hellO";
  LoadResult r = run(o);
  EXPECT_EQ(r.errors.mismatch, r.requests);
  o.expect_body = "hell";  // a prefix is not the body
  r = run(o);
  EXPECT_EQ(r.errors.mismatch, r.requests);
  o.expect_body.reset();
  o.path = "/404";
  r = run(o);
  EXPECT_EQ(r.errors.mismatch, r.requests);
  EXPECT_EQ(r.status_counts[404], r.requests);
  // In a mix, an entry's own expectation wins over the run's.
  o.path = "/";
  o.expect_status = {404};
  o.mix = {Entry("/404", 1), Entry("/", 1)};
  o.mix[1].expect_status = {200};
  r = run(o);
  EXPECT_EQ(r.errors.mismatch, 0u);
  EXPECT_GT(r.status_counts[200], 0u);
  EXPECT_GT(r.status_counts[404], 0u);
}

TEST_P(EngineBehaviorTest, ExpectBodyChecksTheDecodedChunkedBody) {
  TestHttpServer server(Mode::kChunked);
  LoadOptions o = Options(server.port(), 1, 2);
  o.duration = 100ms;
  o.depth = 3;
  o.expect_body = "hello";
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->requests, 0u);
  EXPECT_EQ(r->errors.Total(), 0u);
  o.expect_body = "help!";
  r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->errors.mismatch, r->requests);
}

std::vector<int> Allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

TEST_P(EngineBehaviorTest, WorkersStayInsideTheInheritedAffinity) {
  TestHttpServer server(Mode::kOk);
  const int cpu = Allowed().back();
  // As `taskset -c CPU benchlab load` would: the caller runs on one CPU only.
  std::thread caller([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(::sched_setaffinity(0, sizeof(one), &one), 0);
    LoadOptions o = Options(server.port(), 3, 3);
    o.duration = 100ms;
    Result<LoadResult> r = GenerateLoad(o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->worker_cpus.size(), 3u);
    for (const std::vector<int>& cpus : r->worker_cpus) EXPECT_EQ(cpus, std::vector<int>{cpu});
  });
  caller.join();
  // Without a restriction the workers see exactly the process's set, nothing more.
  LoadOptions o = Options(server.port(), 2, 2);
  o.duration = 50ms;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const std::vector<int>& cpus : r->worker_cpus) EXPECT_EQ(cpus, Allowed());
  // --cpus pins each worker to one CPU, round-robin.
  o.cpus = {Allowed().front()};
  r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const std::vector<int>& cpus : r->worker_cpus) {
    EXPECT_EQ(cpus, std::vector<int>{Allowed().front()});
  }
}

}  // namespace
}  // namespace benchlab
