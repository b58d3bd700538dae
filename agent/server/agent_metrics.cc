#include "agent/server/agent_metrics.h"

#include <httplib.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <chrono>
#include <utility>
#include <vector>

#include "agent/host_sensors.h"
#include "rpc/http_server.h"
#include "rpc/process_metrics.h"
#include "rpc/tls.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

using prometheus::MetricFamily;

MetricFamily Gauge(const std::string& name, const std::string& help, double value,
                   std::vector<prometheus::ClientMetric::Label> labels = {}) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  metric.gauge.value = value;
  return MetricFamily{name, help, prometheus::MetricType::Gauge, {metric}};
}

// The gauge when its value is known; nothing otherwise (absent, not 0).
void MaybeGauge(std::vector<MetricFamily>& out, const std::string& name, const std::string& help,
                const std::optional<double>& value) {
  if (value) out.push_back(Gauge(name, help, *value));
}

std::vector<MetricFamily> Families(const std::string& agent, const AgentMetricsSnapshot& s) {
  std::vector<MetricFamily> out;
  out.push_back(Gauge("benchlab_build_info", "benchlab's version; the value is always 1", 1,
                      {{"agent", agent}, {"daemon", "agent"}, {"version", BENCHLAB_VERSION}}));
  out.push_back(Gauge("benchlab_agent_registered",
                      "1 while the agent is registered with its coordinator, else 0",
                      s.registered ? 1 : 0));
  const AgentReadings& r = s.readings;
  out.push_back(Gauge("benchlab_agent_targets_running", "Targets started and not yet stopped",
                      static_cast<double>(r.targets_running)));
  out.push_back(Gauge("benchlab_agent_load_running", "RunLoad calls producing load now",
                      static_cast<double>(r.loads_running)));
  if (s.spool_bytes) {
    out.push_back(Gauge("benchlab_agent_spool_bytes",
                        "Bytes of results held in the spool until the coordinator acknowledges",
                        static_cast<double>(*s.spool_bytes)));
  }
  if (s.spool_limit_bytes) {
    out.push_back(Gauge("benchlab_agent_spool_limit_bytes", "The spool's cap in bytes",
                        static_cast<double>(*s.spool_limit_bytes)));
  }
  MaybeGauge(out, "benchlab_agent_last_interval_foreign_cpu_cores",
             "Foreign CPU on the host over the last measured interval, in cores",
             r.foreign_cpu_cores);
  MaybeGauge(out, "benchlab_agent_last_interval_steal_cpu_cores",
             "CPU stolen by the hypervisor over the last measured interval, in cores",
             r.steal_cpu_cores);
  MaybeGauge(out, "benchlab_agent_last_interval_max_temperature_celsius",
             "Hottest thermal zone over the last measured interval, in degrees Celsius",
             r.max_temp_c);
  MaybeGauge(out, "benchlab_agent_last_interval_end_timestamp_seconds",
             "When the last measured interval ended, in seconds since the Unix epoch",
             r.interval_end_unix_s);
  MaybeGauge(out, "benchlab_agent_selftest_seconds",
             "Wall time of the last host self-test (CheckHost), in seconds", r.selftest_wall_s);
  MaybeGauge(out, "benchlab_agent_host_temperature_celsius",
             "Hottest thermal zone now, in degrees Celsius", s.temperature_c);
  return out;
}

}  // namespace

AgentMetricsSnapshot SnapshotOf(SysEnv& env, AgentService& service, bool registered) {
  AgentMetricsSnapshot s;
  s.registered = registered;
  s.readings = service.readings();
  if (Spool* spool = service.spool()) {
    s.spool_bytes = spool->bytes_held();
    if (spool->max_bytes() > 0) s.spool_limit_bytes = spool->max_bytes();
  }
  // A glob of /sys/class/thermal and one small read per zone.
  s.temperature_c = HostSensors::Discover(env, {}).MaxTempC(env);
  return s;
}

AgentMetrics::AgentMetrics(std::string agent_name, SnapshotFn snapshot)
    : agent_name_(std::move(agent_name)),
      snapshot_(std::move(snapshot)),
      registry_(std::make_unique<prometheus::Registry>()),
      rpc_(std::make_unique<RpcMetrics>(*registry_)) {}

AgentMetrics::~AgentMetrics() { Stop(); }

std::string AgentMetrics::Scrape() const {
  std::vector<MetricFamily> families = registry_->Collect();
  for (auto& family : Families(agent_name_, snapshot_())) families.push_back(std::move(family));
  for (auto& family : ProcessFamilies(RealSysEnv(), getpid()))
    families.push_back(std::move(family));
  return prometheus::TextSerializer().Serialize(families);
}

Result<HostPort> AgentMetrics::Start(const HostPort& listen) {
  if (server_) return Status::FailedPrecondition("agent metrics are already served");
  if (!IsLoopbackHost(listen.host)) {
    return Status::FailedPrecondition("metrics_listen: " + listen.ToString() +
                                      " is not a loopback address: /metrics is plain HTTP, "
                                      "served on loopback only (docs/metrics.md)");
  }
  // The dashboard's HTTP front and limits (rpc/http_server.h): a process of the host that holds
  // connections open or trickles requests cannot keep Prometheus from scraping.
  server_ = std::make_unique<HttpServer>();
  server_->routes().Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(Scrape(), "text/plain; version=0.0.4; charset=utf-8");
  });
  auto port = server_->Bind(listen);
  if (!port.ok()) {
    server_.reset();
    return Status::Unavailable("metrics_listen: " + port.status().message() + " (address in use?)");
  }
  server_->Serve();
  HostPort bound{listen.host, *port};
  spdlog::info("agent {}: metrics on http://{}/metrics", agent_name_, bound.ToString());
  return bound;
}

void AgentMetrics::Stop() {
  if (!server_) return;
  server_->Stop();
  server_.reset();
}

}  // namespace benchlab
