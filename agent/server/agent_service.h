// AgentService: the agent's side of benchlab.v1.Agent. It starts only targets from its own
// catalogue (a request names a target; it never carries a command line), samples the target's
// process tree over the measured interval, checks conformance and runs the load generator.
// What it refuses (docs/agent.md, "What the agent refuses"): requests to hosts outside
// allowed_targets (PERMISSION_DENIED), malformed request heads and calls over the [limits]
// (INVALID_ARGUMENT naming the limit), more running targets than limits.max_targets and a full
// spool (RESOURCE_EXHAUSTED), and a target or spooled result of another window
// (PERMISSION_DENIED). A call stops when its caller cancels it, its deadline passes or the
// agent shuts down. gRPC calls it from its own threads; every method is thread-safe.
//
// The two roles are apart: the server role's calls (StartTarget, StopTarget, Mark, EndCampaign:
// targets, their side services and samplers) are in agent_service_server.cc, the load role's
// (CheckConformance, RunLoad) in agent_service_load.cc, and what both use (DescribeHost,
// CheckHost, Acknowledge, the calls' cancellation, the host watch and the spool) in
// agent_service.cc.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/build_cache.h"
#include "agent/cancel.h"
#include "agent/interval_sampler.h"
#include "agent/server/allowed_targets.h"
#include "agent/server/limits.h"
#include "agent/services.h"
#include "agent/spool.h"
#include "agent/target_runner.h"
#include "agent/window_profiler.h"
#include "benchlab/v1/agent.grpc.pb.h"
#include "common/sysenv.h"
#include "common/target.h"
#include "loadgen/load.h"

namespace benchlab {

class TlsContext;  // rpc/tls.h

struct AgentIdentity {
  std::string name;
  std::vector<std::string> roles;  // "server", "load"
  std::string run_root;            // per-window run directories go below it
  std::string service_dir;         // run_as services' directories go below it (AgentConfig)
  std::vector<int> allowed_cpus;   // CPUs targets and load may use
  std::string cookie;              // tags every child (see agent/orphans.h)
  // Process trees besides the agent's own whose CPU is not foreign: the embedded lab's.
  std::vector<pid_t> own_roots;
  std::chrono::milliseconds sample_period{100};
  // The host load agents reach this agent's targets at (its advertised address's); readiness
  // is probed there. 127.0.0.1 when the agent listens on every address.
  std::string target_host = "127.0.0.1";
  AllowedTargets allowed_targets = AllowedTargets::Loopback();
  AgentLimits limits;  // per-CPU defaults are resolved against allowed_cpus by the service
  std::vector<std::string> template_dirs;  // besides each target's campaign_dir
  std::string cgroup_parent;  // where targets' cgroups are made (agent/cgroup.h); "" the default
};

// What the agent is doing and what it last measured, for /metrics (agent/server/agent_metrics.h):
// read from what the service already has, never measured for the scrape.
struct AgentReadings {
  size_t targets_running = 0;  // started and not yet stopped
  size_t loads_running = 0;    // RunLoad calls producing load now
  // The last measured interval's host figures (a Mark END's or a RunLoad's), in cores (% of one
  // core / 100), and when it ended (seconds since the Unix epoch); unset before the first.
  std::optional<double> foreign_cpu_cores, steal_cpu_cores, max_temp_c;
  std::optional<double> interval_end_unix_s;
  std::optional<double> selftest_wall_s;  // the last CheckHost's self-test, in seconds
};

class AgentService final : public v1::Agent::Service {
 public:
  // `services`: the [[service]] entries targets may name (docs/services.md).
  AgentService(SysEnv& env, AgentIdentity identity, std::vector<TargetDef> catalogue,
               std::vector<ServiceDef> services = {});
  ~AgentService() override;
  // Every call must come from a coordinator certificate (rpc/tls.h); null (plaintext, loopback):
  // every caller may call. Set before serving.
  void SetTls(TlsContext* tls) { tls_ = tls; }

