// Gates: validity rules applied to a measured window (docs/gates.md; docs/architecture.md). Each
// failing gate yields one reason that names the gate, the host, the measured value and the
// threshold ("foreign_cpu: server host 212% > 25%"), so a person can see why a window was judged
// invalid. Judging is a pure function of the window's measures and the campaign's GateConfig;
// reading the [gates] table of a campaign file (coordinator/gates_toml.h) is the only part that
// touches TOML. Each gate's name, keys, judging and verdict are one entry of the gate table
// (coordinator/gate_table.h); this header holds what the gates read. Value types and free
// functions: safe to call from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace benchlab {

// --- Configurable gates. ---

// kEnforce: any reason invalidates the window. kWarn: the same reasons are produced and recorded
// with the window, but only the gates whose entry says so decide its verdict (a window whose
// target died or answered wrongly has no measurement to keep: failed or skipped whatever the
// mode; GateSpec, coordinator/gate_table.h; DecideVerdict, coordinator/outcome.h). Warn mode is
// for machines that cannot be quiet (a shared CI runner): the numbers are kept, and every reason
// says how far to trust them.
enum class GateMode { kEnforce, kWarn };

// A gate with nothing to set but whether it applies.
struct GateSwitch {
  bool enabled = true;
};
// Busy CPU on either host not used by the target's tree, the load generator or the agent: mean
// over the measured interval, % of one core. 25: one busy process (100%) beside the target must
// invalidate the window; an idle desktop's daemons stay well under it.
struct ForeignCpuGate {
  bool enabled = true;
  double max_pct = 25;
};
// Steal time on either host, % of the host's whole CPU time (0-100). 5: on a dedicated or quiet
// virtual machine steal stays near 0; more means a neighbour shares the physical cores.
struct StealGate {
  bool enabled = true;
  double max_pct = 5;
};
// Lowest scaling_cur_freq / cpuinfo_max_freq of the pinned CPUs on either host. 0.75:
// cpuinfo_max_freq is often the single-core turbo ceiling and all-core turbo runs at 80-90% of
// it on many parts, so 0.85 would fail healthy windows; throttling to base clock or below falls
// to 50-70%.
struct FrequencyGate {
  bool enabled = true;
  double min_ratio = 0.75;
};
// The load generator set the pace: its generator_bound flag (a worker thread at 95% CPU or more,
// or open-loop send lag), or the load host busier than load_busy_max_pct of its CPU time. 100
// never fails (the busy share cannot exceed 100%): in the embedded lab the load host also runs
// the target; set 90 or so when the load host is dedicated to the generator.
struct GeneratorBoundGate {
  bool enabled = true;
  double load_busy_max_pct = 100;
};
// (transport errors + mismatches) / (responses + transport errors), a fraction (0.01 = 1%).
struct ErrorRateGate {
  bool enabled = true;
  double max = 0.01;
};
// self-test time / calibration time - 1 on either host, in %, when slower (a faster self-test
// says the calibration was slowed, not the window). 10: on a quiet machine the
// pinned SHA-256 self-test repeats within a few %; cron or throttling moves it by far more
// (85 ms by hand, 230 ms under cron: +170%). A host whose own self-tests spread more is judged
// against spread_multiple x its calibrated spread instead, where that is larger, up to
// kSelftestDriftCalibratedMaxPct (SelftestDriftThreshold).
struct SelftestDriftGate {
  bool enabled = true;
  double max_pct = 10;
  double spread_multiple = 4;  // 0: the configured max_pct alone
};

// The most a host's calibrated spread can raise the selftest_drift threshold to, in %: well
// below +100%, so a self-test that runs twice as slow (a competing process on the pinned CPU,
// a background-scheduled agent) is refused however noisy the host's calibration was.
inline constexpr double kSelftestDriftCalibratedMaxPct = 50;

// The threshold one host's self-test drift is judged against (docs/gates.md, "selftest_drift").
struct DriftThreshold {
  double max_pct = 0;       // |drift| above this fails, in %
  bool calibrated = false;  // from spread_multiple x spread, larger than the configured max_pct
  bool capped = false;      // calibrated, and held at kSelftestDriftCalibratedMaxPct
};

// max(gate.max_pct, min(gate.spread_multiple x spread x 100, kSelftestDriftCalibratedMaxPct)).
// `spread` is the host's calibrated spread as a fraction (0.062: 6.2%); nullopt (no calibration)
// leaves the configured max_pct.
DriftThreshold SelftestDriftThreshold(const SelftestDriftGate& gate, std::optional<double> spread);

// Pages swapped in plus out on either host during the measured interval. 0: any swapping
// during a measurement stalls whoever faults, and a quiet machine does not swap.
struct SwapGate {
  bool enabled = true;
  uint64_t max_pages = 0;
};

