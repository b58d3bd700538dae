// AgentService: the agent's side of benchlab.v1.Agent. It starts only targets from its own
// catalogue (a request names a target; it never carries a command line), samples the target's
// process tree over the measured interval, checks conformance and runs the load generator.
// gRPC calls it from its own threads; every method is thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/interval_sampler.h"
#include "agent/spool.h"
#include "agent/target_runner.h"
#include "benchlab/v1/agent.grpc.pb.h"
#include "common/sysenv.h"
#include "common/target.h"
#include "loadgen/load.h"

namespace benchlab {

struct AgentIdentity {
  std::string name;
  std::vector<std::string> roles;  // "server", "load"
  std::string run_root;            // per-window run directories go below it
  std::vector<int> allowed_cpus;   // CPUs targets and load may use
  std::string cookie;              // tags every child (see agent/orphans.h)
  // Process trees besides the agent's own whose CPU is not foreign: the embedded lab's.
  std::vector<pid_t> own_roots;
  std::chrono::milliseconds sample_period{100};
  // The host load agents reach this agent's targets at (its advertised address's); readiness
  // is probed there. 127.0.0.1 when the agent listens on every address.
  std::string target_host = "127.0.0.1";
};

class AgentService final : public v1::Agent::Service {
 public:
  AgentService(SysEnv& env, AgentIdentity identity, std::vector<TargetDef> catalogue);
  ~AgentService() override;

  grpc::Status DescribeHost(grpc::ServerContext* ctx, const v1::DescribeHostRequest* req,
                            v1::DescribeHostReply* reply) override;
  grpc::Status StartTarget(grpc::ServerContext* ctx, const v1::StartTargetRequest* req,
                           v1::StartTargetReply* reply) override;
  grpc::Status StopTarget(grpc::ServerContext* ctx, const v1::StopTargetRequest* req,
                          v1::StopTargetReply* reply) override;
  grpc::Status CheckConformance(grpc::ServerContext* ctx, const v1::CheckConformanceRequest* req,
                                v1::CheckConformanceReply* reply) override;
  grpc::Status RunLoad(grpc::ServerContext* ctx, const v1::RunLoadRequest* req,
                       grpc::ServerWriter<v1::RunLoadEvent>* writer) override;
  // RunLoad with wrk or h2load instead of benchlab's generator (docs/load.md, "External tools").
  grpc::Status RunExternal(const v1::RunLoadRequest& req, const LoadOptions& options,
                           grpc::ServerWriter<v1::RunLoadEvent>* writer);
  grpc::Status Mark(grpc::ServerContext* ctx, const v1::MarkRequest* req,
                    v1::MarkReply* reply) override;
  grpc::Status CheckHost(grpc::ServerContext* ctx, const v1::CheckHostRequest* req,
                         v1::CheckHostReply* reply) override;
  grpc::Status Acknowledge(grpc::ServerContext* ctx, const v1::AcknowledgeRequest* req,
                           v1::AcknowledgeReply* reply) override;

  // The spool (agent/spool.h); null until SetSpool. Results are written there before replying.
  void SetSpool(std::unique_ptr<Spool> spool) { spool_ = std::move(spool); }
  Spool* spool() { return spool_.get(); }

  // Stops every target still running (agent shutdown, or a coordinator that restarted and so
  // no longer runs their windows); returns how many there were.
  size_t StopAll();
  // Each catalogue target's version, as its `version` command printed it.
  void SetVersions(std::map<std::string, std::string> versions);
  std::map<std::string, std::string> versions();
  const std::vector<std::string>& catalogue_names() const { return catalogue_names_; }
  const AgentIdentity& identity() const { return identity_; }

 private:
  struct Active {
    std::mutex mu;  // one call at a time per target
    RunningTarget target;
    std::unique_ptr<IntervalSampler> sampler;
  };
  std::shared_ptr<Active> Find(const std::string& handle);
  std::unique_ptr<HostWatch> NewHostWatch(pid_t target, const std::vector<int>& cpus);
  Status SpoolPut(const std::string& key, const std::string& bytes);

  SysEnv& env_;
  const AgentIdentity identity_;
  const std::vector<TargetDef> catalogue_;
  std::vector<std::string> catalogue_names_;
  SpawnThread spawner_;
  std::unique_ptr<Spool> spool_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Active>> active_;
  std::map<std::string, std::string> versions_;
  int next_handle_ = 1;
};

// Fills the protocol's HostFacts from the agent's reading of its machine.
void FillHostFacts(SysEnv& env, v1::HostFacts* out);
void HostFiguresToProto(const HostWindow& in, v1::HostFigures* out);

}  // namespace benchlab
