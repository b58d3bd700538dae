// The load of one window: one RunLoad stream per load agent, started together, with the server
// agent's interval marked at the first MEASURE_START and the last MEASURE_END; then the agents'
// results merged into the window's row.
#include <algorithm>
#include <latch>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "common/clock.h"
#include "common/folded_profile.h"
#include "common/histogram.h"
#include "common/printable.h"
#include "common/service.h"
#include "coordinator/server/window_protocol.h"
#include "spdlog/spdlog.h"

namespace benchlab::window_detail {

v1::RunLoadRequest WindowProtocol::LoadRequest(const ScenarioDef& scenario,
                                               const LoadShare& share) const {
  v1::RunLoadRequest req;
  req.set_host(placement_.server_host);
  req.set_port(port_);
  req.set_method(scenario.method);
  req.set_path(scenario.path);
  for (const auto& [name, value] : scenario.headers) {
    auto* h = req.add_headers();
    h->set_name(name);
    h->set_value(value);
  }
  req.set_body(scenario.body);
  req.set_connections(share.connections);
  req.set_depth(campaign_.load_depth);
  if (planned_.rate > 0) {
    req.set_rate(share.rate);
    req.set_poisson(campaign_.load_poisson);
    if (share.seed != 0) req.set_seed(share.seed);
    req.set_max_conns(share.max_conns);
  }
  req.set_threads(campaign_.load_threads);
  for (int cpu : campaign_.load_cpus) req.add_cpus(cpu);
  req.set_warmup_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(campaign_.warmup).count());
  req.set_duration_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(campaign_.duration).count());
  req.set_timeout_ms(2000);
  req.set_tool(planned_.tool);
  req.set_engine(campaign_.load_engine);
  req.set_requests_per_connection(campaign_.load_requests_per_connection);
  // Over TLS when the campaign asks ([load] tls) or the target serves HTTPS ([[target]] tls);
  // such a target is verified against its own CA, the defaults apply without [load] tls.
  if (campaign_.load_tls || !target_ca_pem_.empty()) {
    const Campaign::LoadTls t = campaign_.load_tls.value_or(Campaign::LoadTls{});
    v1::TlsLoad* tls = req.mutable_tls();
    tls->set_ca_pem(target_ca_pem_);
    tls->set_resumption(t.resumption);
    tls->set_version(t.version);
    for (const std::string& p : t.alpn) tls->add_alpn(p);
    tls->set_insecure(!t.verify);
    tls->set_server_name(t.server_name);
  }
  req.set_spool_key(share.spool_key);
  req.set_window(window_);
  // Every response is checked against the scenario's expectation while measuring.
  req.add_expect_status(scenario.expect.status);
  if (scenario.expect.body) {
    req.set_check_body(true);
    req.set_expect_body(*scenario.expect.body);
  }
  return req;
}

