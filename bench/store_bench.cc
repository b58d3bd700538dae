// store_bench: how fast the store keeps windows. A benchmark, not a test: it asserts nothing and
// prints figures with the conditions they were measured under.
//
//   store_bench [--windows 10000] [--server-samples 100] [--load-samples 10] [--dir DIR] [--keep]
//
// It opens a fresh Store (coordinator/store.h) in a temporary directory (or DIR, which must not
// hold a store yet), creates a campaign of 4 targets x 2 scenarios x 5 load levels and inserts
// --windows windows into it, one InsertWindow per window, as the coordinator stores them (one
// transaction each, the window with its samples). Each window is realistic: every WindowRow
// field is filled, the latency histogram is a serialized Histogram of 50,000 log-normal values,
// the load generator's JSON record is the real LoadResultToJson of such a result, and it carries
// --server-samples server samples (10 s at 10 Hz by default) and --load-samples per-second load
// samples. Rows are built outside the timed calls. It prints the total time of the InsertWindow
// calls, windows/s, samples/s, InsertWindow latency p50/p99/max, the database's size, and the
// time of ListWindows over the whole campaign and of ListSamples of one window.
//
// Build and run: make bench-coordinator, or
//   ninja -C build store_bench && build/bin/store_bench
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "common/histogram.h"
#include "coordinator/store.h"
#include "loadgen/load.h"

