#include "agent/external_load.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

namespace benchlab {
namespace {

// Real outputs of wrk 4.1 and h2load 1.52 (tests/unit/agent/testdata/README.md says how each
// was made). The expected figures below were read off the files by hand.
std::string Testdata(const std::string& name) {
  std::ifstream in(std::string(BENCHLAB_SOURCE_DIR) + "/tests/unit/agent/testdata/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The message of a failed Result, which must be InvalidArgument.
template <typename T>
std::string Error(const Result<T>& r) {
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  return r.status().message();
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

// ----------------------------------------------------------------------------------------------
// wrk output

TEST(ExternalWrkParseTest, PlainGetWithLatency) {
  auto f = ParseWrkOutput(Testdata("wrk-4.1-latency.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->tool, "wrk");
  EXPECT_EQ(f->version, "");
  EXPECT_EQ(f->requests, 74031u);
  EXPECT_DOUBLE_EQ(f->duration_s, 2.02);
  EXPECT_DOUBLE_EQ(f->rps, 36662.42);
  EXPECT_DOUBLE_EQ(*f->mean_us, 1030);   // 1.03ms
  EXPECT_DOUBLE_EQ(*f->stdev_us, 2030);  // 2.03ms
  EXPECT_DOUBLE_EQ(*f->max_us, 17590);   // 17.59ms
  EXPECT_FALSE(f->min_us);               // wrk prints no minimum
  EXPECT_EQ(*f->p50_us, 44u);            // 44.00us
  EXPECT_EQ(*f->p75_us, 1180u);          // 1.18ms
  EXPECT_EQ(*f->p90_us, 3590u);
  EXPECT_EQ(*f->p99_us, 9330u);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 2.45 * 1024 * 1024);  // 2.45MB
  EXPECT_EQ(f->non_2xx_3xx, 0u);
  EXPECT_TRUE(f->status_classes.empty());
  EXPECT_EQ(f->errors_connect + f->errors_read + f->errors_write + f->errors_timeout, 0u);
  EXPECT_FALSE(f->failed);
  EXPECT_TRUE(Has(f->unavailable, "p999_us"));
  EXPECT_TRUE(Has(f->unavailable, "histogram"));
  EXPECT_TRUE(Has(f->unavailable, "per_second"));
  EXPECT_FALSE(Has(f->unavailable, "p50_us"));
  EXPECT_FALSE(Has(f->unavailable, "max_us"));
}

TEST(ExternalWrkParseTest, SocketErrorsAndNon2xx) {
  auto f = ParseWrkOutput(Testdata("wrk-4.1-errors.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->requests, 52u);
  EXPECT_DOUBLE_EQ(f->duration_s, 3.02);
  EXPECT_DOUBLE_EQ(f->rps, 17.22);
  EXPECT_EQ(f->errors_connect, 0u);
  EXPECT_EQ(f->errors_read, 6u);
  EXPECT_EQ(f->errors_write, 41419u);
  EXPECT_EQ(f->errors_timeout, 6u);
  EXPECT_EQ(f->non_2xx_3xx, 5u);
  EXPECT_DOUBLE_EQ(*f->mean_us, 759.33);
  EXPECT_DOUBLE_EQ(*f->stdev_us, 1720);
  EXPECT_DOUBLE_EQ(*f->max_us, 6070);
  EXPECT_EQ(*f->p50_us, 119u);
  EXPECT_EQ(*f->p75_us, 342u);
  EXPECT_EQ(*f->p90_us, 4200u);
  EXPECT_EQ(*f->p99_us, 6070u);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 737.51);  // "737.51B": no prefix
}

TEST(ExternalWrkParseTest, ReadErrorsFromUnparsableResponses) {
  auto f = ParseWrkOutput(Testdata("wrk-4.1-garbage.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->requests, 8078u);
  EXPECT_DOUBLE_EQ(f->duration_s, 2.01);
  EXPECT_DOUBLE_EQ(f->rps, 4028.57);
  EXPECT_EQ(f->errors_read, 2017u);
  EXPECT_EQ(f->errors_write + f->errors_connect + f->errors_timeout, 0u);
  EXPECT_EQ(f->non_2xx_3xx, 0u);
  EXPECT_DOUBLE_EQ(*f->mean_us, 1290);
  EXPECT_DOUBLE_EQ(*f->stdev_us, 1910);
  EXPECT_DOUBLE_EQ(*f->max_us, 19550);
  EXPECT_EQ(*f->p50_us, 425u);
  EXPECT_EQ(*f->p75_us, 1870u);
  EXPECT_EQ(*f->p90_us, 3220u);
  EXPECT_EQ(*f->p99_us, 9680u);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 161.30 * 1024);
}

TEST(ExternalWrkParseTest, EveryResponseNon2xx) {
  auto f = ParseWrkOutput(Testdata("wrk-4.1-non2xx.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->requests, 43778u);
  EXPECT_EQ(f->non_2xx_3xx, 43778u);
  EXPECT_DOUBLE_EQ(f->duration_s, 2.03);
  EXPECT_DOUBLE_EQ(f->rps, 21539.89);
  EXPECT_DOUBLE_EQ(*f->mean_us, 2050);
  EXPECT_DOUBLE_EQ(*f->stdev_us, 3400);
  EXPECT_DOUBLE_EQ(*f->max_us, 25030);
  EXPECT_EQ(*f->p50_us, 48u);
  EXPECT_EQ(*f->p75_us, 3020u);
  EXPECT_EQ(*f->p90_us, 7200u);
  EXPECT_EQ(*f->p99_us, 13920u);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 1.68 * 1024 * 1024);
  EXPECT_EQ(f->errors_read, 0u);
}

TEST(ExternalWrkParseTest, SecondsInLatency) {
  auto f = ParseWrkOutput(Testdata("wrk-4.1-slow.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->requests, 99u);
  EXPECT_DOUBLE_EQ(f->duration_s, 3.07);
  EXPECT_DOUBLE_EQ(f->rps, 32.21);
  EXPECT_DOUBLE_EQ(*f->mean_us, 425510);   // 425.51ms
  EXPECT_DOUBLE_EQ(*f->stdev_us, 518210);  // 518.21ms
  EXPECT_DOUBLE_EQ(*f->max_us, 1510000);   // 1.51s
  EXPECT_EQ(*f->p50_us, 11950u);
  EXPECT_EQ(*f->p75_us, 863320u);
  EXPECT_EQ(*f->p90_us, 1250000u);  // "1.25s " (wrk pads a one-letter unit)
  EXPECT_EQ(*f->p99_us, 1510000u);
  EXPECT_EQ(f->errors_read, 11u);
  EXPECT_EQ(f->non_2xx_3xx, 11u);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 1.36 * 1024);
}

TEST(ExternalWrkParseTest, PostFromScript) {
  auto f = ParseWrkOutput(Testdata("wrk-4.1-post-script.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->requests, 101837u);
  EXPECT_DOUBLE_EQ(f->duration_s, 2.10);
  EXPECT_DOUBLE_EQ(f->rps, 48501.32);
  EXPECT_DOUBLE_EQ(*f->mean_us, 117.90);
  EXPECT_DOUBLE_EQ(*f->stdev_us, 372.50);
  EXPECT_DOUBLE_EQ(*f->max_us, 7670);
  EXPECT_EQ(*f->p50_us, 72u);
  EXPECT_EQ(*f->p75_us, 103u);
  EXPECT_EQ(*f->p90_us, 141u);
  EXPECT_EQ(*f->p99_us, 1260u);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 1.90 * 1024 * 1024);
}

TEST(ExternalWrkParseTest, NoResponseMeansNoLatency) {
  // A server that never answers: wrk prints zeros and "-nan%" for its empty statistics.
  auto f = ParseWrkOutput(Testdata("wrk-4.1-no-responses.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->requests, 0u);
  EXPECT_DOUBLE_EQ(f->duration_s, 2.05);
  EXPECT_DOUBLE_EQ(f->rps, 0);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 0);
  EXPECT_FALSE(f->mean_us);
  EXPECT_FALSE(f->stdev_us);
  EXPECT_FALSE(f->max_us);
  EXPECT_FALSE(f->p50_us);
  EXPECT_FALSE(f->p99_us);
  // wrk counts a timeout only when a late response arrives: requests never answered are not.
  EXPECT_EQ(f->errors_timeout, 0u);
}

TEST(ExternalWrkParseTest, WithoutLatencyFlagPercentilesAreUnavailable) {
  std::string text = Testdata("wrk-4.1-latency.txt");
  const size_t from = text.find("  Latency Distribution");
  const size_t to = text.find("  74031 requests");
  ASSERT_NE(from, std::string::npos);
  text.erase(from, to - from);
  auto f = ParseWrkOutput(text);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_FALSE(f->p50_us);
  EXPECT_FALSE(f->p90_us);
  EXPECT_TRUE(Has(f->unavailable, "p50_us"));
  EXPECT_TRUE(Has(f->unavailable, "p90_us"));
  EXPECT_TRUE(Has(f->unavailable, "p99_us"));
  EXPECT_DOUBLE_EQ(*f->mean_us, 1030);
}

std::string WrkText(const std::string& latency, const std::string& extra = "") {
  return "Running 1m test @ http://127.0.0.1:8080/\n"
         "  2 threads and 10 connections\n"
         "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n"
         "    Latency  " +
         latency +
         "\n"
         "    Req/Sec     1.23k   456.00     2.00M    75.00%\n"
         "  1234567 requests in 1.00m, 1.50GB read\n" +
         extra +
         "Requests/sec:  20576.12\n"
         "Transfer/sec:      2.00TB\n";
}

TEST(ExternalWrkParseTest, UnitsOfTimeAndSize) {
  auto f = ParseWrkOutput(WrkText("   1.00m   250.50us     2.00m   50.00%",
                                  "  Socket errors: connect 3, read 0, write 1, timeout 9\n"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_DOUBLE_EQ(*f->mean_us, 60e6);
  EXPECT_DOUBLE_EQ(*f->stdev_us, 250.5);
  EXPECT_DOUBLE_EQ(*f->max_us, 120e6);
  EXPECT_DOUBLE_EQ(f->duration_s, 60);
  EXPECT_EQ(f->requests, 1234567u);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 2.0 * 1024 * 1024 * 1024 * 1024);
  EXPECT_EQ(f->errors_connect, 3u);
  EXPECT_EQ(f->errors_write, 1u);
  EXPECT_EQ(f->errors_timeout, 9u);
}

TEST(ExternalWrkParseTest, PercentilesRoundToTheMicrosecond) {
  // 2.01 * 1000 is 2009.9999999999998 in binary: truncation would lose a microsecond.
  auto f = ParseWrkOutput(WrkText("   1.00ms   1.00ms     2.00ms   50.00%",
                                  "  Latency Distribution\n"
                                  "     50%    2.01ms\n"
                                  "     75%  999.00us\n"
                                  "     90%    2.03s \n"
                                  "     99%    1.00m \n"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(*f->p50_us, 2010u);
  EXPECT_EQ(*f->p75_us, 999u);
  EXPECT_EQ(*f->p90_us, 2030000u);
  EXPECT_EQ(*f->p99_us, 60000000u);
}

TEST(ExternalWrkParseTest, ToleratesCarriageReturnsAndForeignLines) {
  std::string text = "thread 1 made 5 requests\r\n" + Testdata("wrk-4.1-errors.txt");
  for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 2)) {
    text.insert(at, "\r");
  }
  auto f = ParseWrkOutput(text);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->requests, 52u);
  EXPECT_EQ(f->errors_write, 41419u);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 737.51);
}

TEST(ExternalWrkParseTest, MissingLinesAreNamed) {
  EXPECT_EQ(Error(ParseWrkOutput("")), "wrk output: empty, no 'Latency' thread-stats line");
  EXPECT_EQ(Error(ParseWrkOutput("unable to connect to 127.0.0.1:1 Connection refused\n")),
            "wrk output: no 'Latency' thread-stats line; it ends \"unable to connect to "
            "127.0.0.1:1 Connection refused\"");

  std::string text = Testdata("wrk-4.1-latency.txt");
  std::string no_rps = text.substr(0, text.find("Requests/sec:"));
  EXPECT_EQ(Error(ParseWrkOutput(no_rps)),
            "wrk output: no 'Requests/sec:' line; it ends \"99%    9.33ms\\n74031 requests in "
            "2.02s, 4.94MB read\"");

  std::string no_total = text;
  no_total.erase(no_total.find("  74031"),
                 no_total.find("Requests/sec") - no_total.find("  74031"));
  EXPECT_CONTAINS(Error(ParseWrkOutput(no_total)), "no 'N requests in' line");

  std::string no_p90 = text;
  no_p90.erase(no_p90.find("     90%"), no_p90.find("     99%") - no_p90.find("     90%"));
  EXPECT_CONTAINS(Error(ParseWrkOutput(no_p90)), "no '90%' latency line");
}

TEST(ExternalWrkParseTest, MalformedLinesAreQuoted) {
  EXPECT_EQ(Error(ParseWrkOutput(WrkText("   1.03xs    2.03ms  17.59ms   87.05%"))),
            "wrk output: cannot read the 'Latency' thread-stats line \"Latency     1.03xs    "
            "2.03ms  17.59ms   87.05%\"");
  // A bare number is no time: the unit must be there.
  EXPECT_CONTAINS(Error(ParseWrkOutput(WrkText("   1.03    2.03ms  17.59ms   87.05%"))),
                  "'Latency' thread-stats");
  EXPECT_CONTAINS(Error(ParseWrkOutput(WrkText("   -1.03ms    2.03ms  17.59ms   87.05%"))),
                  "'Latency' thread-stats");
  EXPECT_CONTAINS(Error(ParseWrkOutput(WrkText("1.03ms 2.03ms 17.59ms 87.05%",
                                               "  Socket errors: read 1, connect 0\n"))),
                  "cannot read the 'Socket errors:' line");
  EXPECT_CONTAINS(Error(ParseWrkOutput(WrkText("1.03ms 2.03ms 17.59ms 87.05%",
                                               "  Non-2xx or 3xx responses: many\n"))),
                  "'Non-2xx or 3xx responses:'");
  std::string text = Testdata("wrk-4.1-latency.txt");
  std::string bad_rps = text;
  bad_rps.replace(bad_rps.find("36662.42"), 8, "36662,42");
  EXPECT_EQ(Error(ParseWrkOutput(bad_rps)),
            "wrk output: cannot read the 'Requests/sec:' line \"Requests/sec:  36662,42\"");
  std::string bad_transfer = text;
  bad_transfer.replace(bad_transfer.find("2.45MB"), 6, "2.45Mb");
  EXPECT_CONTAINS(Error(ParseWrkOutput(bad_transfer)), "'Transfer/sec:'");
  std::string bad_total = text;
  bad_total.replace(bad_total.find("74031"), 5, "7403l");
  EXPECT_CONTAINS(Error(ParseWrkOutput(bad_total)), "cannot read the 'N requests in' line");
}

TEST(ExternalWrkParseTest, TwoRunsInOneOutputAreRefused) {
  const std::string text = Testdata("wrk-4.1-latency.txt");
  EXPECT_EQ(Error(ParseWrkOutput(text + text)), "wrk output: two 'Latency' thread-stats lines");
}

TEST(ExternalWrkParseTest, H2loadOutputIsNotWrkOutput) {
  EXPECT_CONTAINS(Error(ParseWrkOutput(Testdata("h2load-1.52.txt"))),
                  "wrk output: no 'Latency' thread-stats line");
}

// ----------------------------------------------------------------------------------------------
// h2load output

TEST(ExternalH2loadParseTest, PlainGet) {
  auto f = ParseH2loadOutput(Testdata("h2load-1.52.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->tool, "h2load");
  EXPECT_EQ(f->version, "");
  EXPECT_EQ(f->requests, 40002u);
  EXPECT_DOUBLE_EQ(f->duration_s, 2.00);
  EXPECT_DOUBLE_EQ(f->rps, 20001.00);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 1.34 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*f->min_us, 16);
  EXPECT_DOUBLE_EQ(*f->max_us, 32120);  // 32.12ms
  EXPECT_DOUBLE_EQ(*f->mean_us, 199);
  EXPECT_DOUBLE_EQ(*f->stdev_us, 1190);
  EXPECT_FALSE(f->p50_us);
  EXPECT_FALSE(f->p99_us);
  EXPECT_EQ(f->status_classes,
            (std::map<std::string, uint64_t>{{"2xx", 40002}, {"3xx", 0}, {"4xx", 0}, {"5xx", 0}}));
  EXPECT_EQ(f->non_2xx_3xx, 0u);
  EXPECT_EQ(*f->failed, 0u);
  EXPECT_EQ(f->errors_read + f->errors_timeout + f->errors_connect + f->errors_write, 0u);
  for (const char* column : {"p50_us", "p90_us", "p99_us", "p999_us", "histogram", "per_second",
                             "errors_connect", "errors_write", "errors_timeout"}) {
    EXPECT_TRUE(Has(f->unavailable, column)) << column;
  }
  EXPECT_FALSE(Has(f->unavailable, "max_us"));
}

TEST(ExternalH2loadParseTest, NotFoundCountsAsCompletedAndFailed) {
  auto f = ParseH2loadOutput(Testdata("h2load-1.52-404.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  // 0 succeeded + 93022 failed - 0 errored: every 404 is a completed response.
  EXPECT_EQ(f->requests, 93022u);
  EXPECT_EQ(*f->failed, 93022u);
  EXPECT_EQ(f->non_2xx_3xx, 93022u);
  EXPECT_EQ(f->status_classes.at("4xx"), 93022u);
  EXPECT_EQ(f->status_classes.at("2xx"), 0u);
  EXPECT_EQ(f->errors_read, 0u);
  EXPECT_DOUBLE_EQ(f->rps, 46511.00);
  EXPECT_DOUBLE_EQ(f->duration_s, 2.00);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 3.64 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*f->min_us, 13);
  EXPECT_DOUBLE_EQ(*f->max_us, 12230);
  EXPECT_DOUBLE_EQ(*f->mean_us, 171);
  EXPECT_DOUBLE_EQ(*f->stdev_us, 680);
}

TEST(ExternalH2loadParseTest, ServerErrorsAndSlowResponses) {
  auto f = ParseH2loadOutput(Testdata("h2load-1.52-errors.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->requests, 24u);  // 22 succeeded + 2 failed - 0 errored
  EXPECT_EQ(*f->failed, 2u);
  EXPECT_EQ(f->non_2xx_3xx, 2u);
  EXPECT_EQ(f->status_classes.at("2xx"), 22u);
  EXPECT_EQ(f->status_classes.at("5xx"), 2u);
  EXPECT_DOUBLE_EQ(f->duration_s, 3.00);
  EXPECT_DOUBLE_EQ(f->rps, 8.00);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 340);  // "340B/s"
  EXPECT_DOUBLE_EQ(*f->min_us, 58);
  EXPECT_DOUBLE_EQ(*f->max_us, 1510000);  // 1.51s
  EXPECT_DOUBLE_EQ(*f->mean_us, 127360);
  EXPECT_DOUBLE_EQ(*f->stdev_us, 424800);
}

TEST(ExternalH2loadParseTest, TimeoutsAndErrors) {
  // Count-based (-n 8 -N 1000ms) against a server that never answers.
  auto f = ParseH2loadOutput(Testdata("h2load-1.52-h1-timeouts.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->requests, 0u);  // 0 succeeded + 8 failed - 8 errored
  EXPECT_EQ(*f->failed, 8u);
  EXPECT_EQ(f->errors_timeout, 4u);
  EXPECT_EQ(f->errors_read, 4u);  // 8 errored - 4 timeout
  EXPECT_DOUBLE_EQ(f->duration_s, 1.00);
  EXPECT_DOUBLE_EQ(f->rps, 0);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 0);
  EXPECT_FALSE(f->mean_us);  // h2load printed zeros for no samples
  EXPECT_FALSE(f->min_us);
  EXPECT_FALSE(f->max_us);
}

TEST(ExternalH2loadParseTest, RefusedConnectionsLeaveNoTrace) {
  // h2load 1.52 in a -D run counts nothing for connections that were refused.
  auto f = ParseH2loadOutput(Testdata("h2load-1.52-refused.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->requests, 0u);
  EXPECT_EQ(*f->failed, 0u);
  EXPECT_EQ(f->errors_read, 0u);
  EXPECT_DOUBLE_EQ(f->duration_s, 2.00);
  EXPECT_FALSE(f->mean_us);
}

TEST(ExternalH2loadParseTest, UnparsableResponsesLeaveNoTrace) {
  auto f = ParseH2loadOutput(Testdata("h2load-1.52-garbage.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->requests, 16u);
  EXPECT_EQ(f->errors_read, 0u);  // the four broken connections are simply gone
  EXPECT_DOUBLE_EQ(f->rps, 8.00);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 328);
  EXPECT_DOUBLE_EQ(*f->min_us, 25);
  EXPECT_DOUBLE_EQ(*f->max_us, 4200);
  EXPECT_DOUBLE_EQ(*f->mean_us, 1140);
  EXPECT_DOUBLE_EQ(*f->stdev_us, 1830);
}

TEST(ExternalH2loadParseTest, MillisecondDurationAndKilobytes) {
  auto f = ParseH2loadOutput(Testdata("h2load-1.52-put-500ms.txt"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_DOUBLE_EQ(f->duration_s, 0.50428);  // "finished in 504.28ms"
  EXPECT_DOUBLE_EQ(f->rps, 9878.00);         // h2load divides by -D (0.5 s): 4939 / 0.5
  EXPECT_EQ(f->requests, 4939u);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 395.51 * 1024);
  EXPECT_DOUBLE_EQ(*f->min_us, 27);
  EXPECT_DOUBLE_EQ(*f->max_us, 19770);
  EXPECT_DOUBLE_EQ(*f->mean_us, 201);
  EXPECT_DOUBLE_EQ(*f->stdev_us, 684);
}

TEST(ExternalH2loadParseTest, AbortedRunIsAnError) {
  // -D with -N: h2load 1.52 aborts on a libev assertion when the inactivity timeout fires.
  const std::string message = Error(ParseH2loadOutput(Testdata("h2load-1.52-abort.txt")));
  EXPECT_CONTAINS(message, "h2load output: no 'finished in' line; it ends \"");
  EXPECT_CONTAINS(message, "Assertion");
}

std::string H2loadText(const std::string& requests, const std::string& times) {
  return "finished in 1.50s, 100.00 req/s, 1.00GB/s\n"
         "requests: " +
         requests +
         "\n"
         "status codes: 140 2xx, 5 3xx, 3 4xx, 2 5xx\n"
         "                     min         max         mean         sd        +/- sd\n"
         "time for request: " +
         times + "\n";
}

TEST(ExternalH2loadParseTest, MappingOfCounts) {
  auto f = ParseH2loadOutput(H2loadText(
      "160 total, 160 started, 160 done, 145 succeeded, 15 failed, 10 errored, 4 timeout",
      "      10us       1.00m        1.5s      250ms    70.00%"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->requests, 150u);  // 145 + 15 - 10
  EXPECT_EQ(*f->failed, 15u);
  EXPECT_EQ(f->errors_read, 6u);  // 10 errored - 4 timeout
  EXPECT_EQ(f->errors_timeout, 4u);
  EXPECT_EQ(f->non_2xx_3xx, 5u);  // 3 4xx + 2 5xx
  EXPECT_EQ(f->status_classes.at("3xx"), 5u);
  EXPECT_DOUBLE_EQ(*f->bytes_per_s, 1024.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*f->min_us, 10);
  EXPECT_DOUBLE_EQ(*f->max_us, 60e6);
  EXPECT_DOUBLE_EQ(*f->mean_us, 1.5e6);
  EXPECT_DOUBLE_EQ(*f->stdev_us, 250e3);
  EXPECT_DOUBLE_EQ(f->duration_s, 1.5);
}

TEST(ExternalH2loadParseTest, MalformedOutputs) {
  const std::string times = "10us 20us 15us 5us 50.00%";
  const std::string counts =
      "10 total, 10 started, 10 done, 10 succeeded, 0 failed, 0 errored, "
      "0 timeout";
  ASSERT_TRUE(ParseH2loadOutput(H2loadText(counts, times)).ok());
  EXPECT_EQ(Error(ParseH2loadOutput("")), "h2load output: empty, no 'finished in' line");
  // More errored than failed cannot be: h2load counts every errored request as failed.
  EXPECT_CONTAINS(Error(ParseH2loadOutput(H2loadText(
                      "10 total, 10 started, 10 done, 10 succeeded, 0 failed, 1 errored, "
                      "0 timeout",
                      times))),
                  "cannot read the 'requests:' line");
  // A field missing (h2load before 1.x printed no "timeout").
  EXPECT_CONTAINS(Error(ParseH2loadOutput(H2loadText(
                      "10 total, 10 started, 10 done, 10 succeeded, 0 failed, 0 errored", times))),
                  "cannot read the 'requests:' line");
  EXPECT_CONTAINS(Error(ParseH2loadOutput(H2loadText(counts, "10 20 15 5 50.00%"))),
                  "cannot read the 'time for request:' line");
  std::string text = H2loadText(counts, times);
  std::string no_status = text;
  const size_t status_at = no_status.find("status codes");
  no_status.erase(status_at, no_status.find('\n', status_at) + 1 - status_at);
  EXPECT_CONTAINS(Error(ParseH2loadOutput(no_status)), "no 'status codes:' line");
  std::string bad_finish = text;
  bad_finish.replace(bad_finish.find("100.00 req/s"), 12, "100.00 rps");
  EXPECT_EQ(Error(ParseH2loadOutput(bad_finish)),
            "h2load output: cannot read the 'finished in' line \"finished in 1.50s, 100.00 rps, "
            "1.00GB/s\"");
  EXPECT_CONTAINS(Error(ParseH2loadOutput(text + text)), "two 'finished in' lines");
  EXPECT_CONTAINS(Error(ParseH2loadOutput(Testdata("wrk-4.1-latency.txt"))),
                  "h2load output: no 'finished in' line; it ends \"Requests/sec:  36662.42\\n"
                  "Transfer/sec:      2.45MB\"");
  std::string no_times = text.substr(0, text.find("time for request"));
  EXPECT_CONTAINS(Error(ParseH2loadOutput(no_times)), "no 'time for request:' line");
}

// ----------------------------------------------------------------------------------------------
// Command lines

ExternalLoadSpec Spec(const std::string& tool) {
  ExternalLoadSpec s;
  s.tool = tool;
  s.binary = "/usr/bin/" + tool;
  s.host = "127.0.0.1";
  s.port = 8080;
  s.path = "/json";
  s.connections = 8;
  s.threads = 2;
  s.duration_s = 2;
  s.timeout_s = 2;
  s.script_path = "/run/x/wrk.lua";
  s.body_path = "/run/x/h2load.body";
  return s;
}

using Argv = std::vector<std::string>;

TEST(ExternalCommandTest, WrkPlainGet) {
  auto c = BuildExternalCommand(Spec("wrk"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->argv, (Argv{"/usr/bin/wrk", "-t", "2", "-c", "8", "-d", "2s", "--timeout", "2s",
                           "--latency", "http://127.0.0.1:8080/json"}));
  EXPECT_EQ(c->script, "");
  EXPECT_EQ(c->body_file, "");
}

TEST(ExternalCommandTest, WrkRoundsTimesUpToWholeSeconds) {
  ExternalLoadSpec s = Spec("wrk");
  s.duration_s = 1.5;
  s.timeout_s = 0.25;
  auto c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->argv[6], "2s");
  EXPECT_EQ(c->argv[8], "1s");
  s.duration_s = 0.1 * 3 * 10;  // 3.0000000000000004: arithmetic, not a wish for 4 s
  s.timeout_s = 10;
  c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->argv[6], "3s");
  EXPECT_EQ(c->argv[8], "10s");
  s.duration_s = 0.001;
  s.timeout_s = 1.2;
  c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->argv[6], "1s");
  EXPECT_EQ(c->argv[8], "2s");  // up, not to the nearest
}

TEST(ExternalCommandTest, WrkScriptForMethodBodyAndHeaders) {
  ExternalLoadSpec s = Spec("wrk");
  s.method = "POST";
  s.body = "{\"a\":1}";
  s.headers = {{"Content-Type", "application/json"}, {"host", "example.test"}};
  auto c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->argv, (Argv{"/usr/bin/wrk", "-t", "2", "-c", "8", "-d", "2s", "--timeout", "2s",
                           "--latency", "-s", "/run/x/wrk.lua", "http://127.0.0.1:8080/json"}));
  EXPECT_EQ(c->script,
            "-- benchlab: the request of this run (agent/external_load.cc)\n"
            "wrk.method = \"POST\"\n"
            "wrk.body = \"{\\\"a\\\":1}\"\n"
            "wrk.headers[\"Content-Type\"] = \"application/json\"\n"
            "wrk.headers[\"Host\"] = \"example.test\"\n");  // wrk's own key, so no second Host
  EXPECT_EQ(c->body_file, "");
}

TEST(ExternalCommandTest, WrkScriptIsTheOneThatRan) {
  // testdata/wrk-4.1-post-script.txt was measured with this script.
  ExternalLoadSpec s = Spec("wrk");
  s.method = "POST";
  s.body = "{\"name\":\"bench \\\"lab\\\"\",\"n\":1}\n";
  s.headers = {{"Content-Type", "application/json"}};
  auto c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->script, Testdata("wrk-4.1-post-script.lua"));
}

TEST(ExternalCommandTest, WrkScriptEscapesEveryByte) {
  ExternalLoadSpec s = Spec("wrk");
  s.method = "PUT";
  s.body = std::string("q\"b\\s\nn\r\0", 9) + "1" + "\xc3\xa9\x7f\xff]]";
  s.headers = {{"X-Note", "caf\xc3\xa9 \"quoted\" \\ tab\t"}};
  auto c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // NUL then '1' must stay two bytes: the escape always has three digits.
  EXPECT_EQ(c->script,
            "-- benchlab: the request of this run (agent/external_load.cc)\n"
            "wrk.method = \"PUT\"\n"
            "wrk.body = \"q\\\"b\\\\s\\010n\\013\\0001\\195\\169\\127\\255]]\"\n"
            "wrk.headers[\"X-Note\"] = \"caf\\195\\169 \\\"quoted\\\" \\\\ tab\\009\"\n");
}

// Lua's reading of a string literal (the escapes LuaQuote may write, and a few it does not).
std::string LuaUnquote(const std::string& literal) {
  std::string out;
  EXPECT_EQ(literal.front(), '"');
  EXPECT_EQ(literal.back(), '"');
  for (size_t i = 1; i + 1 < literal.size(); ++i) {
    char c = literal[i];
    EXPECT_NE(c, '"') << "unescaped quote at " << i;
    EXPECT_NE(c, '\n') << "raw newline at " << i;
    if (c != '\\') {
      out += c;
      continue;
    }
    c = literal[++i];
    if (c >= '0' && c <= '9') {
      int v = 0;
      for (int n = 0; n < 3 && literal[i] >= '0' && literal[i] <= '9'; ++n) {
        v = v * 10 + (literal[i++] - '0');
      }
      --i;
      EXPECT_LE(v, 255);
      out += static_cast<char>(v);
    } else if (c == 'n') {
      out += '\n';
    } else {
      out += c;  // \" and \\ (as Lua reads them)
    }
  }
  return out;
}

TEST(ExternalCommandTest, WrkScriptRoundTripsAllBytes) {
  ExternalLoadSpec s = Spec("wrk");
  for (int i = 0; i < 256; ++i) {
    s.body += static_cast<char>(i);
    s.body += "0";  // a digit after every byte: a short escape would swallow it
  }
  auto c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const std::string prefix = "wrk.body = ";
  const size_t at = c->script.find(prefix);
  ASSERT_NE(at, std::string::npos);
  const size_t end = c->script.find('\n', at);
  EXPECT_EQ(LuaUnquote(c->script.substr(at + prefix.size(), end - at - prefix.size())), s.body);
  EXPECT_NE(c->script.find("wrk.method = \"GET\""), std::string::npos);  // a GET with a body
}

TEST(ExternalCommandTest, WrkRefusals) {
  ExternalLoadSpec s = Spec("wrk");
  s.depth = 4;
  EXPECT_EQ(Error(BuildExternalCommand(s)),
            "depth: wrk sends one request at a time per connection (it pipelines only from a "
            "script); got 4");
  s = Spec("wrk");
  s.connections = 9;
  EXPECT_EQ(Error(BuildExternalCommand(s)),
            "connections: wrk gives each thread connections/threads connections and drops the "
            "rest; 9 is not a multiple of threads 2");
  s = Spec("wrk");
  s.headers = {{"X-A", "1"}};
  s.script_path = "";
  EXPECT_EQ(Error(BuildExternalCommand(s)),
            "script_path: wrk needs a Lua script for a method, headers or a body");
}

TEST(ExternalCommandTest, H2loadPlainGet) {
  ExternalLoadSpec s = Spec("h2load");
  s.depth = 4;
  s.duration_s = 2.5;
  auto c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->argv, (Argv{"/usr/bin/h2load", "--h1", "-t", "2", "-c", "8", "-m", "4", "-D",
                           "2500ms", "http://127.0.0.1:8080/json"}));
  EXPECT_EQ(c->script, "");
  EXPECT_EQ(c->body_file, "");
}

TEST(ExternalCommandTest, H2loadBodyMethodAndHeaders) {
  ExternalLoadSpec s = Spec("h2load");
  s.method = "POST";
  s.body = std::string("a\"b\\c\n\0\xff", 8);
  s.headers = {{"Content-Type", "text/plain; q=\"x\""}, {"Host", "example.test"}};
  auto c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // POST is h2load's method with -d: no ":method" needed.
  EXPECT_EQ(c->argv,
            (Argv{"/usr/bin/h2load", "--h1", "-t", "2", "-c", "8", "-m", "1", "-D", "2000ms", "-d",
                  "/run/x/h2load.body", "-H", "Content-Type: text/plain; q=\"x\"", "-H",
                  ":authority: example.test", "http://127.0.0.1:8080/json"}));
  EXPECT_EQ(c->body_file, s.body);
  EXPECT_EQ(c->body_file.size(), 8u);
  EXPECT_EQ(c->script, "");

  s.method = "PUT";
  c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->argv[12], "-H");
  EXPECT_EQ(c->argv[13], ":method: PUT");

  s.method = "GET";  // a GET with a body: -d would make it POST
  c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->argv[13], ":method: GET");

  s.body.clear();
  s.method = "DELETE";
  s.headers.clear();
  c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->argv, (Argv{"/usr/bin/h2load", "--h1", "-t", "2", "-c", "8", "-m", "1", "-D",
                           "2000ms", "-H", ":method: DELETE", "http://127.0.0.1:8080/json"}));
  EXPECT_EQ(c->body_file, "");
}

TEST(ExternalCommandTest, H2loadRefusals) {
  ExternalLoadSpec s = Spec("h2load");
  s.body = "x";
  s.depth = 2;
  EXPECT_EQ(Error(BuildExternalCommand(s)),
            "depth: h2load sends a body (-d) with one request in flight per HTTP/1.1 "
            "connection; got 2");
  s.depth = 1;
  s.body_path = "";
  EXPECT_CONTAINS(Error(BuildExternalCommand(s)), "body_path: ");
  s = Spec("h2load");
  s.headers = {{"X-Empty", ""}};
  EXPECT_CONTAINS(Error(BuildExternalCommand(s)), "headers: h2load drops an empty value");
  s.headers = {{"X-Lead", " v"}};
  EXPECT_EQ(Error(BuildExternalCommand(s)),
            "headers: h2load drops an empty value and strips leading blanks; \"X-Lead\" has "
            "\" v\"");
  s = Spec("h2load");
  s.duration_s = 0.0004;
  EXPECT_CONTAINS(Error(BuildExternalCommand(s)), "duration_s: h2load measures at least 1 ms");
  s.duration_s = 0.0015;
  auto c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->argv[9], "2ms");
}

TEST(ExternalCommandTest, CommonRefusalsNameTheField) {
  struct Case {
    std::function<void(ExternalLoadSpec&)> change;
    std::string message_start;
  };
  const std::vector<Case> cases = {
      {[](ExternalLoadSpec& s) { s.tool = "ab"; }, "tool: expected wrk or h2load, got \"ab\""},
      {[](ExternalLoadSpec& s) { s.binary = ""; }, "binary: empty"},
      {[](ExternalLoadSpec& s) { s.host = ""; }, "host: empty"},
      {[](ExternalLoadSpec& s) { s.host = "a/b"; }, "host: not a host name"},
      {[](ExternalLoadSpec& s) { s.port = 0; }, "port: expected 1-65535, got 0"},
      {[](ExternalLoadSpec& s) { s.port = 65536; }, "port: "},
      {[](ExternalLoadSpec& s) { s.method = "GE T"; }, "method: not an HTTP method: \"GE T\""},
      {[](ExternalLoadSpec& s) { s.method = ""; }, "method: "},
      {[](ExternalLoadSpec& s) { s.path = "json"; }, "path: expected '/'"},
      {[](ExternalLoadSpec& s) { s.path = "/a b"; }, "path: "},
      {[](ExternalLoadSpec& s) { s.path = "/a#frag"; }, "path: "},
      {[](ExternalLoadSpec& s) { s.path = "/caf\xc3\xa9"; }, "path: "},
      {[](ExternalLoadSpec& s) {
         s.headers = {{"Bad Name", "v"}};
       },
       "headers: not a header name"},
      {[](ExternalLoadSpec& s) {
         s.headers = {{":method", "PUT"}};
       },
       "headers: not a header"},
      {[](ExternalLoadSpec& s) {
         s.headers = {{"X-A", "1\r\nX-B: 2"}};
       },
       "headers: value of \"X-A\" holds a control byte"},
      {[](ExternalLoadSpec& s) {
         s.headers = {{"X-A", "1"}, {"x-a", "2"}};
       },
       "headers: \"x-a\" given twice"},
      {[](ExternalLoadSpec& s) {
         s.headers = {{"content-length", "3"}};
       },
       "headers: Content-Length is set by the tool"},
      {[](ExternalLoadSpec& s) { s.connections = 0; }, "connections: must be at least 1"},
      {[](ExternalLoadSpec& s) { s.threads = 0; }, "threads: must be at least 1"},
      {[](ExternalLoadSpec& s) { s.threads = 16; }, "connections: 8 is fewer than threads 16"},
      {[](ExternalLoadSpec& s) { s.depth = 0; }, "depth: must be at least 1"},
      {[](ExternalLoadSpec& s) { s.duration_s = 0; }, "duration_s: "},
      {[](ExternalLoadSpec& s) { s.duration_s = -1; }, "duration_s: "},
      {[](ExternalLoadSpec& s) { s.duration_s = std::nan(""); }, "duration_s: "},
      {[](ExternalLoadSpec& s) { s.duration_s = 1e9; }, "duration_s: "},
      {[](ExternalLoadSpec& s) { s.timeout_s = 0; }, "timeout_s: "},
  };
  for (const char* tool : {"wrk", "h2load"}) {
    for (size_t i = 0; i < cases.size(); ++i) {
      ExternalLoadSpec s = Spec(tool);
      cases[i].change(s);
      const std::string message = Error(BuildExternalCommand(s));
      EXPECT_EQ(message.substr(0, cases[i].message_start.size()), cases[i].message_start)
          << tool << " case " << i << ": " << message;
    }
  }
}

TEST(ExternalCommandTest, Ipv6HostIsBracketed) {
  ExternalLoadSpec s = Spec("wrk");
  s.host = "::1";
  s.path = "/a?b=c%20d";
  auto c = BuildExternalCommand(s);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->argv.back(), "http://[::1]:8080/a?b=c%20d");
}

TEST(ExternalCommandTest, MinimumRunSeconds) {
  EXPECT_EQ(MinimumRunSeconds("wrk"), 1);
  EXPECT_EQ(MinimumRunSeconds("h2load"), 0.001);
  EXPECT_EQ(MinimumRunSeconds("ab"), 0);
}

}  // namespace
}  // namespace benchlab