LoadStreams WindowProtocol::StreamLoads(const ScenarioDef& scenario) {
  const auto budget =
      std::chrono::duration_cast<std::chrono::milliseconds>(campaign_.warmup + campaign_.duration) +
      std::chrono::seconds(30);
  using SteadyTime = std::chrono::steady_clock::time_point;
  LoadStreams out;
  // What the load streams share; every field below, `out` and every Mark, under `mu`.
  std::mutex mu;
  bool marked = false;
  size_t starts = 0, ends = 0;
  SteadyTime first_start, last_start, first_end, last_end;
  auto mark = [&](v1::MarkRequest::Kind kind, v1::MarkReply* reply) {
    const SteadyTime received = clock_.Now();
    v1::MarkRequest mreq;
    mreq.set_handle(handle_);
    mreq.set_kind(kind);
    mreq.set_window(target_window_);
    if (kind == v1::MarkRequest::END) mreq.set_spool_key(spool_key_);
    grpc::ClientContext mctx;
    SetDeadline(mctx, clock_, std::chrono::seconds(5));
    grpc::Status status = server_->Mark(&mctx, mreq, reply);
    // The server's cut happened within this round trip of the load generator's event.
    out.align_ms = std::max(out.align_ms, Ms(clock_.Now() - received).count());
    if (kind == v1::MarkRequest::END && status.ok()) out.server_spooled = true;
    if (!status.ok() && !out.mark_failure) {
      out.mark_failure = Failure(kind == v1::MarkRequest::BEGIN ? "mark_begin" : "mark_end",
                                 placement_.server_agent, status, received);
    }
    return status.ok();
  };
  // The server's interval opens at the first agent's MEASURE_START and closes at the last one's
  // MEASURE_END, so it covers every agent's measured interval.
  auto stream_load = [&](LoadShare& share) {
    v1::RunLoadRequest req = LoadRequest(scenario, share);
    grpc::ClientContext ctx;
    SetDeadline(ctx, clock_, budget);
    share.called = clock_.Now();
    auto stream = share.stub->RunLoad(&ctx, req);
    v1::RunLoadEvent event;
    while (stream->Read(&event)) {
      const SteadyTime arrived = clock_.Now();
      if (event.kind() == v1::RunLoadEvent::MEASURE_START) {
        std::lock_guard<std::mutex> lock(mu);
        last_start = arrived;
        if (starts++ > 0) continue;
        first_start = arrived;
        out_.row.started_at = FormatIsoTime(clock_.WallNow());
        v1::MarkReply ignored;
        marked = mark(v1::MarkRequest::BEGIN, &ignored);
      } else if (event.kind() == v1::RunLoadEvent::MEASURE_END) {
        std::lock_guard<std::mutex> lock(mu);
        if (ends++ == 0) first_end = arrived;
        last_end = arrived;
        if (ends < shares_.size()) continue;
        out_.row.ended_at = FormatIsoTime(clock_.WallNow());
        if (marked) {
          mark(v1::MarkRequest::END, &out.figures);
          marked = false;
        }
      } else if (event.kind() == v1::RunLoadEvent::RESULT) {
        share.have_result = true;
        share.result.Swap(event.mutable_result());
      }
    }
    share.status = stream->Finish();
  };
  if (!multi()) {
    stream_load(shares_.front());
  } else {
    // One thread per extra agent; all streams open together once every thread is up.
    std::latch go(static_cast<std::ptrdiff_t>(shares_.size()));
    std::vector<std::thread> threads;
    for (size_t i = 1; i < shares_.size(); ++i) {
      threads.emplace_back([&, i] {
        go.arrive_and_wait();
        stream_load(shares_[i]);
      });
    }
    go.arrive_and_wait();
    stream_load(shares_.front());
    for (std::thread& thread : threads) thread.join();
  }
  if (marked) {
    // A stream broke inside the interval: close the server's interval anyway. Its failure is
    // the stream's; the mark is only tidying up.
    v1::MarkReply ignored;
    const std::optional<WindowReason> kept = out.mark_failure;
    mark(v1::MarkRequest::END, &ignored);
    out.mark_failure = kept;
  }
  // Each agent's interval lies inside the server's within the Mark round trip plus how far the
  // agents' own starts (or ends) were apart; with one agent the spread is 0.
  out.spread_ms = std::max(Ms(last_start - first_start).count(), Ms(last_end - first_end).count());
  return out;
}

bool WindowProtocol::MeasureLoad() {
  const ScenarioDef* scenario = campaign_.FindScenario(planned_.scenario);
  LoadStreams streams = StreamLoads(*scenario);
  std::optional<WindowReason> merge_failure = MergeLoadResults(*scenario);
  if (streams.server_spooled) {
    out_.spooled.push_back({placement_.server_agent, spool_key_ + ".server", target_window_});
  }
  bool broken = false;
  for (const LoadShare& share : shares_) {
    if (share.status.ok()) continue;
    Failed(Failure("run_load", share.agent, share.status, share.called));
    broken = true;
  }
  if (broken) return false;
  for (const LoadShare& share : shares_) {
    if (share.have_result) continue;
    WindowReason none;
    none.name = "run_load";
    none.host = share.agent;
    none.text = multi() ? "run_load: load agent " + share.agent + " sent no result"
                        : "run_load: the load agent sent no result";
    return Failed(std::move(none));
  }
  if (merge_failure) return Failed(std::move(*merge_failure));
  if (streams.mark_failure) return Failed(std::move(*streams.mark_failure));
  CopyServerFigures(streams.figures, streams.align_ms + streams.spread_ms);
  return true;
}

