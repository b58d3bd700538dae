// FormatLoadResult and LoadResultToJson: the load result for people (wrk-like) and machines.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "common/parse.h"
#include "common/text_table.h"
#include "loadgen/load.h"
#include "loadgen/request.h"

namespace benchlab {

namespace {

std::string Printf(const char* format, double value, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value, unit);
  return buf;
}

// One number through a printf format that holds exactly one %f-like conversion.
std::string Num(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

std::string FormatLatency(double us) {
  if (us < 1000) return Printf("%.0f%s", us, "µs");  // µs, as everywhere in benchlab
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

// Right-aligned in `width` terminal columns ("µ" is two bytes and one column).
std::string Pad(const std::string& s, size_t width) {
  const size_t used = TextColumns(s);
  return used >= width ? s : std::string(width - used, ' ') + s;
}

std::string LatencyRow(const char* label, const Histogram& h) {
  std::string out = std::string("  ") + label;
  out += std::string(10 - std::min<size_t>(10, out.size()), ' ') + Pad(FormatLatency(h.Mean()), 9);
  for (double pct : {50.0, 90.0, 99.0, 99.9}) {
    out += Pad(FormatLatency(static_cast<double>(h.ValueAtPercentile(pct))), 9);
  }
  return out + Pad(FormatLatency(static_cast<double>(h.Max())), 9) + "\n";
}

nlohmann::ordered_json LatencyJson(const Histogram& h) {
  return {{"mean", h.Mean()},
          {"p50", h.ValueAtPercentile(50)},
          {"p90", h.ValueAtPercentile(90)},
          {"p99", h.ValueAtPercentile(99)},
          {"p999", h.ValueAtPercentile(99.9)},
          {"max", h.Max()}};
}

}  // namespace

std::string FormatLoadResult(const LoadOptions& options, const LoadResult& result) {
  const int threads = std::min(options.threads, options.connections);
  std::string out = "Running " + FormatDuration(options.duration) + " test @ " +
                    (options.tls ? "https://" : "http://") +
                    HostHeaderValue(options.host, options.port) + options.path + "\n";
  out += "  " + std::to_string(threads) + " threads and " + std::to_string(options.connections) +
         " connections";
  if (options.depth > 1) out += ", " + std::to_string(options.depth) + " requests deep";
  out += "\n  Engine " + std::string(IoEngineName(result.engine));
  if (!result.engine_note.empty()) out += ": " + result.engine_note;
  out += "\n";
  if (result.open_loop) {
    out += Num("  Open loop: %.0f req/s requested, ", result.rate) +
           (options.arrival == Arrival::kPoisson ? "poisson" : "constant") + " arrivals, up to " +
           std::to_string(std::max(options.max_conns, options.connections)) +
           " connections (peak " + std::to_string(result.peak_connections) + ")\n";
  }
  out += "  Latency " + Pad("mean", 9) + Pad("p50", 9) + Pad("p90", 9) + Pad("p99", 9) +
         Pad("p99.9", 9) + Pad("max", 9) + "\n";
  if (result.open_loop) {
    out += LatencyRow("corrected", result.latency_us);
    out += LatencyRow("uncorr.", result.latency_uncorrected_us);
  } else {
    out += LatencyRow("", result.latency_us);
  }
  if (result.series.size() > 1) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (const SecondPoint& p : result.series) {
      lo = std::min(lo, p.requests);
      hi = std::max(hi, p.requests);
    }
    out += "  Req/Sec   min " + std::to_string(lo) + ", max " + std::to_string(hi) + " over " +
           std::to_string(result.series.size()) + " seconds\n";
  }
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
           ", parse " + std::to_string(e.parse) + ", mismatch " + std::to_string(e.mismatch) +
           ", body too large " + std::to_string(e.body_too_large) + "\n";
  }
  if (result.tls.on) {
    const TlsFigures& t = result.tls;
    out += "  TLS " + t.version + (t.alpn.empty() ? "" : ", ALPN " + t.alpn) + ": " +
           std::to_string(t.full + t.resumed) + " handshakes (" + std::to_string(t.full) +
           " full, " + std::to_string(t.resumed) + " resumed" +
           (t.failed > 0 ? ", " + std::to_string(t.failed) + " failed" : "") + "), " +
           Num("%.1f/s", t.per_s) + "\n";
    if (t.full + t.resumed > 0) out += LatencyRow("handshake", t.handshake_us);
    if (!t.first_error.empty()) out += "  First TLS failure: " + t.first_error + "\n";
  }
  if (result.reconnects > 0) out += "  Reconnects: " + std::to_string(result.reconnects) + "\n";
  if (result.retries > 0) {
    out += "  Retried after the server closed: " + std::to_string(result.retries) + "\n";
  }
  if (result.open_loop) {
    out += Num("  Throughput %.0f req/s", result.throughput_rps) +
           Num(" (%.2f%% of the rate) completed inside the interval\n",
               result.rate > 0 ? 100 * result.throughput_rps / result.rate : 0);
    out += "  Scheduled " + std::to_string(result.scheduled) + ", sent " +
           std::to_string(result.sent) + ", dropped " + std::to_string(result.dropped) +
           "; generator lag p50 " +
           FormatLatency(static_cast<double>(result.generator_lag_us.ValueAtPercentile(50))) +
           ", p99 " +
           FormatLatency(static_cast<double>(result.generator_lag_us.ValueAtPercentile(99))) +
           ", max " + FormatLatency(static_cast<double>(result.generator_lag_us.Max())) + "\n";
  }
  if (result.requests > 0) {
    const double cpu = result.cpu_user_s + result.cpu_sys_s;
    out += Num("  CPU %.2fs", cpu) + Num(" (user %.2fs", result.cpu_user_s) +
           Num(", sys %.2fs), ", result.cpu_sys_s) +
           Num("%.2f us/request\n", cpu * 1e6 / static_cast<double>(result.requests));
  }
  if (result.generator_bound) {
    out += "  WARNING: generator-bound: the load generator, not the server, limited this run\n";
  }
  out += Printf("Requests/sec: %10.2f%s", result.rps, "\n");
  return out;
}

