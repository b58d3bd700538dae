// One CSV row per window attempt (RFC 4180).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/report_detail.h"
#include "analysis/report_format.h"

namespace benchlab {

using namespace report_detail;  // the report's own shared helpers

// --- CSV ------------------------------------------------------------------------------------

std::string FormatReportCsv(const ReportInput& in) {
  const Context cx = Analyse(in);
  using Field = std::pair<const char*, std::string (*)(const WindowRow&)>;
  static const Field kFields[] = {
      {"id", [](const WindowRow& w) { return std::to_string(w.id); }},
      {"campaign", [](const WindowRow& w) { return w.campaign; }},
      {"pair", [](const WindowRow& w) { return w.pair; }},
      {"target", [](const WindowRow& w) { return w.target; }},
      {"scenario", [](const WindowRow& w) { return w.scenario; }},
      {"load_level", [](const WindowRow& w) { return ToMeasurement(w).load_level; }},
      {"connections", [](const WindowRow& w) { return std::to_string(w.connections); }},
      {"round", [](const WindowRow& w) { return std::to_string(w.round); }},
      {"position", [](const WindowRow& w) { return std::to_string(w.position); }},
      {"noise", [](const WindowRow& w) { return std::to_string(w.noise); }},
      {"attempt", [](const WindowRow& w) { return std::to_string(w.attempt); }},
      {"verdict", [](const WindowRow& w) { return w.verdict; }},
      {"reasons", [](const WindowRow& w) { return Join(Reasons(w), "; "); }},
      {"started_at", [](const WindowRow& w) { return w.started_at; }},
      {"ended_at", [](const WindowRow& w) { return w.ended_at; }},
      {"server_agent", [](const WindowRow& w) { return w.server_agent; }},
      {"load_agent", [](const WindowRow& w) { return w.load_agent; }},
      {"requests", [](const WindowRow& w) { return std::to_string(w.requests); }},
      {"duration_s", [](const WindowRow& w) { return Exact(w.duration_s); }},
      {"rps", [](const WindowRow& w) { return Exact(w.rps); }},
      {"throughput_rps",
       [](const WindowRow& w) { return w.throughput_rps ? Exact(*w.throughput_rps) : ""; }},
      {"p50_us", [](const WindowRow& w) { return std::to_string(w.p50_us); }},
      {"p90_us", [](const WindowRow& w) { return std::to_string(w.p90_us); }},
      {"p99_us", [](const WindowRow& w) { return std::to_string(w.p99_us); }},
      {"p999_us", [](const WindowRow& w) { return std::to_string(w.p999_us); }},
      {"max_us", [](const WindowRow& w) { return std::to_string(w.max_us); }},
      {"mean_us", [](const WindowRow& w) { return Exact(w.mean_us); }},
      {"errors", [](const WindowRow& w) { return std::to_string(w.errors); }},
      {"errors_mismatch", [](const WindowRow& w) { return std::to_string(w.errors_mismatch); }},
      {"errors_body_too_large",
       [](const WindowRow& w) { return std::to_string(w.errors_body_too_large); }},
      {"server_cpu_s", [](const WindowRow& w) { return Exact(w.server_cpu_s); }},
      {"cpu_us_per_request", [](const WindowRow& w) { return Exact(w.cpu_us_per_request); }},
      {"requests_per_cpu_s",
       [](const WindowRow& w) {
         return Exact(MetricValue(ToMeasurement(w), Metric::kRequestsPerCpuSecond));
       }},
      {"cpu_accounting", [](const WindowRow& w) { return w.cpu_accounting; }},
      {"rss_peak_kb", [](const WindowRow& w) { return std::to_string(w.rss_peak_kb); }},
      {"startup_ms", [](const WindowRow& w) { return Exact(w.startup_ms); }},
      {"first_request_ms", [](const WindowRow& w) { return Exact(w.first_request_ms); }},
      {"idle_rss_kb", [](const WindowRow& w) { return std::to_string(w.idle_rss_kb); }},
      {"load_cpu_s", [](const WindowRow& w) { return Exact(w.load_cpu_s); }},
      {"load_depth", [](const WindowRow& w) { return std::to_string(w.load_depth); }},
      {"load_rate", [](const WindowRow& w) { return w.load_rate ? Exact(*w.load_rate) : ""; }},
      {"dropped", [](const WindowRow& w) { return w.dropped ? std::to_string(*w.dropped) : ""; }},
      {"generator_bound", [](const WindowRow& w) { return std::to_string(w.generator_bound); }},
      {"selftest_drift",
       [](const WindowRow& w) { return w.selftest_drift ? Exact(*w.selftest_drift) : ""; }},
      {"server_foreign_cpu_pct",
       [](const WindowRow& w) {
         return w.server_foreign_cpu_pct ? Exact(*w.server_foreign_cpu_pct) : "";
       }},
      {"server_steal_pct",
       [](const WindowRow& w) { return w.server_steal_pct ? Exact(*w.server_steal_pct) : ""; }},
      {"target_version", [](const WindowRow& w) { return w.target_version; }},
  };
  std::string out;
  for (const Field& f : kFields) out += std::string(out.empty() ? "" : ",") + f.first;
  out += ",newest,samples,server_cpu_pct_mean,server_cpu_pct_max,samples_rss_max_kb";
  // The side services' columns only in a campaign with services, so the columns of every other
  // campaign stay as they were.
  const bool services = cx.stats.services;
  if (services) out += ",services_cpu_s,service_cpu_us_per_request,total_cpu_us_per_request";
  out += "\r\n";
  for (const WindowRow& w : in.windows) {
    std::string line;
    for (const Field& f : kFields) line += (line.empty() ? "" : ",") + CsvField(f.second(w));
    const SampleSummary* s = SamplesOf(in, w.id);
    line += cx.newest.count(w.id) ? ",1" : ",0";
    line += "," + std::to_string(s ? s->count : 0) + "," +
            Exact(s ? s->server_cpu_pct_mean : kNaN) + "," +
            Exact(s ? s->server_cpu_pct_max : kNaN) + "," +
            (s && s->server_count ? std::to_string(s->rss_max_kb) : "");
    if (services) {
      const std::optional<double> cpu = ServicesCpuOf(in, w.id);
      const Measurement m = ToMeasurement(w, cpu);
      line += "," + (cpu ? Exact(*cpu) : "") + "," +
              Exact(MetricValue(m, Metric::kServiceCpuUsPerRequest)) + "," +
              Exact(MetricValue(m, Metric::kTotalCpuUsPerRequest));
    }
    out += line + "\r\n";
  }
  return out;
}

}  // namespace benchlab
