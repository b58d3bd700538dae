// Clock: the injected source of time. Intervals use the monotonic clock; wall time is only for
// what a person reads (timestamps in the store). Tests use a FakeClock
// (tests/unit/support/fake_clock.h) that nothing sleeps on. Thread-safe implementations only.
//
// Through the seam: every decision that turns on elapsed time and that a test must be able to
// put on either side of its boundary without waiting. Each class takes a Clock& that defaults to
// RealClockInstance():
//   - the coordinator's agent leases and placement (AgentRegistry), the window protocol's step
//     timings and window start and end (window_runner, window_load), the [stats] max_duration
//     budget (Scheduler, through the registry's clock), dashboard sessions and token expiry
//     (DashboardAuth);
//   - the agent's "coordinator unreachable longer than lease and grace" stop (AgentDaemon) and
//     idle side services (ServiceManager::StopIdle);
//   - the CRL and CA re-read once a second and the refusal windows (TlsContext,
//     HandshakeRefusals); the CLI's progress and ETA (ProgressPrinter);
//   - the audit trail, through the Store's clock (Store::Open, Store::clock): each row's time,
//     the pruning (at the coordinator's start, and on appending a row whose time is not one) and
//     the "24h" or "7d" of `audit --since` and GetAudit, counted back from it.
// Not through it, read directly:
//   - the load generator's timestamps (loadgen/worker.cc, loadgen/engine.cc): read per request on
//     the hot path, and the run's marks on the same clock (docs/load.md, "Threads, CPUs and the
//     engine");
//   - gRPC deadlines (set_deadline) outside the window protocol: gRPC enforces them against the
//     real clock, so a fake one would only make them wrong;
//   - waits on something real, whose bound is a real time: a process's exit (TargetProcess),
//     a service's readiness and its commands, a socket's poll, the embedded lab's start-up;
//   - measurements that only report (startup_ms, a step's wall time, an RPC's duration in
//     /metrics, a sampler's interval paced by a real wait);
//   - certificate validity, which is judged against the real dates the certificates carry;
//   - timestamps written to the store outside the window protocol and the audit trail (a
//     campaign's created_at); the HTTP front's refusal log line, at most one per 10 s;
//   - the CLI commands' own "now", read once per run: `token` and `agents` pass it to the pure
//     functions that decide (ParseTokenExpiry, TokenExpired, CertificateWarnings), which tests
//     call with the time they choose.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace benchlab {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point Now() = 0;
  virtual std::chrono::system_clock::time_point WallNow() = 0;
};

class RealClock : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point WallNow() override {
    return std::chrono::system_clock::now();
  }
};

Clock& RealClockInstance();

// "2026-11-30T02:38:10.123Z"
std::string FormatIsoTime(std::chrono::system_clock::time_point t);
// Seconds since the epoch of a UTC timestamp as FormatIsoTime and the store write it
// ("2026-11-30T02:38:10.123Z", fraction optional); NaN for any other text.
double ParseIsoSeconds(const std::string& text);

}  // namespace benchlab