// Every gate of a campaign, with its default. Each gate can be turned off on its own
// (`enabled = false`); the [gates] keys that set each field are bound to it by the gate's entry
// in coordinator/gate_table.cc, and listed in docs/gates.md.
struct GateConfig {
  GateMode mode = GateMode::kEnforce;
  GateSwitch conformance;            // the target failed the contract
  GateSwitch target_exited;          // the target died during the window
  GateSwitch background_scheduling;  // an agent or the target ran as background work
  GateSwitch on_battery;             // key: allow_battery = true turns it off
  SelftestDriftGate selftest_drift;
  ForeignCpuGate foreign_cpu;
  StealGate steal;
  GateSwitch throttling;  // any thermal throttle counter increase fails
  FrequencyGate frequency;
  SwapGate swap;
  GeneratorBoundGate generator_bound;
  ErrorRateGate error_rate;
  GateSwitch service_exited;  // a side service of the target died during the window
  // [gates] probe.NAME.max: the most a probe (docs/services.md) may rise over the measured
  // interval, by probe name; none by default.
  std::map<std::string, double> probe_max;
  // [gates] remeasure_max: how many windows a campaign measures again at once, on each pair,
  // because a gate refused them (docs/gates.md, "A refusal costs a window, not a round"); 0 never.
  // nullopt: RemeasureBudget's default, a quarter of the plan.
  std::optional<int> remeasure_max;
};

// A window a gate refused is measured again at once, up to this many times in a row: a refusal
// that repeats is a lasting disturbance, which more attempts would not get past.
inline constexpr int kRemeasuresPerWindow = 2;

// The windows a campaign of `planned_windows` may measure again at once on one pair: the
// configured remeasure_max, else a quarter of the plan (rounded up, at least 2), so that a gate
// refusing everything costs at most a quarter more time.
int RemeasureBudget(const GateConfig& config, int planned_windows);

// What one host's agent saw. nullopt means the machine does not offer the reading (no cpufreq,
// no thermal counters on most virtual machines, no self-test yet): it never fails a gate and is
// never read as 0. The store keeps it as NULL ("unavailable").
struct HostMeasures {
  std::optional<double> foreign_mean_pct;   // % of one core (HostFigures::foreign_mean_pct)
  std::optional<double> steal_pct;          // % of the host's CPU time: steal_pct / cpus
  std::optional<double> busy_pct;           // busy_pct / cpus; judged on the load host only
  std::optional<uint64_t> throttle_events;  // core + package counter increases
  std::optional<double> min_freq_ratio;     // lowest cur/max of the pinned CPUs
  std::optional<double> selftest_drift;     // fraction: (this - calibration) / calibration
  std::optional<double> selftest_spread;    // fraction: the agent's calibrated self-test spread
  // The self-test's thread was off its CPU in every one of its passes: something competes for
  // the pinned CPU (agent/selftest.h). Said in the selftest_drift reason; judged by the drift.
  bool selftest_descheduled = false;
  std::optional<bool> on_battery;
  std::optional<uint64_t> swap_in_pages;
  std::optional<uint64_t> swap_out_pages;
};

struct WindowMeasures {
  HostMeasures server;            // the host running the target
  HostMeasures load;              // the host running the load generator (the same machine in `run`)
  bool generator_bound = false;   // LoadResult::generator_bound
  uint64_t requests = 0;          // responses received in the measured interval
  uint64_t transport_errors = 0;  // connect, read, write, timeout, parse, body too large
  uint64_t mismatches = 0;        // responses failing the expectation (status; body if checked)
  // As the agents reported them ("background_scheduling: pid 12 (nginx) ... (agent s1)").
  std::vector<std::string> scheduling_failures;
  bool target_exited = false;
  std::string target_exit_text;                    // "exit status 1", "killed by signal 9 ..."
  std::vector<std::string> target_last_log_lines;  // may be empty
  std::vector<std::string> conformance_diffs;      // empty: the target conforms
  // Side services (docs/services.md): "pg: exit status 1 ...", one per service that died during
  // the window; and each probe's rise over the interval, or why it has none.
  std::vector<std::string> service_exits;
  struct Probe {
    std::string service;
    std::string name;
    std::optional<double> delta;
    std::string unavailable;  // why there is no delta
  };
  std::vector<Probe> probes;
  bool has_services = false;  // the target ran with side services
};

// One failing gate. `gate` is the gate's name (`text` starts with it and ": "); value and threshold
// are the numbers the text shows, in its units: % for foreign_cpu, steal, selftest_drift,
// error_rate and the load host's
// busy share; a ratio for frequency; counts for throttling and swap; value 1 and threshold 0
// for the yes/no gates (conformance, target_exited, background_scheduling, on_battery,
// generator_bound's flag).
struct GateReason {
  std::string gate;
  std::string text;
  double value = 0;
  double threshold = 0;
  std::string host;  // "server" or "load" for a host's reading; "" for the window's own
};

// The reasons `m` fails `config`'s enabled gates; empty when all pass. A value equal to its
// threshold passes. Order: the gates' (GateTable, coordinator/gate_table.h), each gate's reasons
// on the server host before the load host; each gate's entry gives the text of its reasons
// ("foreign_cpu: server host 212% > 25%").
// Percentages are written with at most one decimal and ratios with at most two, trailing zeros
// dropped (212%, 7.1%, 0.7); where that would print a failing value the same as its threshold,
// more decimals are shown ("25.04% > 25%"). The error rate always shows two decimals or more.
std::vector<GateReason> JudgeWindow(const WindowMeasures& m, const GateConfig& config);

}  // namespace benchlab
