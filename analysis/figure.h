// The figures a window is measured by, in one table (analysis/figure.cc) that the report, `benchlab
// compare`, `history`, `regressions`, the re-measurement of changes and the HTTP API all read:
// each figure's name (the key in JSON and CSV, the store's `figure` column, a campaign's
// `decide_on`), its short name on the command line, its label in a table and which way it is
// better. On the command line a figure is chosen with --figure, in the API with ?figure=; both
// take the short or the full name (docs/history.md, docs/compare.md). The enum keeps the name
// `Metric` of the run of record's `metrics` objects. Constant data: any thread may read it.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "analysis/interval.h"
#include "common/status.h"

namespace benchlab {

enum class Metric {
  kRps,
  kCpuUsPerRequest,
  kRequestsPerCpuSecond,
  kP50Us,
  kP99Us,
  kStartupMs,
  kFirstRequestMs,
  kIdleRssKb,
  kRssPeakKb,
  kServiceCpuUsPerRequest,  // the side services' CPU per request
  kTotalCpuUsPerRequest,    // the target's and its services': a request's whole cost
};
inline constexpr int kMetricCount = 11;
inline constexpr std::array<Metric, kMetricCount> kAllMetrics = {
    Metric::kRps,
    Metric::kCpuUsPerRequest,
    Metric::kRequestsPerCpuSecond,
    Metric::kP50Us,
    Metric::kP99Us,
    Metric::kStartupMs,
    Metric::kFirstRequestMs,
    Metric::kIdleRssKb,
    Metric::kRssPeakKb,
    Metric::kServiceCpuUsPerRequest,
    Metric::kTotalCpuUsPerRequest,
};

// Column-style names for JSON and CSV: "rps", "cpu_us_per_request", "requests_per_cpu_s",
// "p50_us", "p99_us", "startup_ms", "first_request_ms", "idle_rss_kb", "rss_peak_kb",
// "service_cpu_us_per_request", "total_cpu_us_per_request".
const char* MetricName(Metric metric);
// The command line's short name: "rps", "cpu" (CPU µs per request), "p99"; "" for a figure that
// has none (it is named by MetricName alone).
const char* MetricShortName(Metric metric);
// A table's column: "req/s", "CPU µs/req", "p99", ...
const char* MetricLabel(Metric metric);
// req/s and requests per CPU-second are better higher; the rest (CPU, latency, start-up, memory)
// lower.
Better MetricBetter(Metric metric);

// --figure (and the API's ?figure=): a short name or a MetricName; nullopt for anything else.
std::optional<Metric> ParseFigure(const std::string& figure);
// Why `figure`, given at `where` ("--figure", "figure"), is none: InvalidArgument "WHERE: expected
// rps, cpu, p99 or a figure's full name (rps, cpu_us_per_request, ...), got \"x\"".
Status FigureError(const std::string& where, const std::string& figure);

}  // namespace benchlab
