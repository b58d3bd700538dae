// ServiceDef: a side service a target needs beside it on the server host, such as a database
// (docs/services.md). Like a target it is started only from an agent's own configuration (or the
// embedded lab's campaign, which becomes that configuration): a command (argv, no shell), its
// CPUs, environment and port, a readiness check, setup commands run after each fresh start, and
// how long one instance lives (its scope). Probes are numeric readings taken right before and
// right after every measured interval; resets put the service back in the same state before a
// window or a round. Both coordinator (campaign files) and agent parse it; only an agent runs it.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace benchlab {

// How long one started instance of a service serves windows.
enum class ServiceScope {
  kCampaign,  // started by the first window of a campaign that needs it, kept until it ends
  kTarget,    // started again whenever the window's target differs from the last one served
  kWindow,    // started for every window, stopped with its target
};
const char* ServiceScopeName(ServiceScope scope);

// What runs a probe's or a reset's `sql`: a service of kind "postgres" runs it with psql against
// the service's port, `user` and `database`; any other kind has no sql, only commands.
enum class ServiceKind { kCommand, kPostgres };
const char* ServiceKindName(ServiceKind kind);

// A probe: a command whose standard output is one number, or (postgres kind) a query whose
// result is one number. Read right before and right after each measured interval; the window
// stores the difference (agent/services.h, ProbeDelta).
struct ProbeDef {
  std::string name;                  // [a-z0-9-]+, unique in its service
  std::vector<std::string> command;  // argv, no shell; or empty with sql set
  std::string sql;
  int line = 0;
};

// When a service's reset runs: before every window, or before the first window of each round.
enum class ResetEvery { kWindow, kRound };
const char* ResetEveryName(ResetEvery every);

struct ServiceDef {
  std::string name;  // [a-z0-9-]+, unique in the configuration
  ServiceKind kind = ServiceKind::kCommand;
  std::vector<std::string> command;  // argv, no shell; may hold {port}, {run_dir}, {campaign_dir}
  std::string port = "auto";         // "auto" or a decimal port number; the service's {port}
  std::vector<int> cpus;             // CPUs the service is pinned to; empty: the agent's
  std::map<std::string, std::string> env;  // the only environment it gets (plus PORT)
  // Ready when this command exits 0 (tried every 100 ms); empty: when 127.0.0.1:{port} accepts
  // a TCP connection.
  std::vector<std::string> ready_command;
  std::chrono::milliseconds ready_timeout{30000};
  std::vector<std::vector<std::string>> setup;  // argv each, run in order after each fresh start
  std::chrono::milliseconds setup_timeout{120000};  // for each setup command
  ServiceScope scope = ServiceScope::kCampaign;
  std::vector<ProbeDef> probes;
  std::vector<std::string> reset_command;  // argv, no shell; or reset_sql
  std::string reset_sql;
  ResetEvery reset_every = ResetEvery::kWindow;
  // The system user an agent running as root runs the service and every command of it (setup,
  // readiness, resets, probes) as, with that user's primary group alone; the service's {run_dir}
  // is then a directory of its own in the agent's service_dir. Empty, or an agent that is not
  // root: the agent's own user (docs/services.md, "Running as another user").
  std::string run_as;
  std::string user = "bench";      // postgres kind: psql -U
  std::string database = "bench";  // postgres kind: psql -d
  std::string campaign_dir;        // fills {campaign_dir}
  int line = 0;                    // where [[service]] starts in its file
  bool has_reset() const { return !reset_command.empty() || !reset_sql.empty(); }
};

// A probe's change over one interval. Probes are counters (checkpoints, vacuums, bytes written):
// a reading that fell (the service restarted, its statistics were reset) says nothing of the
// interval, and neither does a missing one; both are unavailable with why, never 0.
struct ProbeDelta {
  std::optional<double> delta;
  std::string unavailable;  // why there is no delta
};
ProbeDelta ProbeDeltaOf(std::optional<double> before, std::optional<double> after,
                        const std::string& error);

}  // namespace benchlab
