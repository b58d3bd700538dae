// The window protocol's internals, shared by window_runner.cc (the steps around the load) and
// window_load.cc (running and merging the load of one or several load agents). Not part of the
// coordinator's interface: window_runner.h is.
#pragma once

#include <grpcpp/client_context.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "benchlab/v1/agent.grpc.pb.h"
#include "coordinator/gates.h"
#include "coordinator/outcome.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/server/window_runner.h"

namespace benchlab::window_detail {

using Ms = std::chrono::duration<double, std::milli>;

// Sets `ctx`'s deadline `budget` from the clock's wall time.
void SetDeadline(grpc::ClientContext& ctx, Clock& clock, std::chrono::milliseconds budget);
std::string Describe(const grpc::Status& status);
// A step's failure, named: "<step>: agent <name>: <what gRPC said>", as a reason. An agent that
// cannot be reached (rpc::TransportLost) or that cancelled the call because it is stopping is
// lost to the window (kind kAgentLost, text "agent_lost: <step>: ..."): the window is measured
// again once the agent is back, where any other failure, UNAVAILABLE from the agent's handler
// included, is the window's own (kStep).
WindowReason StepFailure(const std::string& step, const std::string& agent,
                         const grpc::Status& status);
// The top foreign users of a host as JSON [{"comm": ..., "cpu_pct": ...}].
std::string TopForeignJson(const v1::HostFigures& h);
// A host's figures as the gates read them; a reading the machine does not offer stays unset.
void FillHostMeasures(const v1::HostFigures& h, HostMeasures& out);
// Keeps in `worst` the worse of each reading: the highest foreign CPU, steal, busy share,
// throttle and swap counts, the lowest frequency ratio, on battery if any, and the self-test
// drift (with its spread) farthest beyond its own threshold under `drift_gate`. With several
// load agents the gates judge the load side by this.
void KeepWorst(const HostMeasures& h, const SelftestDriftGate& drift_gate, HostMeasures& worst);
// Why a window has no profile is kept to this many bytes.
inline constexpr size_t kMaxProfileErrorBytes = 1024;
// The window's profile from the END mark's reply (docs/profiles.md): the folded stacks when they
// decompress and parse under common/folded_profile.h's limits, else why there are none.
ProfileRow ProfileOf(const v1::MarkReply& figures, int frequency_hz);
// The request that stops a target process started under the window token `window`.
v1::StopTargetRequest StopRequest(const std::string& handle, const std::string& window);

// One load agent's part of a window: its share of the level, and what it sent back. With one
// load agent the share is the whole level and everything is as it always was.
struct LoadShare {
  std::string agent;
  std::shared_ptr<v1::Agent::StubInterface> stub;
  int connections = 0;
  double rate = 0;
  int max_conns = 0;
  uint64_t seed = 0;      // of the Poisson schedule; 0: the generator's default
  std::string spool_key;  // sent with RunLoad; the agent spools its result under it + ".load"
  std::chrono::steady_clock::time_point called;  // when its RunLoad began
  std::optional<double> selftest_ms;
  HostMeasures host;  // CheckHost's readings, then the measured interval's
  bool have_result = false;
  v1::LoadResult result;
  grpc::Status status;  // of the RunLoad stream
};

// What the load streams and the server's marks left behind (WindowProtocol::StreamLoads).
struct LoadStreams {
  v1::MarkReply figures;        // the server's figures for the interval (the END mark's reply)
  bool server_spooled = false;  // an END mark succeeded: the server spooled its figures
  std::optional<WindowReason> mark_failure;  // the first failed mark
  double align_ms = 0;                       // the slowest Mark round trip
  double spread_ms = 0;                      // how far the agents' starts (or ends) were apart
};

// The protocol's steps, with the window's row filled as they go. Each step that fails adds its
// reason and returns false; the verdict follows from the reasons (DecideVerdict) in Finish.
class WindowProtocol {
 public:
  WindowProtocol(AgentRegistry& agents, const AgentRegistry::Placement& placement,
                 const Campaign& campaign, int64_t campaign_id, const PlannedWindow& planned,
                 std::string spool_key, std::string window, Calibration& calibration,
                 TargetSession& session, WindowOutcome& out);