  // Both roles (agent_service.cc).
  grpc::Status DescribeHost(grpc::ServerContext* ctx, const v1::DescribeHostRequest* req,
                            v1::DescribeHostReply* reply) override;
  grpc::Status CheckHost(grpc::ServerContext* ctx, const v1::CheckHostRequest* req,
                         v1::CheckHostReply* reply) override;
  grpc::Status Acknowledge(grpc::ServerContext* ctx, const v1::AcknowledgeRequest* req,
                           v1::AcknowledgeReply* reply) override;
  // The server role (agent_service_server.cc).
  grpc::Status StartTarget(grpc::ServerContext* ctx, const v1::StartTargetRequest* req,
                           v1::StartTargetReply* reply) override;
  grpc::Status StopTarget(grpc::ServerContext* ctx, const v1::StopTargetRequest* req,
                          v1::StopTargetReply* reply) override;
  grpc::Status Mark(grpc::ServerContext* ctx, const v1::MarkRequest* req,
                    v1::MarkReply* reply) override;
  grpc::Status EndCampaign(grpc::ServerContext* ctx, const v1::EndCampaignRequest* req,
                           v1::EndCampaignReply* reply) override;
  // The commits of a catalogue target's source for a bisection (docs/agent.md, "Builds"): both
  // revisions checked and resolved in the agent's own source, at most max_commits listed.
  grpc::Status ListCommits(grpc::ServerContext* ctx, const v1::ListCommitsRequest* req,
                           v1::ListCommitsReply* reply) override;
  // The load role (agent_service_load.cc).
  grpc::Status CheckConformance(grpc::ServerContext* ctx, const v1::CheckConformanceRequest* req,
                                v1::CheckConformanceReply* reply) override;
  grpc::Status RunLoad(grpc::ServerContext* ctx, const v1::RunLoadRequest* req,
                       grpc::ServerWriter<v1::RunLoadEvent>* writer) override;

  // The spool (agent/spool.h); null until SetSpool. Results are written there before replying.
  void SetSpool(std::unique_ptr<Spool> spool) { spool_ = std::move(spool); }
  Spool* spool() { return spool_.get(); }
  // Where StartTarget with a commit keeps its builds (agent/build_cache.h; docs/agent.md,
  // "Builds"). The cache is opened at the first such start, so an agent that never builds never
  // touches the directory; one that cannot be opened fails that start (FAILED_PRECONDITION,
  // saying why) and is tried again at the next. Empty dir (the default): commits are refused.
  void SetBuildCache(std::string dir, uint64_t max_bytes) {
    build_cache_dir_ = std::move(dir);
    build_cache_max_bytes_ = max_bytes;
  }

  // Stops every target still running (agent shutdown, or a coordinator that restarted and so
  // no longer runs their windows), all at once, then every side service; returns how many
  // targets there were.
  size_t StopAll();
  // Side services no window has used for `idle` stop: their campaign has ended.
  size_t StopIdleServices(std::chrono::steady_clock::duration idle) {
    return services_.StopIdle(idle);
  }
  // Agent shutdown: every call in progress is cancelled and new calls are refused (UNAVAILABLE).
  void BeginShutdown();
  // Each catalogue target's version, as its `version` command printed it.
  void SetVersions(std::map<std::string, std::string> versions);
  std::map<std::string, std::string> versions();
  const std::vector<std::string>& catalogue_names() const { return catalogue_names_; }
  const AgentIdentity& identity() const { return identity_; }
  AgentReadings readings();

  // How often a call's watcher looks whether its client cancelled: with the load generator's
  // stop latency (LoadOptions::kStopLatency) load stops within 100 ms of a cancellation.
  static constexpr std::chrono::milliseconds kCallPoll{20};

 private:
  struct Active {
    std::mutex mu;  // one call at a time per target
    RunningTarget target;
    std::unique_ptr<IntervalSampler> sampler;
    std::string window;  // the token that started it: Mark and StopTarget must give it
    std::vector<std::string> services;  // the side services it was started with
    std::unique_ptr<ServiceManager::Interval> services_interval;
    // With StartTarget's profile_hz: perf, started with the target and switched on over each
    // Mark BEGIN to END (docs/profiles.md); or why it could not be.
    std::unique_ptr<WindowProfiler> profiler;
    std::string profile_error;
  };
  // One call's cancellation: its flag is set when the client cancels, the call's deadline
  // passes (a thread looks every kCallPoll) or the agent shuts down.
  class CallWatch {
   public:
    CallWatch(AgentService& service, grpc::ServerContext* ctx);
    ~CallWatch();
    const CancelFlag& cancel() const { return cancel_; }

