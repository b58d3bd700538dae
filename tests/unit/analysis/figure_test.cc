#include "analysis/figure.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace benchlab {
namespace {

// Every figure is reached by its own name: what the reports write, --figure and ?figure= read.
TEST(FigureTest, EveryFigureParsesFromItsNameAndShortName) {
  std::set<std::string> names;
  for (Metric m : kAllMetrics) {
    EXPECT_EQ(ParseFigure(MetricName(m)), m) << MetricName(m);
    if (*MetricShortName(m) != '\0') {
      EXPECT_EQ(ParseFigure(MetricShortName(m)), m);
    }
    EXPECT_NE(*MetricLabel(m), '\0') << MetricName(m);
    names.insert(MetricName(m));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kMetricCount));
}

TEST(FigureTest, ShortNamesAndLabelsAreTheCommandLinesAndTables) {
  EXPECT_EQ(ParseFigure("rps"), Metric::kRps);
  EXPECT_EQ(ParseFigure("cpu"), Metric::kCpuUsPerRequest);
  EXPECT_EQ(ParseFigure("p99"), Metric::kP99Us);
  EXPECT_FALSE(ParseFigure("").has_value());  // no figure has an empty short name
  EXPECT_FALSE(ParseFigure("p50").has_value());
  EXPECT_FALSE(ParseFigure("RPS").has_value());
  EXPECT_STREQ(MetricLabel(Metric::kRps), "req/s");
  EXPECT_STREQ(MetricLabel(Metric::kCpuUsPerRequest), "CPU µs/req");
  EXPECT_STREQ(MetricLabel(Metric::kP99Us), "p99");
  EXPECT_EQ(MetricBetter(Metric::kRps), Better::kHigher);
  EXPECT_EQ(MetricBetter(Metric::kRequestsPerCpuSecond), Better::kHigher);
  EXPECT_EQ(MetricBetter(Metric::kP99Us), Better::kLower);
  EXPECT_EQ(MetricBetter(Metric::kRssPeakKb), Better::kLower);
}

TEST(FigureTest, ErrorNamesWhereWhatAndEveryChoice) {
  const Status st = FigureError("--figure", "speed");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "--figure: expected rps, cpu, p99 or a figure's full name (rps, cpu_us_per_request, "
            "requests_per_cpu_s, p50_us, p99_us, startup_ms, first_request_ms, idle_rss_kb, "
            "rss_peak_kb, service_cpu_us_per_request, total_cpu_us_per_request), got \"speed\"");
}

}  // namespace
}  // namespace benchlab
