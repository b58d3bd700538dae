// FormatLoadResult and LoadResultToJson: the load result for people (wrk-like) and machines.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "common/parse.h"
#include "loadgen/load.h"
#include "loadgen/request.h"

namespace benchlab {

namespace {

std::string Printf(const char* format, double value, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value, unit);
  return buf;
}

std::string FormatLatency(double us) {
  if (us < 1000) return Printf("%.0f%s", us, "us");
  if (us < 1e6) return Printf("%.2f%s", us / 1e3, "ms");
  return Printf("%.2f%s", us / 1e6, "s");
}

std::string FormatBytes(double bytes) {
  static const char* const kUnits[] = {"B", "KB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return Printf(unit == 0 ? "%.0f%s" : "%.2f%s", bytes, kUnits[unit]);
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

}  // namespace

std::string FormatLoadResult(const LoadOptions& options, const LoadResult& result) {
  const int threads = std::min(options.threads, options.connections);
  const Histogram& h = result.latency_us;
  std::string out = "Running " + FormatDuration(options.duration) + " test @ http://" +
                    HostHeaderValue(options.host, options.port) + options.path + "\n";
  out += "  " + std::to_string(threads) + " threads and " + std::to_string(options.connections) +
         " connections\n";
  out += "  Latency " + Pad("mean", 9) + Pad("p50", 9) + Pad("p90", 9) + Pad("p99", 9) +
         Pad("p99.9", 9) + Pad("max", 9) + "\n";
  out += "          " + Pad(FormatLatency(h.Mean()), 9);
  for (double pct : {50.0, 90.0, 99.0, 99.9}) {
    out += Pad(FormatLatency(static_cast<double>(h.ValueAtPercentile(pct))), 9);
  }
  out += Pad(FormatLatency(static_cast<double>(h.Max())), 9) + "\n";
  out += "  " + std::to_string(result.requests) + " requests in " +
         Printf("%.2f%s", result.duration_s, "s") + ", " +
         FormatBytes(static_cast<double>(result.bytes_read)) + " read\n";
  if (result.non_2xx > 0) {
    out += "  Non-2xx responses: " + std::to_string(result.non_2xx) + " (";
    bool first = true;
    for (const auto& [status, count] : result.status_counts) {
      if (status >= 200 && status <= 299) continue;
      out += (first ? "" : ", ") + std::to_string(status) + ": " + std::to_string(count);
      first = false;
    }
    out += ")\n";
  }
  const ErrorCounts& e = result.errors;
  if (e.Total() > 0) {
    out += "  Errors: connect " + std::to_string(e.connect) + ", read " + std::to_string(e.read) +
           ", write " + std::to_string(e.write) + ", timeout " + std::to_string(e.timeout) +
           ", parse " + std::to_string(e.parse) + "\n";
  }
  if (result.reconnects > 0) out += "  Reconnects: " + std::to_string(result.reconnects) + "\n";
  out += Printf("Requests/sec: %10.2f%s", result.rps, "\n");
  return out;
}

std::string LoadResultToJson(const LoadResult& result) {
  const Histogram& h = result.latency_us;
  nlohmann::ordered_json j;
  j["requests"] = result.requests;
  j["duration_s"] = result.duration_s;
  j["rps"] = result.rps;
  j["latency_us"] = {{"mean", h.Mean()},
                     {"p50", h.ValueAtPercentile(50)},
                     {"p90", h.ValueAtPercentile(90)},
                     {"p99", h.ValueAtPercentile(99)},
                     {"p999", h.ValueAtPercentile(99.9)},
                     {"max", h.Max()}};
  nlohmann::ordered_json status = nlohmann::ordered_json::object();
  for (const auto& [code, count] : result.status_counts) status[std::to_string(code)] = count;
  j["status"] = status;
  j["errors"] = {{"connect", result.errors.connect},
                 {"read", result.errors.read},
                 {"write", result.errors.write},
                 {"timeout", result.errors.timeout},
                 {"parse", result.errors.parse}};
  j["non_2xx"] = result.non_2xx;
  j["reconnects"] = result.reconnects;
  j["bytes_read"] = result.bytes_read;
  j["per_second"] = result.per_second_requests;
  j["thread_cpu_s"] = result.thread_cpu_s;
  j["histogram"] = h.Serialize();
  return j.dump(2);
}

}  // namespace benchlab
