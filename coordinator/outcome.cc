#include "coordinator/outcome.h"

#include <nlohmann/json.hpp>

#include "coordinator/gate_table.h"

namespace benchlab {
namespace {

constexpr ReasonKind kKinds[] = {ReasonKind::kGate, ReasonKind::kStep, ReasonKind::kAgentLost,
                                 ReasonKind::kCoordinatorRestart};

// Which verdict outranks which when the reasons disagree: a failure outranks a skipped target,
// which outranks an invalid window, which outranks a valid one.
int Severity(Verdict verdict) {
  switch (verdict) {
    case Verdict::kValid:
      return 0;
    case Verdict::kInvalid:
      return 1;
    case Verdict::kSkipped:
      return 2;
    case Verdict::kFailed:
      return 3;
  }
  return 3;
}

}  // namespace

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kValid:
      return "valid";
    case Verdict::kInvalid:
      return "invalid";
    case Verdict::kFailed:
      return "failed";
    case Verdict::kSkipped:
      return "skipped";
  }
  return "failed";
}

std::optional<Verdict> ParseVerdict(std::string_view text) {
  for (Verdict v : {Verdict::kValid, Verdict::kInvalid, Verdict::kFailed, Verdict::kSkipped}) {
    if (text == VerdictName(v)) return v;
  }
  return std::nullopt;
}

const char* ReasonKindName(ReasonKind kind) {
  switch (kind) {
    case ReasonKind::kGate:
      return "gate";
    case ReasonKind::kStep:
      return "step";
    case ReasonKind::kAgentLost:
      return "agent_lost";
    case ReasonKind::kCoordinatorRestart:
      return "coordinator_restart";
  }
  return "step";
}

WindowReason FromGate(const GateReason& gate) {
  WindowReason r;
  r.kind = ReasonKind::kGate;
  r.name = gate.gate;
  r.host = gate.host;
  r.value = gate.value;
  r.threshold = gate.threshold;
  r.text = gate.text;
  return r;
}

Verdict DecideVerdict(const std::vector<WindowReason>& reasons, GateMode mode) {
  Verdict verdict = Verdict::kValid;
  for (const WindowReason& r : reasons) {
    const Verdict v = r.kind == ReasonKind::kGate ? GateVerdict(r.name, mode) : Verdict::kFailed;
    if (Severity(v) > Severity(verdict)) verdict = v;
  }
  return verdict;
}

bool MeasuredAgain(const std::vector<WindowReason>& reasons) {
  for (const WindowReason& r : reasons) {
    if (r.kind == ReasonKind::kAgentLost || r.kind == ReasonKind::kCoordinatorRestart) return true;
  }
  return false;
}

std::string ReasonTextsJson(const std::vector<WindowReason>& reasons) {
  nlohmann::json texts = nlohmann::json::array();
  for (const WindowReason& r : reasons) texts.push_back(r.text);
  return texts.dump();
}

std::string OutcomeJson(const std::vector<WindowReason>& reasons) {
  nlohmann::json out = nlohmann::json::array();
  for (const WindowReason& r : reasons) {
    nlohmann::json o = {{"kind", ReasonKindName(r.kind)}};
    if (!r.name.empty()) o["name"] = r.name;
    if (!r.code.empty()) o["code"] = r.code;
    if (!r.host.empty()) o["host"] = r.host;
    if (r.value) o["value"] = *r.value;
    if (r.threshold) o["threshold"] = *r.threshold;
    out.push_back(std::move(o));
  }
  return out.dump();
}

std::vector<WindowReason> ParseOutcome(const std::string& outcome_json,
                                       const std::string& reasons_json) {
  std::vector<WindowReason> reasons;
  const nlohmann::json outcome = nlohmann::json::parse(outcome_json, nullptr, false);
  const nlohmann::json texts = nlohmann::json::parse(reasons_json, nullptr, false);
  auto text_at = [&](size_t i) -> std::string {
    if (!texts.is_array() || i >= texts.size() || !texts[i].is_string()) return "";
    return texts[i].get<std::string>();
  };
  auto string_of = [](const nlohmann::json& o, const char* key) -> std::string {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : "";
  };
  auto number_of = [](const nlohmann::json& o, const char* key) -> std::optional<double> {
    auto it = o.find(key);
    if (it == o.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
  };
  if (outcome.is_array()) {
    for (const nlohmann::json& o : outcome) {
      if (!o.is_object()) continue;
      WindowReason r;
      const std::string kind = string_of(o, "kind");
      for (ReasonKind k : kKinds) {
        if (kind == ReasonKindName(k)) r.kind = k;
      }
      r.name = string_of(o, "name");
      r.code = string_of(o, "code");
      r.host = string_of(o, "host");
      r.value = number_of(o, "value");
      r.threshold = number_of(o, "threshold");
      r.text = text_at(reasons.size());
      reasons.push_back(std::move(r));
    }
  }
  for (size_t i = reasons.size(); texts.is_array() && i < texts.size(); ++i) {
    WindowReason r;
    r.text = text_at(i);
    reasons.push_back(std::move(r));
  }
  return reasons;
}

}  // namespace benchlab
