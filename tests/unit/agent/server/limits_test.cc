#include "agent/server/limits.h"

#include <gtest/gtest.h>

#include <cmath>

namespace benchlab {
namespace {

v1::RunLoadRequest Load() {
  v1::RunLoadRequest req;
  req.set_connections(10);
  req.set_threads(1);
  req.set_duration_ms(2000);
  return req;
}

std::string Refusal(const v1::RunLoadRequest& req,
                    const AgentLimits& limits = ResolveLimits({}, 4)) {
  Status st = CheckLoadLimits(req, limits);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  return st.message();
}

TEST(LimitsTest, DefaultsAndPerCpuOnes) {
  AgentLimits limits = ResolveLimits({}, 4);
  EXPECT_EQ(limits.max_duration, std::chrono::minutes(10));
  EXPECT_EQ(limits.max_warmup, std::chrono::minutes(5));
  EXPECT_EQ(limits.max_timeout, std::chrono::seconds(60));
  EXPECT_EQ(limits.max_connections, 10000);
  EXPECT_EQ(limits.max_threads, 4);
  EXPECT_EQ(limits.max_rate, 1e6);
  EXPECT_EQ(limits.max_depth, 128);
  EXPECT_EQ(limits.max_body, 16u << 20);
  EXPECT_EQ(limits.max_conformance_cases, 1000);
  EXPECT_EQ(limits.max_targets, 4);
  EXPECT_EQ(limits.spool_max_bytes, 256u << 20);
  EXPECT_EQ(ResolveLimits({}, 0).max_targets, 1) << "at least one";
  AgentLimits set;
  set.max_threads = 16;
  EXPECT_EQ(ResolveLimits(set, 4).max_threads, 16) << "a configured limit stays";
  EXPECT_TRUE(CheckLoadLimits(Load(), limits).ok());
}

TEST(LimitsTest, OverALimitNamesFieldValueKeyAndLimit) {
  auto req = Load();
  req.set_duration_ms(20000000000);
  EXPECT_EQ(Refusal(req), "duration_ms 20000000000 exceeds limits.max_duration = 10m");
  req = Load();
  req.set_warmup_ms(300001);
  EXPECT_EQ(Refusal(req), "warmup_ms 300001 exceeds limits.max_warmup = 5m");
  req = Load();
  req.set_timeout_ms(61000);
  EXPECT_EQ(Refusal(req), "timeout_ms 61000 exceeds limits.max_timeout = 1m");
  req = Load();
  req.set_connections(10001);
  EXPECT_EQ(Refusal(req), "connections 10001 exceeds limits.max_connections = 10000");
  req = Load();
  req.set_max_conns(20000);
  EXPECT_EQ(Refusal(req), "max_conns 20000 exceeds limits.max_connections = 10000");
  req = Load();
  req.set_threads(5);
  EXPECT_EQ(Refusal(req), "threads 5 exceeds limits.max_threads = 4");
  req = Load();
  req.set_rate(2500000.5);
  EXPECT_EQ(Refusal(req), "rate 2500000.5 exceeds limits.max_rate = 1000000");
  req = Load();
  req.set_depth(129);
  EXPECT_EQ(Refusal(req), "depth 129 exceeds limits.max_depth = 128");
  AgentLimits tight = ResolveLimits({}, 1);
  tight.max_duration = std::chrono::milliseconds(1500);
  req = Load();
  EXPECT_EQ(Refusal(req, tight), "duration_ms 2000 exceeds limits.max_duration = 1.5s");
}

TEST(LimitsTest, NonsenseIsRefusedWhateverTheLimits) {
  auto req = Load();
  req.set_duration_ms(0);
  EXPECT_EQ(Refusal(req), "duration_ms 0: expected more than 0");
  req = Load();
  req.set_duration_ms(-5);
  EXPECT_EQ(Refusal(req), "duration_ms -5: expected more than 0");
  req = Load();
  req.set_warmup_ms(-1);
  EXPECT_EQ(Refusal(req), "warmup_ms -1: expected 0 or more");
  req = Load();
  req.set_connections(0);
  EXPECT_EQ(Refusal(req), "connections 0: expected 1 or more");
  req = Load();
  req.set_threads(-3);
  EXPECT_EQ(Refusal(req), "threads -3: expected 0 or more");
  req = Load();
  req.set_rate(std::nan(""));
  EXPECT_EQ(Refusal(req), "rate nan: expected a finite number of requests per second, 0 or more");
  req = Load();
  req.set_rate(-1);
  EXPECT_EQ(Refusal(req).substr(0, 8), "rate -1:");
}

TEST(LimitsTest, ConformanceCasesAndTimeout) {
  v1::CheckConformanceRequest req;
  for (int i = 0; i < 3; ++i) req.add_cases();
  AgentLimits limits = ResolveLimits({}, 1);
  EXPECT_TRUE(CheckConformanceLimits(req, limits).ok());
  limits.max_conformance_cases = 2;
  EXPECT_EQ(CheckConformanceLimits(req, limits).message(),
            "cases 3 exceeds limits.max_conformance_cases = 2");
  limits.max_conformance_cases = 10;
  req.set_timeout_ms(-1);
  EXPECT_EQ(CheckConformanceLimits(req, limits).message(), "timeout_ms -1: expected 0 or more");
}

TEST(LimitsTest, FormatsDurationsAsTheConfigurationWouldWriteThem) {
  EXPECT_EQ(FormatLimit(std::chrono::minutes(10)), "10m");
  EXPECT_EQ(FormatLimit(std::chrono::seconds(90)), "90s");
  EXPECT_EQ(FormatLimit(std::chrono::milliseconds(250)), "250ms");
}

}  // namespace
}  // namespace benchlab
