#include "analysis/figure.h"

namespace benchlab {
namespace {

struct FigureEntry {
  Metric metric;
  const char* name;
  const char* short_name;
  const char* label;
  Better better;
};

// One row per figure, in Metric's order; adding a figure is one row here (docs/report.md lists
// the names, docs/history.md the short ones).
constexpr FigureEntry kFigures[kMetricCount] = {
    {Metric::kRps, "rps", "rps", "req/s", Better::kHigher},
    {Metric::kCpuUsPerRequest, "cpu_us_per_request", "cpu", "CPU µs/req", Better::kLower},
    {Metric::kRequestsPerCpuSecond, "requests_per_cpu_s", "", "req/CPU-s", Better::kHigher},
    {Metric::kP50Us, "p50_us", "", "p50", Better::kLower},
    {Metric::kP99Us, "p99_us", "p99", "p99", Better::kLower},
    {Metric::kStartupMs, "startup_ms", "", "start-up ms", Better::kLower},
    {Metric::kFirstRequestMs, "first_request_ms", "", "first request ms", Better::kLower},
    {Metric::kIdleRssKb, "idle_rss_kb", "", "idle RSS KB", Better::kLower},
    {Metric::kRssPeakKb, "rss_peak_kb", "", "peak RSS KB", Better::kLower},
    {Metric::kServiceCpuUsPerRequest, "service_cpu_us_per_request", "", "services CPU µs/req",
     Better::kLower},
    {Metric::kTotalCpuUsPerRequest, "total_cpu_us_per_request", "", "total CPU µs/req",
     Better::kLower},
};

constexpr bool InMetricOrder() {
  for (int i = 0; i < kMetricCount; ++i) {
    if (static_cast<int>(kFigures[i].metric) != i) return false;
  }
  return true;
}
static_assert(InMetricOrder(), "kFigures must list every Metric in the enum's order");

const FigureEntry& Of(Metric metric) { return kFigures[static_cast<int>(metric)]; }

}  // namespace

const char* MetricName(Metric metric) { return Of(metric).name; }
const char* MetricShortName(Metric metric) { return Of(metric).short_name; }
const char* MetricLabel(Metric metric) { return Of(metric).label; }
Better MetricBetter(Metric metric) { return Of(metric).better; }

std::optional<Metric> ParseFigure(const std::string& figure) {
  for (const FigureEntry& f : kFigures) {
    if (figure == f.name || (*f.short_name != '\0' && figure == f.short_name)) return f.metric;
  }
  return std::nullopt;
}

Status FigureError(const std::string& where, const std::string& figure) {
  std::string shorts, names;
  for (const FigureEntry& f : kFigures) {
    if (*f.short_name != '\0') shorts += (shorts.empty() ? "" : ", ") + std::string(f.short_name);
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  }
  return Status::InvalidArgument(where + ": expected " + shorts + " or a figure's full name (" +
                                 names + "), got \"" + figure + "\"");
}

}  // namespace benchlab
