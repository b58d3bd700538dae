// The window protocol's internals, shared by window_runner.cc (the steps around the load) and
// window_load.cc (running and merging the load of one or several load agents). Not part of the
// coordinator's interface: window_runner.h is.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/client_context.h>

#include "benchlab/v1/agent.grpc.pb.h"
#include "coordinator/gates.h"
#include "coordinator/server/window_runner.h"

namespace benchlab::window_detail {

using Ms = std::chrono::duration<double, std::milli>;

void SetDeadline(grpc::ClientContext& ctx, std::chrono::milliseconds budget);
std::string Describe(const grpc::Status& status);
// A step's failure, named: "<step>: agent <name>: <what gRPC said>". An agent that cannot be
// reached is lost to the window ("agent_lost: <step>: ..."): the window is measured again once
// the agent is back, where any other failure is the window's own.
std::string StepFailure(const std::string& step, const std::string& agent,
                        const grpc::Status& status);
// The top foreign users of a host as JSON [{"comm": ..., "cpu_pct": ...}].
std::string TopForeignJson(const v1::HostFigures& h);
// A host's figures as the gates read them; a reading the machine does not offer stays unset.
void FillHostMeasures(const v1::HostFigures& h, HostMeasures& out);
// Keeps in `worst` the worse of each reading: the highest foreign CPU, steal, busy share,
// throttle and swap counts, the lowest frequency ratio, the self-test drift farthest from 0, on
// battery if any. With several load agents the gates judge the load side by this.
void KeepWorst(const HostMeasures& h, HostMeasures& worst);

// One load agent's part of a window: its share of the level, and what it sent back. With one
// load agent the share is the whole level and everything is as it always was.
struct LoadShare {
  std::string agent;
  std::shared_ptr<v1::Agent::Stub> stub;
  int connections = 0;
  double rate = 0;
  int max_conns = 0;
  uint64_t seed = 0;      // of the Poisson schedule; 0: the generator's default
  std::string spool_key;  // sent with RunLoad; the agent spools its result under it + ".load"
  std::optional<double> selftest_ms;
  HostMeasures host;  // CheckHost's readings, then the measured interval's
  bool have_result = false;
  v1::LoadResult result;
  grpc::Status status;  // of the RunLoad stream
};

// The protocol's steps, with the window's row filled as they go.
class WindowProtocol {
 public:
  WindowProtocol(AgentRegistry& agents, const AgentRegistry::Placement& placement,
                 const Campaign& campaign, const PlannedWindow& planned, std::string spool_key,
                 std::string window, Calibration& calibration, TargetSession& session,
                 WindowOutcome& out);

  void Run();

 private:
  bool Fail(const std::string& verdict, const std::string& reason) {
    out_.row.verdict = verdict;
    reasons_.push_back(reason);
    return false;
  }
  bool CheckHosts();
  bool CheckHost(v1::Agent::Stub& stub, const std::string& agent, const std::vector<int>& cpus,
                 std::optional<double>& selftest_ms, HostMeasures& host);
  bool StartTarget();
  bool CheckConformance();
  v1::RunLoadRequest LoadRequest(const ScenarioDef& scenario, const LoadShare& share) const;
  bool MeasureLoad();
  // Fills the row's load columns and the load samples from every share that sent a result;
  // a non-empty return is why the results could not be merged.
  std::string MergeLoadResults(const ScenarioDef& scenario);
  void StopTarget();
  // Stops the process `session_` keeps (when the window cannot use it), forgetting any failure.
  void StopKeptTarget();
  void Judge();
  void Finish();
  bool multi() const { return shares_.size() > 1; }
  // StepFailure, and a step that timed out against an agent whose lease has since expired is
  // that agent lost too (a machine gone silent, not a slow step).
  std::string Failure(const std::string& step, const std::string& agent,
                      const grpc::Status& status);

  AgentRegistry& agents_;
  TargetSession& session_;
  const AgentRegistry::Placement& placement_;
  const Campaign& campaign_;
  const PlannedWindow& planned_;
  const std::string spool_key_;
  const std::string window_;  // this window's token: StartTarget, RunLoad and their spools
  Calibration& calibration_;
  WindowOutcome& out_;
  std::shared_ptr<v1::Agent::Stub> server_;
  std::vector<LoadShare> shares_;  // the load agents this window uses; the first checks conformance
  std::vector<std::string> reasons_;
  std::string handle_;
  std::string target_window_;  // the token handle_ was started with: StopTarget and Mark send it
  int port_ = 0;
  bool target_died_ = false;
  uint64_t status_mismatches_ = 0;  // responses whose status was not the expected one
  uint64_t mismatches_ = 0;         // responses failing the expectation (status or body)
  uint64_t transport_errors_ = 0;
  WindowMeasures measures_;  // what the gates judge, filled step by step
  v1::HostFigures server_host_;
};

}  // namespace benchlab::window_detail
