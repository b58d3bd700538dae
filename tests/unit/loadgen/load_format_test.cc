// ParseUrlInto, BuildRequest, FormatLoadResult and LoadResultToJson: the engine's pure edges.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "loadgen/load.h"
#include "loadgen/request.h"

namespace benchlab {
namespace {

using namespace std::chrono_literals;

TEST(ParseUrlTest, AcceptsHttpUrls) {
  struct Case {
    const char* url;
    const char* host;
    uint16_t port;
    const char* path;
  } cases[] = {
      {"http://127.0.0.1:8080/", "127.0.0.1", 8080, "/"},
      {"http://localhost", "localhost", 80, "/"},
      {"HTTP://example.com/a/b?x=1&y=2", "example.com", 80, "/a/b?x=1&y=2"},
      {"http://example.com?q", "example.com", 80, "/?q"},
      {"http://[::1]:9000/x", "::1", 9000, "/x"},
      {"http://[::1]", "::1", 80, "/"},
      {"http://h:1/p#frag", "h", 1, "/p"},
  };
  for (const Case& c : cases) {
    LoadOptions o;
    Status st = ParseUrlInto(c.url, o);
    ASSERT_TRUE(st.ok()) << c.url << ": " << st.ToString();
    EXPECT_EQ(o.host, c.host) << c.url;
    EXPECT_EQ(o.port, c.port) << c.url;
    EXPECT_EQ(o.path, c.path) << c.url;
  }
}

TEST(ParseUrlTest, RejectsOthersAndLeavesOptionsAlone) {
  const char* bad[] = {"",
                       "127.0.0.1:8080",
                       "http://",
                       "http://:80/",
                       "http://h:/",
                       "http://h:0/",
                       "http://h:65536",
                       "http://h:8x/",
                       "http://u@h/",
                       "http://[::1/",
                       "http://[::1]x/",
                       "ftp://h/",
                       "http://h/a b"};
  for (const char* url : bad) {
    LoadOptions o;
    Status st = ParseUrlInto(url, o);
    EXPECT_FALSE(st.ok()) << url;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << url;
    EXPECT_EQ(o.host, LoadOptions().host) << url;
    EXPECT_EQ(o.path, "/") << url;
  }
  LoadOptions o;
  Status st = ParseUrlInto("ftp://example.com/", o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("http:// or https://"), std::string::npos) << st.message();
}

TEST(BuildRequestTest, AddsHostAndLengthUnlessGiven) {
  std::vector<std::pair<std::string, std::string>> headers = {{"X-A", "1"}};
  EXPECT_EQ(BuildRequest({.method = "GET",
                          .path = "/p",
                          .host = "h",
                          .port = 80,
                          .headers = &headers,
                          .body = "",
                          .connection_close = false}),
            "GET /p HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\r\n");
  EXPECT_EQ(BuildRequest({.method = "POST",
                          .path = "/",
                          .host = "::1",
                          .port = 8080,
                          .headers = nullptr,
                          .body = "abc",
                          .connection_close = true}),
            "POST / HTTP/1.1\r\nHost: [::1]:8080\r\nContent-Length: 3\r\n"
            "Connection: close\r\n\r\nabc");
  headers = {{"host", "other"}, {"content-length", "3"}, {"Connection", "keep-alive"}};
  EXPECT_EQ(BuildRequest({.method = "PUT",
                          .path = "/",
                          .host = "h",
                          .port = 1,
                          .headers = &headers,
                          .body = "abc",
                          .connection_close = true}),
            "PUT / HTTP/1.1\r\nhost: other\r\ncontent-length: 3\r\nConnection: keep-alive\r\n"
            "\r\nabc");
}

LoadResult SampleResult() {
  LoadResult r;
  r.requests = 1000;
  r.duration_s = 2;
  r.rps = 500;
  for (int i = 1; i <= 1000; ++i) r.latency_us.Record(static_cast<uint64_t>(i * 10));
  r.status_counts = {{200, 990}, {503, 10}};
  r.non_2xx = 10;
  r.errors.timeout = 3;
  r.reconnects = 4;
  r.bytes_read = 43000;
  r.per_second_requests = {480, 520};
  r.thread_cpu_s = {0.5, 0.25};
  return r;
}

TEST(FormatLoadResultTest, ReadsLikeWrk) {
  LoadOptions o;
  o.host = "127.0.0.1";
  o.port = 8080;
  o.path = "/x";
  o.threads = 2;
  o.connections = 10;
  o.duration = 2s;
  const std::string text = FormatLoadResult(o, SampleResult());
  EXPECT_NE(text.find("Running 2s test @ http://127.0.0.1:8080/x\n"), std::string::npos) << text;
  EXPECT_NE(text.find("2 threads and 10 connections\n  Engine epoll\n"), std::string::npos) << text;
  EXPECT_NE(text.find("p99.9"), std::string::npos) << text;
  EXPECT_NE(text.find("5.00ms"), std::string::npos) << text;   // p50 of 10us..10ms
  EXPECT_NE(text.find("10.00ms"), std::string::npos) << text;  // max
  EXPECT_NE(text.find("1000 requests in 2.00s, 41.99KB read"), std::string::npos) << text;
  EXPECT_NE(text.find("Non-2xx responses: 10 (503: 10)"), std::string::npos) << text;
  EXPECT_NE(text.find("timeout 3"), std::string::npos) << text;
  EXPECT_NE(text.find("Requests/sec:     500.00"), std::string::npos) << text;

  const std::string clean = FormatLoadResult(o, LoadResult());
  EXPECT_EQ(clean.find("Non-2xx"), std::string::npos) << clean;
  EXPECT_EQ(clean.find("Errors"), std::string::npos) << clean;
}

TEST(LoadResultToJsonTest, HasTheDocumentedFields) {
  const LoadResult r = SampleResult();
  const nlohmann::json j = nlohmann::json::parse(LoadResultToJson(r));
  EXPECT_EQ(j["requests"], 1000);
  EXPECT_EQ(j["duration_s"], 2.0);
  EXPECT_EQ(j["rps"], 500.0);
  EXPECT_EQ(j["latency_us"]["p50"], r.latency_us.ValueAtPercentile(50));
  EXPECT_EQ(j["latency_us"]["p90"], r.latency_us.ValueAtPercentile(90));
  EXPECT_EQ(j["latency_us"]["p99"], r.latency_us.ValueAtPercentile(99));
  EXPECT_EQ(j["latency_us"]["p999"], r.latency_us.ValueAtPercentile(99.9));
  EXPECT_EQ(j["latency_us"]["max"], 10000);
  EXPECT_DOUBLE_EQ(j["latency_us"]["mean"].get<double>(), 5005.0);
  EXPECT_EQ(j["status"]["200"], 990);
  EXPECT_EQ(j["status"]["503"], 10);
  EXPECT_EQ(j["errors"]["timeout"], 3);
  EXPECT_EQ(j["errors"]["connect"], 0);
  EXPECT_EQ(j["errors"]["read"], 0);
  EXPECT_EQ(j["errors"]["write"], 0);
  EXPECT_EQ(j["errors"]["parse"], 0);
  EXPECT_EQ(j["errors"]["body_too_large"], 0);
  EXPECT_EQ(j["non_2xx"], 10);
  EXPECT_EQ(j["reconnects"], 4);
  EXPECT_EQ(j["per_second"], nlohmann::json({480, 520}));
  EXPECT_EQ(j["thread_cpu_s"], nlohmann::json({0.5, 0.25}));
  // The full histogram rides along so windows can be merged exactly later.
  Result<Histogram> h = Histogram::Deserialize(j["histogram"].get<std::string>());
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->Count(), 1000u);
}

}  // namespace
}  // namespace benchlab

