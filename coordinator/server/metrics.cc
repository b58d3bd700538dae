#include "coordinator/server/metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <utility>

#include "coordinator/server/agent_registry.h"
#include "coordinator/store.h"
#include "rpc/process_metrics.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

// Seconds: a window is its warmup and duration plus starting and checking, seconds to minutes.
const prometheus::Histogram::BucketBoundaries kWindowBuckets = {1,  2,   5,   10,  20,  30,
                                                                60, 120, 300, 600, 1800};

constexpr const char* kVerdicts[] = {"valid", "invalid", "failed", "skipped"};
constexpr const char* kAgentStates[] = {"ready", "busy", "suspect", "lost"};
constexpr CampaignState kCampaignStates[] = {CampaignState::kQueued, CampaignState::kRunning,
                                             CampaignState::kDone, CampaignState::kFailed,
                                             CampaignState::kCancelled};

// A gauge family with one metric per value of `label`, in the order of `counts`.
prometheus::MetricFamily GaugeFamily(const std::string& name, const std::string& help,
                                     const std::string& label,
                                     const std::vector<std::pair<std::string, double>>& values) {
  prometheus::MetricFamily family{name, help, prometheus::MetricType::Gauge, {}};
  for (const auto& [value_label, value] : values) {
    prometheus::ClientMetric metric;
    metric.label = {{label, value_label}};
    metric.gauge.value = value;
    family.metric.push_back(std::move(metric));
  }
  return family;
}

// The size of a file in bytes; 0 when it is not there (no -wal file between checkpoints).
double FileBytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<double>(st.st_size) : 0.0;
}

// The gauges read when scraped: the store's campaigns and files, the registry's agents.
class StateCollector final : public prometheus::Collectable {
 public:
  StateCollector(Store& store, AgentRegistry& agents, const std::string& db_path)
      : store_(store), agents_(agents), db_path_(db_path) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> families;
    families.push_back(GaugeFamily("benchlab_build_info",
                                   "benchlab's version; the value is always 1", "version",
                                   {{BENCHLAB_VERSION, 1}}));
    families.back().metric[0].label.push_back({"daemon", "coordinator"});
    if (auto campaigns = Campaigns(); !campaigns.metric.empty()) {
      families.push_back(std::move(campaigns));
    }
    families.push_back(Agents());
    families.push_back(
        GaugeFamily("benchlab_store_bytes", "Size of the store's database files, in bytes", "file",
                    {{"db", FileBytes(db_path_)}, {"wal", FileBytes(db_path_ + "-wal")}}));
    return families;
  }

 private:
  // Empty when the store cannot be read (logged): a scrape still shows the rest.
  prometheus::MetricFamily Campaigns() const {
    std::map<std::string, double> by_state;
    for (CampaignState state : kCampaignStates) by_state[CampaignStateName(state)] = 0;
    auto rows = store_.ListCampaigns();
    if (!rows.ok()) {
      spdlog::warn("metrics: listing campaigns: {}", rows.status().message());
      return {};
    }
    for (const CampaignRow& row : *rows) by_state[row.state] += 1;
    return GaugeFamily("benchlab_campaigns", "Campaigns in the store, by state", "state",
                       {by_state.begin(), by_state.end()});
  }

  prometheus::MetricFamily Agents() const {
    std::map<std::string, double> by_state;
    for (const char* state : kAgentStates) by_state[state] = 0;
    for (const auto& agent : agents_.List()) by_state[agent.state()] += 1;
    return GaugeFamily("benchlab_agents", "Registered agents, by lease state", "state",
                       {by_state.begin(), by_state.end()});
  }

  Store& store_;
  AgentRegistry& agents_;
  const std::string& db_path_;
};

}  // namespace

CoordinatorMetrics::CoordinatorMetrics(std::string db_path)
    : db_path_(std::move(db_path)),
      registry_(std::make_shared<prometheus::Registry>()),
      windows_(prometheus::BuildCounter()
                   .Name("benchlab_windows_total")
                   .Help("Windows stored since the coordinator started, by verdict")
                   .Register(*registry_)),
      reasons_(prometheus::BuildCounter()
                   .Name("benchlab_window_reasons_total")
                   .Help("Reasons of the windows stored since the coordinator started, by kind "
                         "and gate or step")
                   .Register(*registry_)),
      durations_(prometheus::BuildHistogram()
                     .Name("benchlab_window_duration_seconds")
                     .Help("Time from a window's claim to its result stored, in seconds")
                     .Register(*registry_)),
      rpc_(*registry_) {
  // Every verdict is there from the start, so a rate over the first window is not lost.
  for (const char* verdict : kVerdicts) {
    windows_.Add({{"verdict", verdict}});
    durations_.Add({{"verdict", verdict}}, kWindowBuckets);
  }
}

CoordinatorMetrics::~CoordinatorMetrics() = default;

void CoordinatorMetrics::RecordWindow(const std::string& verdict,
                                      const std::vector<WindowReason>& reasons, double seconds) {
  windows_.Add({{"verdict", verdict}}).Increment();
  durations_.Add({{"verdict", verdict}}, kWindowBuckets).Observe(seconds);
  for (const WindowReason& reason : reasons) {
    reasons_.Add({{"kind", ReasonKindName(reason.kind)}, {"reason", reason.name}}).Increment();
  }
}

std::string CoordinatorMetrics::Scrape(Store& store, AgentRegistry& agents) const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  auto state = StateCollector(store, agents, db_path_).Collect();
  families.insert(families.end(), std::make_move_iterator(state.begin()),
                  std::make_move_iterator(state.end()));
  for (auto& family : ProcessFamilies(RealSysEnv(), getpid()))
    families.push_back(std::move(family));
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace benchlab
