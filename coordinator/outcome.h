// A window's outcome as values: its verdict and the reasons behind it, each with its kind, the
// gate or step it comes from, the host and the numbers (docs/store.md, "windows"). The window
// protocol builds them, the verdict follows from them (DecideVerdict), and the scheduler reads
// them back from the store to decide what to measure again. Text is made only for people: the
// `reasons` column keeps each reason's text, the `outcome` column the rest as JSON. Value types
// and free functions: safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coordinator/gates.h"

namespace benchlab {

enum class Verdict { kValid, kInvalid, kFailed, kSkipped };

// "valid", "invalid", "failed", "skipped": the store's spelling.
const char* VerdictName(Verdict verdict);
std::optional<Verdict> ParseVerdict(std::string_view text);

enum class ReasonKind {
  kGate,                // a gate failed (JudgeWindow)
  kStep,                // a step of the protocol failed: the window's own failure
  kAgentLost,           // an agent went away or could not be reached: measured again
  kCoordinatorRestart,  // the coordinator stopped while the window ran: measured again
};

const char* ReasonKindName(ReasonKind kind);  // "gate", "step", "agent_lost", "coordinator_restart"

struct WindowReason {
  ReasonKind kind = ReasonKind::kStep;
  // The gate ("foreign_cpu", "conformance", "target_exited") or the step ("check_host",
  // "build" (a commit the agent could not build), "start_target", "conformance", "run_load",
  // "mark_begin", "mark_end", "stop_target", "placement", "no_responses").
  std::string name;
  std::string code;             // a failed call's gRPC code ("DEADLINE_EXCEEDED"); "" for gates
  std::string host;             // the agent named by a step; "server" or "load" for a host's gate
  std::optional<double> value;  // a gate's measured value, in the units of its text
  std::optional<double> threshold;  // and its threshold
  std::string text;                 // as people read it: "foreign_cpu: server host 212% > 25%"

  bool operator==(const WindowReason&) const = default;
};

WindowReason FromGate(const GateReason& gate);

// The verdict the reasons make, under the campaign's gate mode: failed when a step failed, an
// agent was lost or the coordinator restarted; else the gravest verdict a gate's reason makes
// under the mode, as the gate's entry says (GateVerdict, coordinator/gate_table.h): failed
// outranks skipped, skipped outranks invalid; with no reason, valid.
Verdict DecideVerdict(const std::vector<WindowReason>& reasons, GateMode mode);

// Whether the window is to be measured again on its own: an agent was lost or the coordinator
// restarted while it ran.
bool MeasuredAgain(const std::vector<WindowReason>& reasons);

// The `reasons` column: a JSON array of the reasons' texts.
std::string ReasonTextsJson(const std::vector<WindowReason>& reasons);
// The `outcome` column: a JSON array with one object per reason, in the same order as the texts:
// {"kind": "gate", "name": "foreign_cpu", "host": "server", "value": 212, "threshold": 25};
// empty fields are left out.
std::string OutcomeJson(const std::vector<WindowReason>& reasons);
// The reasons back from the two columns; texts beyond the outcome's entries (or every text of a
// row whose outcome is "[]") come back as step reasons with no name. Malformed JSON yields what
// could be read.
std::vector<WindowReason> ParseOutcome(const std::string& outcome_json,
                                       const std::string& reasons_json);

}  // namespace benchlab
