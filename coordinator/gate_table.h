// The gates as one table (docs/gates.md; docs/architecture.md, "Common changes"). Each entry
// holds one gate: its name, the [gates] keys that set it (with their types, defaults and ranges,
// bound to GateConfig's fields), the reading it judges and what a failing reason makes its
// window in each mode. JudgeWindow, ReadGatesTable, DecideVerdict and the test of docs/gates.md
// all read the table, so a gate's name and keys are written once, in its entry
// (coordinator/gate_table.cc). Constant data and pure functions: safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "coordinator/gates.h"
#include "coordinator/outcome.h"

namespace benchlab {

// Where GateConfig keeps one key's value, as a pair of accessors (GateField in gate_table.cc).
template <typename T>
struct GateFieldRef {
  T& (*get)(GateConfig&);
  const T& (*read)(const GateConfig&);
};

// One key of the [gates] table. Its form follows from the type of the field it sets:
//   bool                           true or false (`inverted`: true turns the gate off)
//   double                         an integer or a float from min to max
//   uint64_t, std::optional<int>   a whole number from min to max
//   GateMode                       "enforce" or "warn"
//   std::map<std::string, double>  probe.NAME.max = N, a bound per probe name
// Its default is what a default GateConfig holds there.
struct GateKey {
  std::string_view name;
  std::variant<GateFieldRef<bool>, GateFieldRef<double>, GateFieldRef<uint64_t>,
               GateFieldRef<std::optional<int>>, GateFieldRef<GateMode>,
               GateFieldRef<std::map<std::string, double>>>
      field;
  bool inverted = false;
  // Numbers: the range accepted, both ends included, and how an error names it:
  // "a <noun> from <min> to <max>[ such as <example>]".
  double min = 0;
  double max = 0;
  std::string_view noun = "number";
  std::optional<double> example = std::nullopt;
};

// Where a gate's judging function puts its reasons. Each reason is named after the gate and its
// text starts with the name and ": ", then "<host> host " for a host's reading.
class GateReasons {
 public:
  // `host`: "server" or "load" while a host's reading is judged; "" for the window's.
  GateReasons(std::string_view gate, std::string_view host, std::vector<GateReason>& out)
      : gate_(gate), host_(host), out_(out) {}

  void Add(const std::string& detail, double value, double threshold) {
    AddOnHost(host_, detail, value, threshold);
  }
  // A reading of `host` judged with the window's (generator_bound's load host).
  void AddOnHost(std::string_view host, const std::string& detail, double value, double threshold);
  // A reason of a family of gates that share one entry ("probe.checkpoints").
  void AddAs(const std::string& gate, const std::string& detail, double value, double threshold);

 private:
  std::string_view gate_;
  std::string_view host_;
  std::vector<GateReason>& out_;
};

struct GateSpec {
  // The gate's name, which its reasons carry. A family's reasons add ".NAME" ("probe.checkpoints").
  std::string_view name;
  // Its keys; the first, when it is a bool, is the switch that turns the gate on and off.
  std::vector<GateKey> keys;
  // What a failing reason makes the window under `mode = "enforce"` and under `mode = "warn"`.
  Verdict enforce = Verdict::kInvalid;
  Verdict warn = Verdict::kValid;
  // The reading judged: a host's (called for the server host, then the load host), or the
  // window's. A value equal to its threshold passes; an unavailable reading never fails.
  void (*judge_host)(const HostMeasures& h, const GateConfig& c, GateReasons& out) = nullptr;
  void (*judge_window)(const WindowMeasures& m, const GateConfig& c, GateReasons& out) = nullptr;
};

// Every gate, in the order their reasons come.
const std::vector<GateSpec>& GateTable();

// The gate that produced a reason named `reason_gate` ("steal", "probe.checkpoints"); nullptr when
// no entry has that name (a reason stored by a build with other gates).
const GateSpec* FindGate(std::string_view reason_gate);

// Whether `gate` applies under `config`: its switch is on, or it has none.
bool GateApplies(const GateSpec& gate, const GateConfig& config);

// What a reason of `reason_gate` makes its window under `mode`; a gate no entry names is judged
// as an ordinary one (invalid in enforce mode, valid in warn mode).
Verdict GateVerdict(std::string_view reason_gate, GateMode mode);

// The keys of [gates] in the order errors and docs/gates.md list them: mode, every gate's keys
// in the table's order, remeasure_max.
std::vector<const GateKey*> GatesTableKeys();

}  // namespace benchlab