std::string LoadResultToJson(const LoadResult& result) {
  nlohmann::ordered_json j;
  j["mode"] = result.open_loop ? "open" : "closed";
  j["engine"] = IoEngineName(result.engine);
  if (!result.engine_note.empty()) j["engine_note"] = result.engine_note;
  j["requests"] = result.requests;
  j["duration_s"] = result.duration_s;
  j["rps"] = result.rps;
  j["throughput_rps"] = result.throughput_rps;
  j["latency_us"] = LatencyJson(result.latency_us);
  if (result.open_loop) {
    j["latency_uncorrected_us"] = LatencyJson(result.latency_uncorrected_us);
    j["rate"] = result.rate;
  }
  j["errors"] = {{"connect", result.errors.connect},
                 {"read", result.errors.read},
                 {"write", result.errors.write},
                 {"timeout", result.errors.timeout},
                 {"parse", result.errors.parse},
                 {"mismatch", result.errors.mismatch},
                 {"body_too_large", result.errors.body_too_large}};
  nlohmann::ordered_json status = nlohmann::ordered_json::object();
  for (const auto& [code, count] : result.status_counts) status[std::to_string(code)] = count;
  j["status"] = status;
  j["sent"] = result.sent;
  j["scheduled"] = result.scheduled;
  j["dropped"] = result.dropped;
  j["generator_bound"] = result.generator_bound;
  j["generator_lag_us"] = {{"p50", result.generator_lag_us.ValueAtPercentile(50)},
                           {"p99", result.generator_lag_us.ValueAtPercentile(99)},
                           {"max", result.generator_lag_us.Max()}};
  j["cpu"] = {{"user_s", result.cpu_user_s}, {"sys_s", result.cpu_sys_s}};
  nlohmann::ordered_json series = nlohmann::ordered_json::array();
  for (const SecondPoint& p : result.series) {
    series.push_back({{"t", p.t}, {"requests", p.requests}, {"p99_us", p.p99_us}});
  }
  j["series"] = series;
  j["non_2xx"] = result.non_2xx;
  j["reconnects"] = result.reconnects;
  j["retries"] = result.retries;
  j["bytes_read"] = result.bytes_read;
  j["peak_connections"] = result.peak_connections;
  j["syscalls"] = {{"reads", result.syscalls.reads},
                   {"writes", result.syscalls.writes},
                   {"epoll_waits", result.syscalls.epoll_waits},
                   {"epoll_ctls", result.syscalls.epoll_ctls},
                   {"ring_enters", result.syscalls.ring_enters}};
  if (result.tls.on) {
    const TlsFigures& t = result.tls;
    nlohmann::ordered_json tls = {{"version", t.version},
                                  {"alpn", t.alpn},
                                  {"handshakes_full", t.full},
                                  {"handshakes_resumed", t.resumed},
                                  {"handshakes_failed", t.failed},
                                  {"handshakes_per_s", t.per_s},
                                  {"handshake_us", LatencyJson(t.handshake_us)}};
    if (!t.first_error.empty()) tls["first_error"] = t.first_error;
    j["tls"] = tls;
  }
  j["mix_sent"] = result.mix_sent;
  j["worker_cpus"] = result.worker_cpus;
  j["per_second"] = result.per_second_requests;
  j["thread_cpu_s"] = result.thread_cpu_s;
  j["histogram"] = result.latency_us.Serialize();
  if (result.open_loop) j["histogram_uncorrected"] = result.latency_uncorrected_us.Serialize();
  return j.dump(2);
}

}  // namespace benchlab