namespace benchlab {
namespace {

using Steady = std::chrono::steady_clock;

struct Options {
  int windows = 10000;
  int server_samples = 100;
  int load_samples = 10;
  std::string dir;
  bool keep = false;
};

const std::vector<std::string> kTargets = {"hello-server", "nginx", "node-express", "bun-hono"};
const std::vector<std::string> kScenarios = {"plaintext", "json"};
const std::vector<int> kConnections = {16, 64, 256, 1024, 4096};

// What the load agent reports for one window; a few are made up front and reused in turn.
struct LoadFixture {
  Histogram latency;
  Histogram uncorrected;
  std::string record;  // LoadResultToJson
};

LoadFixture MakeLoadFixture(std::mt19937_64& rng, int seconds, bool open_loop) {
  std::lognormal_distribution<double> latency(std::log(400.0), 0.6);  // median 400 us
  LoadFixture f;
  LoadResult r;
  for (int i = 0; i < 50000; ++i) {
    const auto us = static_cast<uint64_t>(latency(rng));
    r.latency_us.Record(us);
    if (open_loop) r.latency_uncorrected_us.Record(us * 9 / 10);
  }
  r.requests = 1'204'331;
  r.duration_s = seconds;
  r.rps = static_cast<double>(r.requests) / seconds;
  r.throughput_rps = r.rps * 0.999;
  r.status_counts = {{200, r.requests}};
  r.bytes_read = r.requests * 163;
  r.thread_cpu_s = {4.61, 4.58};
  r.cpu_user_s = 2.9;
  r.cpu_sys_s = 6.3;
  r.open_loop = open_loop;
  r.rate = open_loop ? 120000 : 0;
  r.sent = r.requests + 12;
  r.scheduled = open_loop ? r.sent : 0;
  for (int s = 0; s < seconds; ++s) {
    r.per_second_requests.push_back(r.requests / static_cast<uint64_t>(seconds) + s);
    r.series.push_back({static_cast<uint32_t>(s + 1), r.per_second_requests.back(),
                        r.latency_us.ValueAtPercentile(99)});
  }
  r.syscalls = {612'000, 598'000, 401'000, 64};
  r.peak_connections = 256;
  r.worker_cpus = {{2}, {3}};
  r.mix_sent = {r.sent};
  f.record = LoadResultToJson(r);
  f.latency = std::move(r.latency_us);
  f.uncorrected = std::move(r.latency_uncorrected_us);
  return f;
}

const char* kHostJson =
    R"({"hostname":"lab-a","cpu_model":"AMD EPYC 7B13 64-Core Processor","logical_cores":16,)"
    R"("physical_cores":8,"smt":true,"governor":"performance","kernel":"6.1.0-18-amd64",)"
    R"("memory_kb":65843212,"hypervisor":false,"agent_version":"0.1.0"})";

WindowRow MakeWindow(int64_t campaign_id, int i, const LoadFixture& load) {
  const size_t cells = kTargets.size() * kScenarios.size() * kConnections.size();
  const size_t cell = static_cast<size_t>(i) % cells;
  WindowRow w;
  w.campaign_id = campaign_id;
  w.target = kTargets[cell % kTargets.size()];
  w.scenario = kScenarios[cell / kTargets.size() % kScenarios.size()];
  w.connections = kConnections[cell / (kTargets.size() * kScenarios.size())];
  w.round = i / static_cast<int>(cells) + 1;
  w.position = static_cast<int>(cell);
  w.attempt = 1;
  const bool invalid = i % 17 == 0;
  w.verdict = invalid ? "invalid" : "valid";
  w.reasons = invalid ? R"j(["foreign CPU on the server host 7.2% > 5% (cc1plus 6.1%)"])j" : "[]";
  w.started_at = "2026-03-14T10:22:31.104Z";
  w.ended_at = "2026-03-14T10:22:43.612Z";
  w.server_agent = "server-1";
  w.load_agent = "load-1";
  w.requests = 1'204'331 + static_cast<uint64_t>(i);
  w.duration_s = 10.0;
  w.rps = static_cast<double>(w.requests) / w.duration_s;
  w.p50_us = load.latency.ValueAtPercentile(50);
  w.p90_us = load.latency.ValueAtPercentile(90);
  w.p99_us = load.latency.ValueAtPercentile(99);
  w.p999_us = load.latency.ValueAtPercentile(99.9);
  w.max_us = load.latency.Max();
  w.mean_us = load.latency.Mean();
  w.errors = 3;
  w.errors_connect = 1;
  w.errors_read = 1;
  w.errors_write = 0;
  w.errors_timeout = 1;
  w.errors_parse = 0;
  w.errors_status = 0;
  w.status_counts = nlohmann::json{{"200", w.requests}}.dump();
  w.server_cpu_s = 9.7;
  w.cpu_us_per_request = w.server_cpu_s * 1e6 / static_cast<double>(w.requests);
  w.rss_peak_kb = 48'212;
  w.rss_mean_kb = 46'880;
  w.startup_ms = 41.3;
  w.first_request_ms = 0.42;
  w.idle_rss_kb = 12'004;
  w.load_cpu_s = 9.2;
  w.align_error_ms = 0.8;
  w.histogram = load.latency.Serialize();
  w.target_version = w.target + " 1.25.4";
  w.cpu_accounting = "cgroup";
  w.threads = 4;
  w.ctx_switches_voluntary = 18'220;
  w.ctx_switches_involuntary = 912;
  w.selftest_server_ms = 85.2;
  w.selftest_load_ms = 84.7;
  w.selftest_drift = 0.012;
  w.server_busy_pct = 52.1;
  w.server_steal_pct = 0.0;
  w.server_foreign_cpu_pct = invalid ? 7.2 : 0.4;
  w.server_foreign_cpu_max_pct = invalid ? 11.8 : 1.1;
  w.server_top_foreign = R"([{"comm":"cc1plus","cpu_pct":6.1},{"comm":"systemd","cpu_pct":0.3}])";
  w.load_busy_pct = 61.4;
  w.load_steal_pct = 0.0;
  w.load_foreign_cpu_pct = 0.3;
  w.load_foreign_cpu_max_pct = 0.9;
  w.load_top_foreign = R"([{"comm":"sshd","cpu_pct":0.2}])";
  w.max_temp_c = 64.0;
  w.throttle_events = 0;
  w.min_freq_ratio = 0.98;
  w.swap_in_pages = 0;
  w.swap_out_pages = 0;
  w.server_host = kHostJson;
  w.load_host = kHostJson;
  w.load_depth = 1;
  w.sent = static_cast<int64_t>(w.requests + 12);
  w.errors_mismatch = 0;
  w.generator_bound = 0;
  w.throughput_rps = w.rps * 0.999;
  if (load.uncorrected.Count() > 0) {  // an open-loop window
    w.load_rate = 120000;
    w.dropped = 0;
    w.p99_uncorrected_us = static_cast<int64_t>(load.uncorrected.ValueAtPercentile(99));
    w.histogram_uncorrected = load.uncorrected.Serialize();
  }
  w.load_record = load.record;
  return w;
}

std::vector<SampleRow> MakeSamples(const Options& o, int i) {
  std::vector<SampleRow> samples;
  samples.reserve(static_cast<size_t>(o.server_samples + o.load_samples));
  const double period = o.server_samples > 0 ? 10.0 / o.server_samples : 0;
  for (int s = 0; s < o.server_samples; ++s) {
    SampleRow r;
    r.source = "server";
    r.t_s = (s + 1) * period;
    r.cpu_pct = 95.0 + (s + i) % 7;
    r.rss_kb = 46'000 + static_cast<uint64_t>(s) * 8;
    r.host_busy_pct = 51.0 + s % 5;
    r.foreign_pct = 0.3;
    r.steal_pct = 0.0;
    samples.push_back(r);
  }
  for (int s = 0; s < o.load_samples; ++s) {
    SampleRow r;
    r.source = "load";
    r.t_s = s + 1;
    r.cpu_pct = 0;
    r.requests = 120'433 + static_cast<uint64_t>(s);
    r.p99_us = 1'900 + s;
    samples.push_back(r);
  }
  return samples;
}

double Seconds(Steady::duration d) { return std::chrono::duration<double>(d).count(); }

uint64_t FileSize(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : size;
}

int Run(const Options& o) {
  std::string dir = o.dir;
  if (dir.empty()) {
    char tmpl[] = "/tmp/benchlab-store-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
    dir = tmpl;
  }
  const std::string db = dir + "/store_bench.db";
  auto opened = Store::Open(db);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<Store> owned = std::move(opened).value();
  Store& store = *owned;

  CampaignRow campaign;
  campaign.name = "store-bench";
  campaign.baseline = "nginx";
  campaign.spec_toml = "# store_bench\nname = \"store-bench\"\n";
  campaign.source = "store_bench.toml";
  campaign.total_windows = o.windows;
  std::vector<TargetRow> targets;
  for (const auto& t : kTargets) targets.push_back({t, "[]", "2-3"});
  std::vector<ScenarioRow> scenarios;
  for (const auto& s : kScenarios) scenarios.push_back({s, "scenario", "GET", "/" + s, 200, ""});
  auto campaign_id = store.CreateCampaign(campaign, targets, scenarios);
  if (!campaign_id.ok()) {
    std::fprintf(stderr, "%s\n", campaign_id.status().ToString().c_str());
    return 1;
  }

  std::mt19937_64 rng(42);
  std::vector<LoadFixture> fixtures;
  for (int f = 0; f < 8; ++f) fixtures.push_back(MakeLoadFixture(rng, 10, f % 4 == 3));
  const WindowRow example = MakeWindow(*campaign_id, 0, fixtures[0]);

  std::printf(
      "store_bench: %d windows, %d server + %d load samples each, one InsertWindow "
      "(one transaction) per window, into %s\n",
      o.windows, o.server_samples, o.load_samples, db.c_str());
  std::printf(
      "  a window: histogram %zu bytes, load record %zu bytes; 1 in 4 fixtures open loop "
      "(second histogram)\n",
      example.histogram.size(), example.load_record.size());

  Histogram insert_us;
  Steady::duration inserting{};
  int failures = 0;
  std::string last_error;
  const auto wall_start = Steady::now();
  for (int i = 0; i < o.windows; ++i) {
    const WindowRow w = MakeWindow(*campaign_id, i, fixtures[static_cast<size_t>(i) % 8]);
    const std::vector<SampleRow> samples = MakeSamples(o, i);
    const auto start = Steady::now();
    auto id = store.InsertWindow(w, samples);
    const auto took = Steady::now() - start;
    inserting += took;
    insert_us.Record(
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(took).count()));
    if (!id.ok()) {
      ++failures;
      last_error = id.status().ToString();
    }
  }
  const double wall = Seconds(Steady::now() - wall_start);
  const double s = Seconds(inserting);
  const double samples = static_cast<double>(o.windows) * (o.server_samples + o.load_samples);
  // What the coordinator would have on disk now; the WAL is folded into the file on close.
  const uint64_t db_bytes = FileSize(db), wal_bytes = FileSize(db + "-wal");
  std::printf(
      "  InsertWindow: %.2f s in the calls (%.2f s wall with building the rows), "
      "%.0f windows/s, %.0f samples/s, %d failed%s%s\n",
      s, wall, o.windows / s, samples / s, failures, last_error.empty() ? "" : ": ",
      last_error.c_str());
  // Microseconds and bytes as printed figures: doubles, exact up to 2^53.
  const auto ms = [](uint64_t us) { return static_cast<double>(us) / 1000.0; };
  std::printf("  per window: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
              ms(insert_us.ValueAtPercentile(50)), ms(insert_us.ValueAtPercentile(99)),
              ms(insert_us.Max()));

  WindowFilter filter;
  filter.campaign = campaign.name;
  auto list_start = Steady::now();
  auto listed = store.ListWindows(filter);
  const double list_s = Seconds(Steady::now() - list_start);
  if (listed.ok()) {
    std::printf("  ListWindows of the campaign: %zu windows in %.3f s\n", listed->size(), list_s);
  } else {
    std::printf("  ListWindows: %s\n", listed.status().ToString().c_str());
  }
  if (listed.ok() && !listed->empty()) {
    list_start = Steady::now();
    auto one = store.ListSamples(listed->back().id);
    const double one_ms = Seconds(Steady::now() - list_start) * 1000;
    std::printf("  ListSamples of one window: %zu samples in %.2f ms\n", one.ok() ? one->size() : 0,
                one_ms);
  }

  const auto close_start = Steady::now();
  owned.reset();
  const double close_s = Seconds(Steady::now() - close_start);
  const uint64_t closed_bytes = FileSize(db);
  const auto mb = [](uint64_t bytes) { return static_cast<double>(bytes) / 1e6; };
  std::printf(
      "  database: %.1f MB after close (%.1f KB per window; the close, which folds the WAL "
      "into the file, took %.2f s); while open: file %.1f MB + WAL %.1f MB\n",
      mb(closed_bytes), static_cast<double>(closed_bytes) / 1024.0 / o.windows, close_s,
      mb(db_bytes), mb(wal_bytes));

  if (!o.keep && o.dir.empty()) std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace benchlab

int main(int argc, char** argv) {
  benchlab::Options o;
  CLI::App app{"How fast the store keeps windows with their samples."};
  app.add_option("--windows", o.windows, "windows to insert")->capture_default_str();
  app.add_option("--server-samples", o.server_samples, "server samples per window (10 Hz x 10 s)")
      ->capture_default_str();
  app.add_option("--load-samples", o.load_samples, "load samples per window (1 Hz x 10 s)")
      ->capture_default_str();
  app.add_option("--dir", o.dir, "directory for the database (default: a temporary one)");
  app.add_flag("--keep", o.keep, "keep the temporary directory");
  CLI11_PARSE(app, argc, argv);
  if (o.windows < 1 || o.server_samples < 0 || o.load_samples < 0) {
    std::fprintf(stderr, "--windows must be positive and sample counts not negative\n");
    return 2;
  }
  return benchlab::Run(o);
}
