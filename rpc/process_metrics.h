// The process_* metrics Prometheus's client libraries give every exporter (CPU seconds, resident
// and virtual memory, open and maximum file descriptors, start time), for the /metrics of the
// coordinator and the agents (docs/metrics.md, "Process"). Read from /proc through SysEnv at each
// scrape, so a fake root tests them; a file that cannot be read leaves its metrics out rather
// than reporting 0. Thread-safe (no state).
#pragma once

#include <prometheus/metric_family.h>
#include <sys/types.h>

#include <vector>

#include "common/sysenv.h"

namespace benchlab {

// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds and process_max_fds of process `pid` (the caller's
// own, getpid(), in the daemons).
std::vector<prometheus::MetricFamily> ProcessFamilies(SysEnv& env, pid_t pid);

}  // namespace benchlab