namespace benchlab {
namespace {

LoadResult OpenLoopResult() {
  LoadResult r = SampleResult();
  r.open_loop = true;
  r.rate = 500;
  r.throughput_rps = 480;
  r.sent = 1003;
  r.scheduled = 1010;
  r.dropped = 7;
  r.errors.mismatch = 2;
  r.errors.body_too_large = 4;
  for (int i = 1; i <= 1000; ++i) r.latency_uncorrected_us.Record(static_cast<uint64_t>(i));
  for (int i = 1; i <= 100; ++i) r.generator_lag_us.Record(static_cast<uint64_t>(i * 20));
  r.generator_bound = true;
  r.cpu_user_s = 0.25;
  r.cpu_sys_s = 0.5;
  r.series = {{.t = 0, .requests = 480, .p99_us = 9900}, {.t = 1, .requests = 520, .p99_us = 99}};
  r.syscalls = {.reads = 1, .writes = 2, .epoll_waits = 3, .epoll_ctls = 4, .ring_enters = 5};
  r.engine = IoEngine::kEpoll;
  r.engine_note = "io_uring not available (io_uring_queue_init: Operation not permitted)";
  r.mix_sent = {1003};
  r.worker_cpus = {{0, 1}};
  return r;
}

TEST(FormatLoadResultTest, SaysWhyAutoFellBackToEpoll) {
  LoadOptions o;
  const std::string text = FormatLoadResult(o, OpenLoopResult());
  EXPECT_NE(text.find("  Engine epoll: io_uring not available (io_uring_queue_init: Operation not "
                      "permitted)\n"),
            std::string::npos)
      << text;
}

TEST(LoadResultToJsonTest, HasTheIssueSchemaInOpenLoop) {
  const LoadResult r = OpenLoopResult();
  const nlohmann::json j = nlohmann::json::parse(LoadResultToJson(r));
  EXPECT_EQ(j["mode"], "open");
  EXPECT_EQ(j["rate"], 500.0);
  EXPECT_EQ(j["throughput_rps"], 480.0);
  for (const char* key : {"mean", "p50", "p90", "p99", "p999", "max"}) {
    EXPECT_TRUE(j["latency_us"].contains(key)) << key;
    EXPECT_TRUE(j["latency_uncorrected_us"].contains(key)) << key;
  }
  EXPECT_EQ(j["latency_uncorrected_us"]["max"], 1000);
  EXPECT_EQ(j["latency_uncorrected_us"]["p50"], r.latency_uncorrected_us.ValueAtPercentile(50));
  EXPECT_EQ(j["errors"]["mismatch"], 2);
  EXPECT_EQ(j["errors"]["body_too_large"], 4);
  EXPECT_EQ(j["errors"].size(), 7u);
  EXPECT_EQ(j["dropped"], 7);
  EXPECT_EQ(j["sent"], 1003);
  EXPECT_EQ(j["scheduled"], 1010);
  EXPECT_EQ(j["generator_bound"], true);
  EXPECT_EQ(j["generator_lag_us"]["max"], 2000);
  EXPECT_EQ(j["cpu"]["user_s"], 0.25);
  EXPECT_EQ(j["cpu"]["sys_s"], 0.5);
  ASSERT_EQ(j["series"].size(), 2u);
  EXPECT_EQ(j["series"][0], nlohmann::json({{"t", 0}, {"requests", 480}, {"p99_us", 9900}}));
  EXPECT_EQ(j["series"][1]["p99_us"], 99);
  EXPECT_EQ(j["syscalls"]["epoll_ctls"], 4);
  EXPECT_EQ(j["syscalls"]["ring_enters"], 5);
  EXPECT_EQ(j["engine"], "epoll");
  EXPECT_EQ(j["engine_note"], r.engine_note);
  EXPECT_EQ(j["worker_cpus"], nlohmann::json({{0, 1}}));
  EXPECT_TRUE(Histogram::Deserialize(j["histogram_uncorrected"].get<std::string>()).ok());
}

TEST(LoadResultToJsonTest, ClosedLoopHasNoUncorrectedLatency) {
  const nlohmann::json j = nlohmann::json::parse(LoadResultToJson(SampleResult()));
  EXPECT_EQ(j["mode"], "closed");
  EXPECT_FALSE(j.contains("latency_uncorrected_us"));
  EXPECT_FALSE(j.contains("rate"));
  EXPECT_EQ(j["dropped"], 0);
  EXPECT_EQ(j["generator_bound"], false);
  EXPECT_TRUE(j["series"].is_array());
}

TEST(FormatLoadResultTest, OpenLoopShowsBothLatenciesDropsAndTheWarning) {
  LoadOptions o;
  o.rate = 500;
  o.connections = 10;
  o.max_conns = 40;
  o.depth = 2;
  o.duration = 2s;
  const std::string text = FormatLoadResult(o, OpenLoopResult());
  for (const char* want :
       {"10 connections, 2 requests deep",
        "Open loop: 500 req/s requested, constant arrivals, up to 40", "  corrected ", "  uncorr. ",
        "Req/Sec   min 480, max 520 over 2 seconds", "Throughput 480 req/s (96.00% of the rate)",
        "Scheduled 1010, sent 1003, dropped 7", "mismatch 2, body too large 4",
        "CPU 0.75s (user 0.25s, sys 0.50s), 750.00 us/request", "WARNING: generator-bound"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
}

}  // namespace
}  // namespace benchlab