ProfileRow ProfileOf(const v1::MarkReply& figures, int frequency_hz) {
  ProfileRow profile;
  profile.frequency_hz = frequency_hz;
  if (!figures.profile_error().empty()) {
    profile.error = Truncated(PrintableText(figures.profile_error()), kMaxProfileErrorBytes);
    return profile;
  }
  if (figures.profile_folded_z().empty()) {
    profile.error = "the server agent sent no profile (an agent without profiles?)";
    return profile;
  }
  // Held to the same limits as anything else from the network (docs/security.md, "Limits"):
  // what cannot be read back is refused here, so the store holds only profiles that parse.
  if (figures.profile_folded_z().size() > kMaxProfileBytes) {
    profile.error = "the server agent's profile was refused: " +
                    std::to_string(figures.profile_folded_z().size()) + " bytes, over " +
                    std::to_string(kMaxProfileBytes);
    return profile;
  }
  auto parsed = DecompressFolded(figures.profile_folded_z());
  if (!parsed.ok()) {
    profile.error = "the server agent's profile was refused: " +
                    Truncated(parsed.status().message(), kMaxProfileErrorBytes);
    return profile;
  }
  profile.samples = parsed->samples();
  profile.folded_z = figures.profile_folded_z();
  return profile;
}

void WindowProtocol::CopyServerFigures(const v1::MarkReply& figures, double align_error_ms) {
  auto& row = out_.row;
  row.align_error_ms = align_error_ms;
  row.server_cpu_s = figures.cpu_user_s() + figures.cpu_sys_s();
  row.cpu_us_per_request =
      row.requests ? row.server_cpu_s * 1e6 / static_cast<double>(row.requests) : 0;
  row.rss_peak_kb = figures.rss_peak_kb();
  row.rss_mean_kb = figures.rss_mean_kb();
  if (!figures.target_alive()) target_died_ = true;
  // Side services: their CPU and memory apart from the target's, a death fails the window
  // (service_exited), and each probe's rise is judged against [gates] probe.NAME.max.
  if (figures.services_size() > 0) measures_.has_services = true;
  for (const auto& s : figures.services()) {
    auto found = std::find_if(out_.services.begin(), out_.services.end(),
                              [&](const ServiceRow& r) { return r.service == s.name(); });
    if (found == out_.services.end()) {
      out_.services.push_back(ServiceRow{});
      found = out_.services.end() - 1;
      found->service = s.name();
    }
    found->cpu_user_s = s.cpu_user_s();
    found->cpu_sys_s = s.cpu_sys_s();
    found->rss_mean_kb = s.rss_mean_kb();
    found->rss_peak_kb = s.rss_peak_kb();
    found->cpu_accounting = s.cpu_source();
    found->alive = s.alive();
    found->exit = s.exit();
    if (!s.alive()) measures_.service_exits.push_back(s.name() + " " + s.exit());
  }
  for (const auto& p : figures.probes()) {
    ProbeRow probe;
    probe.service = p.service();
    probe.probe = p.name();
    if (p.has_before()) probe.before = p.before();
    if (p.has_after()) probe.after = p.after();
    const ProbeDelta delta = ProbeDeltaOf(probe.before, probe.after, p.error());
    probe.delta = delta.delta;
    probe.unavailable = delta.unavailable;
    measures_.probes.push_back({probe.service, probe.probe, probe.delta, probe.unavailable});
    out_.probes.push_back(std::move(probe));
  }
  if (campaign_.Profiles(planned_.target)) out_.profile = ProfileOf(figures, campaign_.profile_hz);
  row.threads = figures.threads();
  row.cpu_accounting = figures.cpu_source();
  row.ctx_switches_voluntary = figures.voluntary_ctxt_switches();
  row.ctx_switches_involuntary = figures.nonvoluntary_ctxt_switches();
  if (figures.has_host()) {
    const auto& h = figures.host();
    server_host_ = h;
    row.server_busy_pct = h.busy_pct();
    row.server_steal_pct = h.steal_pct();
    row.server_foreign_cpu_pct = h.foreign_mean_pct();
    row.server_foreign_cpu_max_pct = h.foreign_max_pct();
    row.server_top_foreign = TopForeignJson(h);
    if (h.has_max_temp_c()) row.max_temp_c = h.max_temp_c();
    if (h.has_throttle_core_events() || h.has_throttle_package_events()) {
      row.throttle_events =
          static_cast<int64_t>(h.throttle_core_events() + h.throttle_package_events());
    }
    if (h.has_min_freq_ratio()) row.min_freq_ratio = h.min_freq_ratio();
    if (h.has_swap_in_pages()) row.swap_in_pages = static_cast<int64_t>(h.swap_in_pages());
    if (h.has_swap_out_pages()) row.swap_out_pages = static_cast<int64_t>(h.swap_out_pages());
  }
  for (const auto& s : figures.samples()) {
    SampleRow sample;
    sample.source = "server";
    sample.t_s = s.t_s();
    sample.cpu_pct = s.cpu_pct();
    sample.rss_kb = s.rss_kb();
    if (figures.has_host()) {
      sample.host_busy_pct = s.host_busy_pct();
      sample.foreign_pct = s.foreign_pct();
      sample.steal_pct = s.steal_pct();
    }
    out_.samples.push_back(sample);
  }
}

