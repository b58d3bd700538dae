// Whether targets and side services could start on this host as they are defined, checked
// before anything starts (docs/cli.md, "benchlab check"): the embedded lab checks a campaign
// file's targets before `run` starts a process, and an agent checks its catalogue when it
// registers, so that the coordinator places no campaign on an agent that cannot start it.
#pragma once

#include <string>
#include <vector>

#include "common/service.h"
#include "common/target.h"

namespace benchlab {

// One definition that cannot start, and why.
struct StartProblem {
  std::string kind;  // "target" or "service"
  std::string name;
  int line = 0;     // where its table starts in its file; 0 when unknown
  std::string why;  // "command \"/opt/app\" is not an executable file"
};

struct StartCheckOptions {
  // The CPUs a target or service may be pinned to on this host (an agent's allowed_cpus, this
  // process's affinity for the embedded lab); empty: not checked.
  std::vector<int> cpus;
  // Whether a fixed port must be free on this host now. The embedded lab checks it; an agent
  // does not, since its own side services may hold their ports between campaigns.
  bool ports = false;
};

// What keeps each definition from starting, in definition order, targets first:
//  - its command's program, found as a spawn finds it (FindExecutable, agent/supervisor.h),
//    with {campaign_dir} filled in;
//  - its templates (targets), readable regular files, without {tls_cert}, {tls_key} or
//    {tls_ca} unless the target has tls (CheckTemplateTls); its cwd, a directory;
//  - its CPUs, among options.cpus;
//  - a fixed port, free on 127.0.0.1 (options.ports);
//  - a target's side services, defined and startable themselves.
// What only a start fills in ({run_dir}, {port}, {service.NAME.*}) leaves the value holding it
// unchecked: a relative program path with no cwd is relative to a run directory not made yet.
std::vector<StartProblem> CheckStartable(const std::vector<TargetDef>& targets,
                                         const std::vector<ServiceDef>& services,
                                         const StartCheckOptions& options);

// "hello.toml:40: target \"hello-server\": command ... is not an executable file"; without the
// line when it is 0.
std::string FormatStartProblem(const std::string& source, const StartProblem& problem);

}  // namespace benchlab