   private:
    AgentService& service_;
    CancelFlag cancel_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
  };

  // Both roles (agent_service.cc).
  // `also_own`: more process trees whose CPU is not foreign (the target's side services).
  std::unique_ptr<HostWatch> NewHostWatch(pid_t target, const std::vector<int>& cpus,
                                          const std::vector<pid_t>& also_own = {});
  Status SpoolPut(const std::string& key, const std::string& window, const std::string& bytes);
  // Keeps a measured interval's host figures for readings().
  void NoteHost(const HostWindow& host);

  // The server role (agent_service_server.cc).
  // The target `handle` when `window` is the token that started it: NotFound for no such
  // target, PermissionDenied for another token (saying nothing else about the target).
  Result<std::shared_ptr<Active>> Owned(const std::string& handle, const std::string& window);
  // StartTarget's commit: `rev` of def's recipe's source resolved, and built by the recipe or
  // found built in the build cache; a build that failed is returned with ok false (StartTarget
  // answers FAILED_PRECONDITION with rpc::kBuildFailedReason). FailedPrecondition for a
  // target without a recipe and a cache that cannot be opened; InvalidArgument for malformed
  // revision text, NotFound for one that names no commit.
  Result<CachedBuild> BuildCommit(const TargetDef& def, const std::string& rev);

  // The load role (agent_service_load.cc).
  // A RunLoad request checked (limits, request head, allowed target) and made load options.
  Result<LoadOptions> LoadOptionsFor(const v1::RunLoadRequest& req);
  // What makes one RunLoad's load, benchlab's generator or wrk or h2load: it runs the load,
  // calls `mark(true)` just before the measured interval and `mark(false)` just after it, and
  // fills `out` with what it measured.
  using LoadProducer = std::function<Status(const MeasureMarkFn& mark, v1::LoadResult* out)>;
  // RunLoad's one path around whatever produces the load: the load host is watched on `cpus`
  // over the measured interval, MEASURE_START and MEASURE_END are streamed at its edges, a
  // cancelled call ends CANCELLED with nothing spooled, a producer's error ends the call, and
  // the result (with the host's figures) is spooled under req.spool_key() + ".load" and the
  // window token before the RESULT event is written.
  grpc::Status WatchAndSpoolLoad(grpc::ServerContext* ctx, const v1::RunLoadRequest& req,
                                 const std::vector<int>& cpus, const CancelFlag& cancel,
                                 grpc::ServerWriter<v1::RunLoadEvent>* writer,
                                 const LoadProducer& produce);
  // A scratch directory name below the run root for one run of an external tool.
  std::string NewToolScratch(const std::string& tool);

  SysEnv& env_;
  const AgentIdentity identity_;
  const std::vector<TargetDef> catalogue_;
  std::vector<std::string> catalogue_names_;
  SpawnThread spawner_;
  ServiceManager services_;
  std::unique_ptr<Spool> spool_;
  std::string build_cache_dir_;
  uint64_t build_cache_max_bytes_ = kDefaultBuildCacheBytes;
  std::mutex build_mu_;                      // one build at a time; guards build_cache_
  std::unique_ptr<BuildCache> build_cache_;  // opened by the first BuildCommit
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Active>> active_;
  TlsContext* tls_ = nullptr;
  size_t starting_ = 0;  // StartTarget calls holding a slot of limits.max_targets
  std::map<std::string, std::string> versions_;
  std::set<CancelFlag*> calls_;  // of the calls in progress
  bool shutting_down_ = false;
  uint64_t next_scratch_ = 1;  // names external tools' scratch directories
  AgentReadings last_;         // readings() but targets_running; guarded by mu_
};

// Fills the protocol's HostFacts from the agent's reading of its machine, with the host checks
// (agent/host_check.h) of `cpus`, the CPUs targets and load may use (empty: every online CPU).
void FillHostFacts(SysEnv& env, const std::vector<int>& cpus, v1::HostFacts* out);
void HostFiguresToProto(const HostWindow& in, v1::HostFigures* out);

}  // namespace benchlab
