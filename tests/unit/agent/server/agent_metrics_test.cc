// The agent's /metrics: what a snapshot shows (absent readings are absent, not 0), served over
// HTTP on loopback only.
#include "agent/server/agent_metrics.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <string>

#include "tests/unit/support/slow_clients.h"

namespace benchlab {
namespace {

bool Has(const std::string& body, const std::string& line) {
  return body.find(line) != std::string::npos;
}

TEST(AgentMetricsTest, ShowsTheSnapshotAndLeavesOutWhatIsUnknown) {
  AgentMetricsSnapshot snapshot;
  snapshot.registered = true;
  snapshot.readings.targets_running = 2;
  snapshot.readings.loads_running = 1;
  snapshot.spool_bytes = 4096;
  AgentMetrics metrics("load-1", [&] { return snapshot; });
  std::string body = metrics.Scrape();
  EXPECT_TRUE(Has(body, "benchlab_agent_registered 1\n")) << body;
  EXPECT_TRUE(Has(body, "benchlab_agent_targets_running 2\n")) << body;
  EXPECT_TRUE(Has(body, "benchlab_agent_load_running 1\n")) << body;
  EXPECT_TRUE(Has(body, "benchlab_agent_spool_bytes 4096\n")) << body;
  EXPECT_TRUE(Has(body, "# TYPE benchlab_agent_spool_bytes gauge\n")) << body;
  EXPECT_TRUE(Has(body, "benchlab_build_info{agent=\"load-1\",daemon=\"agent\",version=\""))
      << body;
  for (const char* absent :
       {"spool_limit_bytes", "foreign_cpu", "steal", "selftest", "temperature", "end_timestamp"}) {
    EXPECT_FALSE(Has(body, absent)) << absent << " in\n" << body;
  }

  // After a measured interval and a self-test, the agent's last figures appear.
  snapshot.registered = false;
  snapshot.readings.foreign_cpu_cores = 0.25;
  snapshot.readings.steal_cpu_cores = 0.5;
  snapshot.readings.interval_end_unix_s = 1.7e9;
  snapshot.readings.selftest_wall_s = 0.042;
  snapshot.temperature_c = 51;
  body = metrics.Scrape();
  EXPECT_TRUE(Has(body, "benchlab_agent_registered 0\n")) << body;
  EXPECT_TRUE(Has(body, "benchlab_agent_last_interval_foreign_cpu_cores 0.25\n")) << body;
  EXPECT_TRUE(Has(body, "benchlab_agent_last_interval_steal_cpu_cores 0.5\n")) << body;
  EXPECT_TRUE(Has(body, "benchlab_agent_last_interval_end_timestamp_seconds 1700000000\n")) << body;
  EXPECT_TRUE(Has(body, "benchlab_agent_selftest_seconds 0.042\n")) << body;
  EXPECT_TRUE(Has(body, "benchlab_agent_host_temperature_celsius 51\n")) << body;
  EXPECT_FALSE(Has(body, "last_interval_max_temperature")) << body;
}

TEST(AgentMetricsTest, ServesOnLoopbackAndRefusesAnyOtherAddress) {
  AgentMetrics metrics("a", [] { return AgentMetricsSnapshot{}; });
  auto wide = metrics.Start({"0.0.0.0", 0});
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(wide.status().message().find("metrics_listen"), std::string::npos);

  auto bound = metrics.Start({"127.0.0.1", 0});
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  httplib::Client client("127.0.0.1", bound->port);
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_TRUE(Has(res->body, "benchlab_agent_registered 0\n")) << res->body;
  metrics.Stop();
  metrics.Stop();
}

// Any process of the agent's host can reach /metrics: two hundred of its connections trickling
// header lines once held every thread of the server, and Prometheus got nothing.
TEST(AgentMetricsTest, AScrapeIsAnsweredWhile200ClientsTrickleTheirHeads) {
  AgentMetrics metrics("a", [] { return AgentMetricsSnapshot{}; });
  auto bound = metrics.Start({"127.0.0.1", 0});
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  SlowClients slow(bound->port, 200, "GET /metrics HTTP/1.1\r\n", "X-Slow: 1\r\n");
  ASSERT_EQ(slow.connected(), 200u);
  slow.WaitRounds(3);
  httplib::Client client("127.0.0.1", bound->port);
  client.set_read_timeout(5, 0);
  const auto start = std::chrono::steady_clock::now();
  auto res = client.Get("/metrics");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_LT(took, std::chrono::seconds(1));
  metrics.Stop();
}

}  // namespace
}  // namespace benchlab
