// LaunchTarget: starts one catalogue target for one window. It renders the target's templates
// into a fresh run directory, fills {port}/{run_dir}/{campaign_dir} in argv, picks a free port
// for port = "auto", spawns the process pinned and in its own group (TargetProcess), and waits
// until the readiness path answers 2xx, timing start-up and the first request. The RunningTarget
// it returns stops the process (and then removes its cgroup) when it goes; it is used by one
// thread at a time.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "agent/cancel.h"
#include "agent/cgroup.h"
#include "agent/spawn_thread.h"
#include "agent/supervisor.h"
#include "common/status.h"
#include "common/sysenv.h"
#include "common/target.h"

namespace benchlab {

struct RunningTarget {
  // Declared first so that it goes last: the process is stopped before its cgroup is removed.
  std::unique_ptr<WindowCgroup> cgroup;  // null: CPU is accounted by walking /proc
  std::string cgroup_note;               // why there is no cgroup, when there is none
  std::unique_ptr<TargetProcess> process;
  std::string run_dir;
  uint16_t port = 0;
  double startup_ms = 0;        // spawn to the first 2xx on the readiness path
  double first_request_ms = 0;  // latency of that first 2xx
  uint64_t idle_rss_kb = 0;     // the tree's RSS right after readiness
  std::vector<int> cpus;        // affinity read back after start
  // tls = true: the certificate of the CA made in run_dir (PEM, public), which the target's
  // certificate chains to; "" otherwise.
  std::string tls_ca_pem;
};

// Replaces every `from` in text with `to`.
void ReplaceAll(std::string& text, const std::string& from, const std::string& to);
// A process's last log lines on one line, " | " between them; "(log empty)" when there are none.
std::string JoinLines(const std::vector<std::string>& lines);

// Replaces {port}, {run_dir} and {campaign_dir} in text and, when `tls`, {tls_cert},
// {tls_key} and {tls_ca} with the absolute paths of run_dir's certificate files (tls/ca.h,
// TargetTlsFiles).
std::string FillPlaceholders(const std::string& text, uint16_t port, const std::string& run_dir,
                             const std::string& campaign_dir, bool tls = false);

// InvalidArgument at the template's line ("template PATH:LINE: {tls_cert} is filled only for a
// target with tls = true, ...") when `text`, the template `source` of `target`, holds
// {tls_cert}, {tls_key} or {tls_ca}; for a target without tls, whose templates have no files to
// point at.
Status CheckTemplateTls(const std::string& source, const std::string& text,
                        const std::string& target);

// Runs a catalogue entry's `version` command (no shell, the entry's environment, 5 s at most)
// and returns the first line it printed; "unavailable" when the entry has none.
Result<std::string> ReadTargetVersion(SysEnv& env, const TargetDef& def,
                                      const std::string& scratch_dir);

// A port that was free on 127.0.0.1 a moment ago (bind to 0, read it back, close).
Result<uint16_t> PickFreePort();

// The launch steps targets and side services (agent/services.h) share.
// The CPUs `what` (`target "app"`, `service "pg"`) is pinned to: those it asks for, which must
// lie within the agent's allowed CPUs, or all allowed ones when it asks for none.
Result<std::vector<int>> PinnedCpus(const std::string& what, const std::vector<int>& asked,
                                    const std::vector<int>& allowed);
// A port setting: "auto" (a free one, PickFreePort) or a decimal port number.
Result<uint16_t> ResolvePort(const std::string& port);
// Spawns `spec` from `spawner` when there is one (its thread's end kills the child), else here.
Result<std::unique_ptr<TargetProcess>> SpawnFrom(SysEnv& env, const SpawnSpec& spec,
                                                 SpawnThread* spawner);
// A process started in a cgroup of its own when `use_cgroup` and the machine allows; without
// one, `cgroup_note` says why, and its CPU is read from /proc.
struct Launched {
  std::unique_ptr<WindowCgroup> cgroup;  // first, so that it goes last
  std::string cgroup_note;
  std::unique_ptr<TargetProcess> process;
};
Result<Launched> LaunchInCgroup(SysEnv& env, SpawnSpec spec, bool use_cgroup,
                                const std::string& cgroup_name, const std::string& cgroup_parent,
                                SpawnThread* spawner);

struct StartOptions {
  std::vector<int> allowed_cpus;               // the agent's CPUs; empty: any
  std::map<std::string, std::string> tag_env;  // added to the environment (the agent's cookie)
  SpawnThread* spawner = nullptr;              // fork there, and die with the agent
  bool use_cgroup = false;                     // a cgroup v2 per target where the machine allows
  std::string cgroup_parent;  // where it is made; "" <cgroup2 mount>/benchlab (agent/cgroup.h)
  // Where readiness is probed: the address load generators will reach the target at (the
  // agent's advertised host), so a target that does not listen there fails here, by name.
  std::string ready_host = "127.0.0.1";
  // Directories a template may be read from besides the target's campaign_dir (the agent's
  // configuration directory). Templates are resolved with realpath(3) when the target starts;
  // one that lies outside all of them, through a symbolic link or "..", is refused.
  std::vector<std::string> template_dirs;
  // Set: the start is abandoned (Cancelled) at the next readiness probe, the process stopped.
  const CancelFlag* cancel = nullptr;
  // The output directory of the commit built for this start (agent/build_cache.h): fills {out}
  // in the command, cwd, env values, template paths and contents. Empty: no commit was asked
  // for, and a target that holds {out} anywhere there is refused (FailedPrecondition).
  std::string out_dir;
};

// With def.tls, run_dir gets a CA, a certificate for localhost, 127.0.0.1 and ready_host, and
// its key (tls/ca.h, MakeTargetTls) before the templates are rendered, and readiness is probed
// over TLS, the certificate verified against that CA for the name localhost; a template that
// holds {tls_cert}, {tls_key} or {tls_ca} for a target without tls is refused (file:line).
// Starts `def` with its pinning overridden by `cpus` when non-empty; a target with no pinning on
// an agent with allowed CPUs is pinned to all of them, and pinning outside them is refused. After
// readiness every thread of the target's tree is checked to run only on its CPUs. run_dir is
// created; the log goes to run_dir/target.log. On any failure nothing is left running and the
// error names the step (CPUs, template, spawn, readiness, affinity) and, when the target ran, the
// last log lines. run_dir must not exist yet: it is made with mode 0700, the log and rendered
// templates with 0600; its parent, the run root, is made 0700 when missing and must be private
// (agent/private_dir.h).
Result<RunningTarget> LaunchTarget(SysEnv& env, const TargetDef& def, const std::vector<int>& cpus,
                                   const std::string& run_dir, const StartOptions& options = {});

}  // namespace benchlab