  void Run();

 private:
  bool Failed(WindowReason reason) {
    reasons_.push_back(std::move(reason));
    return false;
  }
  // StepFailure, and a step that timed out against an agent whose lease expired at any time
  // since the call began at `called` is that agent lost too (a machine gone silent, not a slow
  // step), even when a healed link renewed the lease before the deadline.
  WindowReason Failure(const std::string& step, const std::string& agent,
                       const grpc::Status& status, std::chrono::steady_clock::time_point called);
  bool CheckHosts();
  grpc::Status CheckOnce(v1::Agent::StubInterface& stub, const v1::CheckHostRequest& req,
                         v1::CheckHostReply& reply);
  // Runs the agent's kCalibrationRuns self-tests into calibration_ and out_.calibrations.
  void CalibrateAgent(v1::Agent::StubInterface& stub, const std::string& agent,
                      const v1::CheckHostRequest& req);
  bool CheckHost(v1::Agent::StubInterface& stub, const std::string& agent,
                 const std::vector<int>& cpus, std::optional<double>& selftest_ms,
                 HostMeasures& host);
  bool StartTargetProcess();
  // Fills measures_.conformance_diffs; false when the target failed the contract and the
  // conformance gate is on (the window is skipped), or the call failed.
  bool CheckConformance();
  v1::RunLoadRequest LoadRequest(const ScenarioDef& scenario, const LoadShare& share) const;
  // Runs the load on every share and marks the server's interval; then merges the results into
  // the row. False (with the reasons) when a stream, a mark or the merge failed.
  bool MeasureLoad();
  LoadStreams StreamLoads(const ScenarioDef& scenario);
  // The server's figures for the measured interval into the row and its samples.
  void CopyServerFigures(const v1::MarkReply& figures, double align_error_ms);
  // Fills the row's load columns and the load samples from every share that sent a result;
  // a reason when the results could not be merged.
  std::optional<WindowReason> MergeLoadResults(const ScenarioDef& scenario);
  // Stops the window's process; a target that exited before the stop fills the measures'
  // target fields, for the target_exited gate.
  void StopTargetProcess();
  // Applies the gates: all of them to a measured window, only conformance and target_exited
  // to one whose load was not measured.
  void Judge(bool measured);
  void Finish();
  bool multi() const { return shares_.size() > 1; }
  bool StepFailedSoFar() const;

  AgentRegistry& agents_;
  TargetSession& session_;
  const AgentRegistry::Placement& placement_;
  const Campaign& campaign_;
  const std::string campaign_key_;  // AgentCampaignKey: StartTarget's campaign
  const PlannedWindow& planned_;
  const std::string spool_key_;
  const std::string window_;  // this window's token: StartTarget, RunLoad and their spools
  Calibration& calibration_;
  WindowOutcome& out_;
  Clock& clock_;
  std::shared_ptr<v1::Agent::StubInterface> server_;
  std::vector<LoadShare> shares_;  // the load agents this window uses; the first checks conformance
  std::vector<WindowReason> reasons_;
  std::string handle_;
  std::string target_window_;  // the token handle_ was started with: StopTarget and Mark send it
  int port_ = 0;
  // A target that serves HTTPS ([[target]] tls): its run directory's CA, from StartTarget, which
  // conformance and load verify the target against; empty for a plain target.
  std::string target_ca_pem_;
  bool target_died_ = false;
  uint64_t status_mismatches_ = 0;  // responses whose status was not the expected one
  uint64_t mismatches_ = 0;         // responses failing the expectation (status or body)
  uint64_t transport_errors_ = 0;
  WindowMeasures measures_;  // what the gates judge, filled step by step
  v1::HostFigures server_host_;
};

}  // namespace benchlab::window_detail
