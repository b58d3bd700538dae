// ServiceManager: the side services of an agent's configuration ([[service]], common/service.h,
// docs/services.md) as they run for windows. Before a window's target starts, Prepare() makes
// sure every service it names is running for the window's campaign, target or window (its
// scope), starting a stopped or dead one pinned, in its own process group and cgroup, waiting for
// readiness and running its setup commands, and runs the resets that are due. Probes are read as
// each measured interval begins and ends; each service's CPU and RSS over the interval come from
// its own cgroup (or its /proc tree), apart from the target's. Thread-safe: one mutex, held over
// a start (a window waits for the services it needs).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/cgroup.h"
#include "agent/interval_sampler.h"
#include "agent/spawn_thread.h"
#include "agent/supervisor.h"
#include "common/clock.h"
#include "common/service.h"
#include "common/status.h"
#include "common/sysenv.h"
#include "common/target.h"

namespace benchlab {

// A number a probe printed: the whole output, blanks around it aside, must be one decimal number
// ("12", "-3.5", "1e6"); anything else is an error quoting what was printed.
Result<double> ParseProbeOutput(const std::string& text);

// Fills {service.NAME.port}, {service.NAME.host} and {service.NAME.run_dir} in the target's
// command, cwd and env values.
struct ServiceEndpoint {
  std::string name;
  uint16_t port = 0;
  std::string host = "127.0.0.1";
  std::string run_dir;
};
TargetDef WithServiceEndpoints(const TargetDef& def, const std::vector<ServiceEndpoint>& services);

// Which window asks: its campaign, target, round and token (StartTargetRequest).
struct ServiceWindow {
  std::string campaign;
  std::string target;
  int round = 0;
  std::string window;
};

struct ServiceStartInfo {
  std::string name;
  bool started = false;   // a fresh instance for this window (false: one already running served)
  double startup_ms = 0;  // spawn to ready
  double setup_ms = 0;    // all setup commands
};

struct ResetRun {
  std::string service;
  double ms = 0;
};

struct Prepared {
  std::vector<ServiceEndpoint> endpoints;
  std::vector<ServiceStartInfo> starts;
  std::vector<ResetRun> resets;
};

// One probe's readings around one interval; a missing reading has its error.
struct ProbeReading {
  std::string service;
  std::string name;
  std::optional<double> before, after;
  std::string error;  // the first reading's failure, when one failed
};

// One service over one measured interval.
struct ServiceInterval {
  std::string name;
  double cpu_user_s = 0;
  double cpu_sys_s = 0;
  uint64_t rss_mean_kb = 0;
  uint64_t rss_peak_kb = 0;
  std::string cpu_source;  // "cgroup" or "proc"
  bool alive = true;       // false: it died; exit says how
  std::string exit;
};

struct ServiceOptions {
  std::string run_root;  // services' run directories go below it
  // A run_as service's own directory ({run_dir}) goes below it: the agent's run_root is private
  // (0700), so another user could not enter it.
  std::string service_dir = "/var/tmp";
  std::vector<int> allowed_cpus;               // a service without cpus is pinned to all of them
  std::map<std::string, std::string> tag_env;  // the agent's cookie
  SpawnThread* spawner = nullptr;
  bool use_cgroup = true;
  std::string cgroup_parent;
  std::string psql = "psql";  // runs a postgres service's sql
  std::chrono::milliseconds sample_period{100};
  std::chrono::milliseconds probe_timeout{10000};
  std::chrono::milliseconds stop_grace{10000};
};

class ServiceManager {
 public:
  // `clock` tells when a service was last used (StopIdle); readiness and command timeouts wait
  // on real processes and keep real time.
  ServiceManager(SysEnv& env, std::vector<ServiceDef> services, ServiceOptions options,
                 Clock& clock = RealClockInstance());
  ~ServiceManager();
  ServiceManager(const ServiceManager&) = delete;
  ServiceManager& operator=(const ServiceManager&) = delete;

  const std::vector<ServiceDef>& defs() const { return defs_; }

  // Every service in `names` running for `window` (started as its scope says, set up, reset
  // when due). On failure nothing it started for this call keeps running and the error names
  // the service and the step (start, readiness, setup, reset).
  Result<Prepared> Prepare(const std::vector<std::string>& names, const ServiceWindow& window);
  // The window's target stopped: its window-scoped services stop too.
  void Release(const std::string& window);
  // Services of any campaign but `campaign` stop; "" stops all. Returns how many stopped.
  size_t StopOthers(const std::string& campaign);
  size_t StopAll() { return StopOthers(""); }
  // The coordinator says `campaign` ended: its services stop, except those still serving a
  // window (in an interval or being prepared), which StopIdle stops later.
  struct Ended {
    size_t stopped = 0;
    size_t in_use = 0;
  };
  Ended StopCampaign(const std::string& campaign);
  // Services no window has used for `idle` stop (a campaign that ended long ago).
  size_t StopIdle(std::chrono::steady_clock::duration idle);
  size_t running();

  // The services' root pids (their CPU is not foreign).
  std::vector<pid_t> Pids(const std::vector<std::string>& names);

  // One measured interval over the services `names`: Begin() starts a sampler per service then
  // reads the probes, End() ends the samplers then reads the probes again.
  class Interval {
   public:
    ~Interval();
    std::vector<ServiceInterval> End(std::vector<ProbeReading>* probes);

   private:
    friend class ServiceManager;
    struct One;
    ServiceManager* manager_ = nullptr;
    std::vector<std::unique_ptr<One>> ones_;
    std::vector<ProbeReading> probes_;
  };
  std::unique_ptr<Interval> Begin(const std::vector<std::string>& names);

 private:
  struct Instance;
  const ServiceDef* Find(const std::string& name) const;
  Result<std::shared_ptr<Instance>> Start(const ServiceDef& def, const ServiceWindow& window);
  Status RunReset(Instance& instance);
  // Runs argv (or psql with sql) for `instance` and returns what it printed.
  Result<std::string> RunFor(Instance& instance, const std::vector<std::string>& argv,
                             const std::string& sql, const std::string& what,
                             std::chrono::milliseconds timeout);
  void ReadProbes(const std::vector<std::string>& names, bool before,
                  std::vector<ProbeReading>& out);

  SysEnv& env_;
  Clock& clock_;
  const std::vector<ServiceDef> defs_;
  const ServiceOptions options_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Instance>> running_;  // by service name
  uint64_t next_run_ = 1;
};

}  // namespace benchlab
