// The open loop against real sockets: exact slot accounting, a stall shown in full by corrected
// latency and hidden by uncorrected latency, the bounded queue, connection growth, Poisson
// arrivals and the per-second series.
#include <gtest/gtest.h>

#include <chrono>

#include "loadgen/load.h"
#include "tests/unit/loadgen/engine_param.h"
#include "tests/unit/loadgen/test_http_server.h"

namespace benchlab {
namespace {

using namespace std::chrono_literals;
using Mode = TestHttpServer::Mode;
using Behavior = TestHttpServer::Behavior;

Behavior Stall(uint64_t at, int ms) {
  Behavior b;
  b.stall_at = at;
  b.stall_ms = ms;
  return b;
}

class OpenLoopTest : public EngineParamTest {
 protected:
  LoadOptions OpenLoop(uint16_t port, double rate, int threads, int connections) const {
    LoadOptions o;
    o.port = port;
    o.threads = threads;
    o.connections = connections;
    o.rate = rate;
    o.duration = 300ms;
    o.timeout = 1s;
    o.engine = GetParam();
    return o;
  }
};
INSTANTIATE_TEST_SUITE_P(Engines, OpenLoopTest, kEngines, EngineParamName);

TEST_P(OpenLoopTest, EverySlotIsScheduledAndAccountedFor) {
  TestHttpServer server(Mode::kOk);
  Result<LoadResult> r = GenerateLoad(OpenLoop(server.port(), 1000, 2, 4));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->open_loop);
  // Slots k = 0..299 fall at t0 + k ms inside the 300 ms; the two workers take turns.
  EXPECT_EQ(r->scheduled, 300u);
  EXPECT_EQ(r->dropped, 0u);
  EXPECT_EQ(r->sent, 300u);
  EXPECT_EQ(r->requests, 300u);
  EXPECT_EQ(r->errors.Total(), 0u);
  EXPECT_EQ(r->latency_us.Count(), 300u);
  EXPECT_EQ(r->latency_uncorrected_us.Count(), 300u);
  EXPECT_EQ(r->generator_lag_us.Count(), 300u);
  EXPECT_GT(r->throughput_rps, 0.0);
  EXPECT_LE(r->throughput_rps, r->rps);  // those completed after the interval ended are not in it
  // Corrected latency starts at the intended time, so it is never below the uncorrected one.
  EXPECT_GE(r->latency_us.Max(), r->latency_uncorrected_us.Max());
  EXPECT_GE(r->latency_us.Mean(), r->latency_uncorrected_us.Mean());
  ASSERT_TRUE(server.WaitQuiet());
  EXPECT_EQ(server.requests(), 300u);
}

TEST_P(OpenLoopTest, WarmupSlotsAreNotCounted) {
  TestHttpServer server(Mode::kOk);
  LoadOptions o = OpenLoop(server.port(), 1000, 1, 2);
  o.warmup = 100ms;
  o.duration = 200ms;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->scheduled, 200u);
  EXPECT_EQ(r->requests, 200u);
  ASSERT_TRUE(server.WaitQuiet());
  EXPECT_EQ(server.requests(), 300u);  // the warm-up's 100 were sent, not counted
}

TEST_P(OpenLoopTest, CorrectedLatencyShowsAStallThatUncorrectedHides) {
  // At 2000/s on two connections, the server stops for 200 ms after 400 requests. The ~400
  // slots due during the stall wait in the queue: their corrected latency runs from 200 ms
  // down to 0, about a fifth of the run. Only the two requests in flight see it uncorrected.
  TestHttpServer server(Stall(400, 200));
  LoadOptions o = OpenLoop(server.port(), 2000, 1, 2);
  o.duration = 1200ms;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->scheduled, 2400u);
  EXPECT_EQ(r->dropped, 0u);
  EXPECT_EQ(r->requests, 2400u);
  EXPECT_GE(r->latency_us.ValueAtPercentile(90), 60'000u);
  EXPECT_GE(r->latency_us.ValueAtPercentile(99), 150'000u);
  EXPECT_LT(r->latency_uncorrected_us.ValueAtPercentile(99), 50'000u);
  EXPECT_GE(r->latency_us.Max(), 190'000u);
  EXPECT_GE(r->latency_uncorrected_us.Max(), 150'000u);  // the ones in flight did wait
  // The series puts the stall in the first second.
  ASSERT_EQ(r->series.size(), 2u);
  EXPECT_GE(r->series[0].p99_us, 150'000u);
  EXPECT_LT(r->series[1].p99_us, 50'000u);
  EXPECT_EQ(r->series[0].requests + r->series[1].requests, r->requests);
}

TEST_P(OpenLoopTest, AFullQueueDropsSlotsAndCountsThem) {
  TestHttpServer server(Stall(20, 150));
  LoadOptions o = OpenLoop(server.port(), 1000, 1, 1);
  o.max_queue = 10;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->scheduled, 300u);
  EXPECT_GT(r->dropped, 100u);  // ~150 slots came due with room for 10
  EXPECT_EQ(r->scheduled, r->sent + r->dropped);
  EXPECT_EQ(r->sent, r->requests + r->errors.Failed());
  ASSERT_TRUE(server.WaitQuiet());
  EXPECT_EQ(server.requests(), r->sent);
}

TEST_P(OpenLoopTest, ConnectionsGrowUpToMaxConns) {
  TestHttpServer server(Stall(20, 100));
  LoadOptions o = OpenLoop(server.port(), 1000, 1, 1);
  o.max_conns = 6;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->peak_connections, 6);
  EXPECT_EQ(r->dropped, 0u);
  EXPECT_EQ(r->requests, 300u);
  ASSERT_TRUE(server.WaitQuiet());
  EXPECT_EQ(server.accepted(), 6u);
}

TEST_P(OpenLoopTest, PoissonArrivalsKeepTheRateOnAverage) {
  TestHttpServer server(Mode::kOk);
  LoadOptions o = OpenLoop(server.port(), 4000, 2, 4);
  o.arrival = Arrival::kPoisson;
  o.seed = 99;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(static_cast<double>(r->scheduled), 1200, 5 * 35);  // sqrt(1200) ~ 35
  EXPECT_EQ(r->scheduled, r->sent + r->dropped);
  EXPECT_EQ(r->sent, r->requests + r->errors.Failed());
}

TEST_P(OpenLoopTest, OptionsAreValidated) {
  LoadOptions o = OpenLoop(1, 1000, 1, 4);
  o.max_conns = 2;  // below connections
  EXPECT_EQ(GenerateLoad(o).status().code(), StatusCode::kInvalidArgument);
  o = OpenLoop(1, -5, 1, 1);
  EXPECT_EQ(GenerateLoad(o).status().code(), StatusCode::kInvalidArgument);
  o = OpenLoop(1, 1000, 1, 1);
  o.depth = LoadOptions::kMaxDepth + 1;
  EXPECT_EQ(GenerateLoad(o).status().code(), StatusCode::kInvalidArgument);
  o.depth = 1;
  o.expect_status = {42};
  EXPECT_EQ(GenerateLoad(o).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace benchlab
