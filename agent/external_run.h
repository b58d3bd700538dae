// Running an external load generator (wrk or h2load) for one window on a load agent: a warm-up
// run, then the measured run, each pinned to the load CPUs like benchlab's own generator, and the
// measured run's output parsed (agent/external_load.h). The tool gets only PATH in its
// environment, never the agent's.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "agent/cancel.h"
#include "agent/external_load.h"
#include "common/status.h"
#include "common/sysenv.h"

namespace benchlab {

struct ExternalRun {
  ExternalLoadFigures figures;    // of the measured run
  std::vector<std::string> argv;  // the measured run's command line
  std::string output;             // its stdout and stderr, as printed
  double cpu_user_s = 0;          // the tool's CPU over the measured run (all its threads)
  double cpu_sys_s = 0;
  double wall_s = 0;  // from just before the start to the exit
};

// `on_measure(true)` is called just before the measured run starts and `on_measure(false)` just
// after it ends, so the server's interval is the tool's. A warm-up shorter than the tool's
// shortest run is rounded up to it; a zero warm-up runs none. Errors name the tool and the agent's
// view: not installed, exited with a status (and its last lines), output that does not parse,
// still running past duration + 10 s (then killed). When `cancel` is set the tool's process group
// is stopped at once (SIGTERM, SIGKILL 50 ms later) and the result is Cancelled. scratch_dir must
// not exist yet; it is made 0700, the script and body file 0600; its parent, the run root, is
// made 0700 when missing and must be private.
Result<ExternalRun> RunExternalLoad(SysEnv& env, ExternalLoadSpec spec,
                                    const std::vector<int>& cpus, std::chrono::milliseconds warmup,
                                    const std::string& scratch_dir,
                                    const std::function<void(bool measuring)>& on_measure,
                                    const CancelFlag* cancel = nullptr);

}  // namespace benchlab