namespace {

// The results of a window's load agents, added one share at a time and then written into the
// window's row: counts and rates summed, histograms merged, percentiles recomputed, per-second
// samples added up.
class LoadMerge {
 public:
  LoadMerge(const ScenarioDef& scenario, bool multi) : scenario_(scenario), multi_(multi) {}

  void Add(const LoadShare& share, WindowRow& row);
  // The merged figures into `row` and the load's per-second samples into `samples`.
  void WriteTo(const LoadShare& first, WindowRow& row, std::vector<SampleRow>& samples);

  bool any() const { return any_; }
  uint64_t status_mismatches() const { return status_mismatches_; }
  uint64_t mismatches() const { return mismatches_; }
  // Why the results could not be merged (a histogram that does not parse), if so.
  std::optional<WindowReason>& failure() { return failure_; }

 private:
  void MergeHistogram(const LoadShare& share, const std::string& text, const char* what,
                      Histogram& into, bool& ok);
  void AddHostFigures(const v1::HostFigures& h, WindowRow& row);
  void AddSeconds(const v1::LoadResult& r);

  const ScenarioDef& scenario_;
  const bool multi_;
  bool any_ = false, latency_ok_ = true, uncorrected_ok_ = true, open_loop_ = false;
  Histogram latency_, uncorrected_;
  nlohmann::json counts_ = nlohmann::json::object();
  nlohmann::json records_ = nlohmann::json::object();
  std::vector<SampleRow> seconds_;
  const v1::HostFigures* most_foreign_ = nullptr;
  uint64_t status_mismatches_ = 0;  // responses whose status was not the expected one
  uint64_t mismatches_ = 0;         // responses failing the expectation (status or body)
  std::optional<WindowReason> failure_;
};

void LoadMerge::MergeHistogram(const LoadShare& share, const std::string& text, const char* what,
                               Histogram& into, bool& ok) {
  auto histogram = Histogram::Deserialize(text);
  if (histogram.ok()) return into.Merge(*histogram);
  ok = false;
  if (multi_ && !failure_) {
    WindowReason bad;
    bad.name = "run_load";
    bad.host = share.agent;
    bad.text = "run_load: load agent " + share.agent + " sent a " + what +
               " histogram that does not parse: " + histogram.status().message();
    failure_ = std::move(bad);
  }
}

void LoadMerge::AddHostFigures(const v1::HostFigures& h, WindowRow& row) {
  auto higher = [](double value, std::optional<double>& kept) {
    if (!kept || value > *kept) kept = value;
  };
  higher(h.busy_pct(), row.load_busy_pct);
  higher(h.steal_pct(), row.load_steal_pct);
  higher(h.foreign_mean_pct(), row.load_foreign_cpu_pct);
  higher(h.foreign_max_pct(), row.load_foreign_cpu_max_pct);
  if (!most_foreign_ || h.foreign_mean_pct() > most_foreign_->foreign_mean_pct()) {
    most_foreign_ = &h;
  }
}

void LoadMerge::AddSeconds(const v1::LoadResult& r) {
  // Per second: requests add up; the second's p99 is the slowest agent's, an upper bound on
  // the p99 of the agents' responses together.
  for (int i = 0; i < r.per_second_requests_size(); ++i) {
    if (seconds_.size() <= static_cast<size_t>(i)) {
      SampleRow second;
      second.source = "load";
      second.t_s = i + 1;
      seconds_.push_back(second);
    }
    SampleRow& second = seconds_[static_cast<size_t>(i)];
    second.requests += r.per_second_requests(i);
    if (i < r.per_second_p99_us_size()) {
      const auto p99 = static_cast<int64_t>(r.per_second_p99_us(i));
      if (!second.p99_us || p99 > *second.p99_us) second.p99_us = p99;
    }
  }
}

void LoadMerge::Add(const LoadShare& share, WindowRow& row) {
  any_ = true;
  const v1::LoadResult& r = share.result;
  row.requests += r.requests();
  row.duration_s = std::max(row.duration_s, r.duration_s());
  row.rps += r.rps();
  if (r.histogram().empty()) {
    latency_ok_ = false;  // an external tool keeps no histogram: its own figures follow
  } else {
    MergeHistogram(share, r.histogram(), "latency", latency_, latency_ok_);
  }
  uint64_t status_mismatches = 0;
  for (const auto& sc : r.status_counts()) {
    const std::string code = std::to_string(sc.status());
    counts_[code] = counts_.value(code, uint64_t{0}) + sc.count();
    if (sc.status() != scenario_.expect.status) status_mismatches += sc.count();
  }
  status_mismatches_ += status_mismatches;
  row.errors_connect += r.errors().connect();
  row.errors_read += r.errors().read();
  row.errors_write += r.errors().write();
  row.errors_timeout += r.errors().timeout();
  row.errors_parse += r.errors().parse();
  row.errors_body_too_large += r.errors().body_too_large();
  row.errors_mismatch += r.mismatches();
  // A wrong status is one kind of mismatch; the generator checks the body too.
  mismatches_ += std::max<uint64_t>(r.mismatches(), status_mismatches);
  double cpu = r.cpu_user_s() + r.cpu_sys_s();
  if (cpu == 0) {  // an agent that predates the field reports per thread only
    for (double thread_cpu : r.thread_cpu_s()) cpu += thread_cpu;
  }
  row.load_cpu_s += cpu;
  row.load_depth = r.depth() > 0 ? r.depth() : 1;
  row.sent = row.sent.value_or(0) + static_cast<int64_t>(r.sent());
  if (r.generator_bound()) row.generator_bound = 1;
  row.throughput_rps = row.throughput_rps.value_or(0) + r.throughput_rps();
  if (r.open_loop()) {
    open_loop_ = true;
    row.load_rate = row.load_rate.value_or(0) + r.rate();
    row.dropped = row.dropped.value_or(0) + static_cast<int64_t>(r.dropped());
    MergeHistogram(share, r.histogram_uncorrected(), "uncorrected", uncorrected_, uncorrected_ok_);
  }
  // The histograms are columns of their own; the record keeps everything else.
  nlohmann::json record = nlohmann::json::parse(r.record_json(), nullptr, false);
  if (record.is_object()) {
    record.erase("histogram");
    record.erase("histogram_uncorrected");
    if (!multi_) row.load_record = record.dump();
  }
  if (multi_) records_[share.agent] = record.is_object() ? record : nlohmann::json::object();
  if (r.has_host()) AddHostFigures(r.host(), row);
  AddSeconds(r);
}

void LoadMerge::WriteTo(const LoadShare& first, WindowRow& row, std::vector<SampleRow>& samples) {
  // With one agent its serialised histograms are kept as they came.
  row.histogram = multi_ ? latency_.Serialize() : first.result.histogram();
  if (latency_ok_) {
    row.p50_us = latency_.ValueAtPercentile(50);
    row.p90_us = latency_.ValueAtPercentile(90);
    row.p99_us = latency_.ValueAtPercentile(99);
    row.p999_us = latency_.ValueAtPercentile(99.9);
    row.max_us = latency_.Max();
    row.mean_us = latency_.Mean();
  }
  const v1::LoadResult& r = first.result;
  if (!r.tool().empty() && r.tool() != "benchlab" && !multi_) {
    // wrk / h2load: the percentiles they print; what they do not print stays 0 and is listed
    // in the record's "unavailable" (the report shows it as unavailable, never as 0).
    const v1::ExternalLatency& l = r.external_latency();
    row.p50_us = l.has_p50_us() ? l.p50_us() : 0;
    row.p90_us = l.has_p90_us() ? l.p90_us() : 0;
    row.p99_us = l.has_p99_us() ? l.p99_us() : 0;
    row.p999_us = 0;
    row.max_us = l.has_max_us() ? static_cast<uint64_t>(l.max_us()) : 0;
    row.mean_us = l.has_mean_us() ? l.mean_us() : 0;
  }
  if (open_loop_) {
    row.histogram_uncorrected = multi_ ? uncorrected_.Serialize() : r.histogram_uncorrected();
    if (uncorrected_ok_) {
      row.p99_uncorrected_us = static_cast<int64_t>(uncorrected_.ValueAtPercentile(99));
    }
  }
  row.status_counts = counts_.dump();
  row.errors_status = status_mismatches_;
  if (multi_) row.load_record = nlohmann::json{{"agents", records_}}.dump();
  if (most_foreign_ != nullptr) row.load_top_foreign = TopForeignJson(*most_foreign_);
  // A second cut short by the end of the interval ends there: a 250 ms window's one sample is
  // at 0.25 s, so its requests per second come out right.
  if (!seconds_.empty() && row.duration_s > 0 && seconds_.back().t_s > row.duration_s) {
    seconds_.back().t_s = std::max(
        row.duration_s, seconds_.size() > 1 ? static_cast<double>(seconds_.size()) - 1.0 : 0.0);
  }
  for (SampleRow& second : seconds_) samples.push_back(std::move(second));
}

}  // namespace

std::optional<WindowReason> WindowProtocol::MergeLoadResults(const ScenarioDef& scenario) {
  auto& row = out_.row;
  LoadMerge merge(scenario, multi());
  for (const LoadShare& share : shares_) {
    if (!share.have_result) continue;
    merge.Add(share, row);
    out_.spooled.push_back({share.agent, share.spool_key + ".load", window_});
  }
  if (!merge.any()) return std::move(merge.failure());
  merge.WriteTo(shares_.front(), row, out_.samples);
  status_mismatches_ = merge.status_mismatches();
  mismatches_ = merge.mismatches();
  transport_errors_ = row.errors_connect + row.errors_read + row.errors_write + row.errors_timeout +
                      row.errors_parse + row.errors_body_too_large;
  row.errors = transport_errors_ + mismatches_;
  return std::move(merge.failure());
}

}  // namespace benchlab::window_detail
