// coordinator_fleet_bench: what a fleet of agents costs the coordinator. A benchmark, not a test:
// it asserts nothing and prints figures with the conditions they were measured under.
//
//   coordinator_fleet_bench [--agents 500] [--period-ms 1000] [--seconds 20] [--warmup-s 3]
//                           [--channels 0] [--tls] [--benchlab build/bin/benchlab] [--keep]
//                           [--coordinator HOST:PORT [--coordinator-pid PID]] [--prefix fleet-]
//
// It starts `benchlab coordinator` as a child process (its own database in a temporary
// directory, port 0), so the coordinator's CPU is read alone from /proc/<pid>/stat. Then N
// simulated agents register once each (distinct names, roles server/load alternating, labels,
// host facts, a catalogue) and heartbeat every period over real gRPC, their beats spread evenly
// over the period. Calls use gRPC's callback API from one pacing thread, so the simulator stays
// light; each agent has its own channel and TCP connection as a real agent would (--channels K
// shares K channels among them instead). After a warm-up, it measures the coordinator's
// user+sys CPU over --seconds: % of one core, heartbeats delivered per second, heartbeat latency
// (call to reply) p50/p99/max, and the simulator's own CPU. At the end ListAgents must list the
// N agents. With --tls every channel is mutual TLS as in a fleet (docs/security.md): a CA in the
// temporary directory issues the coordinator's certificate and one agent certificate per
// simulated agent, under its name, so the coordinator checks each call's role and name as it
// would a real agent's. With --coordinator it drives a coordinator already running (several
// simulators with distinct --prefix can share one); its CPU is measured only when --coordinator-pid
// is given.
//
//   coordinator_fleet_bench --campaign [--pairs 200] [--minutes 120] [--window-s 10]
//                           [--sample-s 10] [--period-ms 1667] [--keep]
//
// With --campaign the 2 x --pairs simulated agents (server and load alternating) also serve the
// Agent service: fakes that measure nothing and answer at once with the readings of a quiet
// host, except RunLoad, which streams MEASURE_END only after the request's warm-up and duration,
// so windows take real time as on a real fleet. One gRPC server (callback API, timers rather
// than sleeping threads) listens on one loopback port per agent, and each agent registers its
// own port. The agents heartbeat every --period-ms (a real agent's lease / 3 by default). One
// fleet campaign is submitted: `pairs = "all"`, the catalogue target hello-server, windows of
// --window-s measured seconds without warm-up, and enough scenarios x levels x rounds to outlast
// --minutes; it is cancelled when --minutes have passed. Every --sample-s the coordinator's
// CPU and RSS are read from /proc; at the end it prints the windows finished by verdict, windows
// per hour, the coordinator's CPU (% of one core, ms per window), its RSS at start, max and end,
// the store's size after a clean stop (bytes per window), heartbeat latency and the simulator's
// own CPU.
//
// Build and run: make bench-coordinator, or
//   ninja -C build coordinator_fleet_bench benchlab && build/bin/coordinator_fleet_bench
#include <grpcpp/alarm.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/proc.h"
#include "benchlab/v1/agent.grpc.pb.h"
#include "benchlab/v1/coordinator.grpc.pb.h"
#include "common/histogram.h"
#include "common/sysenv.h"
#include "rpc/keepalive.h"
#include "tls/ca.h"
#include "tls/verify.h"

namespace benchlab {
namespace {

using Steady = std::chrono::steady_clock;

struct Options {
  int agents = 500;
  int period_ms = 1000;
  double seconds = 20;
  double warmup_s = 3;
  int channels = 0;  // 0: one per agent
  std::string benchlab;
  std::string coordinator;  // HOST:PORT of a running coordinator; empty: start a child
  int coordinator_pid = 0;
  std::string prefix = "fleet-";
  bool keep = false;
  bool tls = false;  // mutual TLS, a certificate per agent
  // --campaign: the agents also serve the Agent service and one fleet campaign runs on them.
  bool campaign = false;
  int pairs = 200;
  double minutes = 120;
  double window_s = 10;      // the measured interval of each window
  double sample_s = 10;      // coordinator CPU and RSS sampled this often
  uint64_t max_windows = 0;  // the coordinator's --max-windows (0: its default)
};

// user+sys seconds of a process, from /proc/<pid>/stat; negative when it cannot be read.
double ProcessCpuS(pid_t pid) {
  SysEnv& env = RealSysEnv();
  auto text = env.ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!text.ok()) return -1;
  auto stat = ParseProcStat(*text);
  if (!stat.ok()) return -1;
  return static_cast<double>(stat->utime + stat->stime) /
         static_cast<double>(env.ClockTicksPerSecond());
}

// /proc/<pid>/status, parsed; an error when the process is gone or the file unreadable.
Result<ProcStatus> ReadProcStatus(pid_t pid) {
  auto text = RealSysEnv().ReadFile("/proc/" + std::to_string(pid) + "/status");
  if (!text.ok()) return text.status();
  return ParseProcStatus(*text);
}

std::string ProcessMemory(pid_t pid) {
  auto status = ReadProcStatus(pid);
  if (!status.ok()) return "unavailable";
  char out[96];
  std::snprintf(out, sizeof out, "RSS %.1f MB, %lld threads",
                static_cast<double>(status->vm_rss_kb) / 1024.0,
                static_cast<long long>(status->threads));
  return out;
}

std::string LoadAverage() {
  auto text = RealSysEnv().ReadFile("/proc/loadavg");
  if (!text.ok()) return "unavailable";
  std::string s = *text;
  // "1.90 4.22 3.35 2/345 6789": the three averages only.
  size_t end = 0;
  for (int i = 0; i < 3 && end != std::string::npos; ++i) end = s.find(' ', end + 1);
  return s.substr(0, end);
}

// Starts `benchlab coordinator` on port 0 with its output in dir/coordinator.log. It dies with
// this process (PR_SET_PDEATHSIG), so an interrupted benchmark leaves nothing running.
pid_t SpawnCoordinator(const Options& o, const std::string& dir) {
  const std::string db = dir + "/fleet.db", port_file = dir + "/port",
                    log = dir + "/coordinator.log";
  std::fflush(nullptr);  // or the child would print this process's buffered lines again
  pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (std::freopen(log.c_str(), "w", stdout) == nullptr) _exit(127);
  dup2(fileno(stdout), STDERR_FILENO);
  if (o.tls) {
    const CaPaths ca(dir + "/ca");
    execl(o.benchlab.c_str(), o.benchlab.c_str(), "coordinator", "--listen", "127.0.0.1:0", "--db",
          db.c_str(), "--port-file", port_file.c_str(), "--tls-ca", ca.cert.c_str(), "--tls-cert",
          ca.Cert("coordinator").c_str(), "--tls-key", ca.Key("coordinator").c_str(),
          static_cast<char*>(nullptr));
  } else {
    const std::string max_windows = std::to_string(o.max_windows);
    if (o.max_windows > 0) {
      execl(o.benchlab.c_str(), o.benchlab.c_str(), "coordinator", "--listen", "127.0.0.1:0",
            "--db", db.c_str(), "--port-file", port_file.c_str(), "--max-windows",
            max_windows.c_str(), static_cast<char*>(nullptr));
    }
    execl(o.benchlab.c_str(), o.benchlab.c_str(), "coordinator", "--listen", "127.0.0.1:0", "--db",
          db.c_str(), "--port-file", port_file.c_str(), static_cast<char*>(nullptr));
  }
  _exit(127);
}

std::string WaitForPort(const std::string& port_file, pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream in(port_file);
    std::string port;
    if (in >> port && !port.empty()) return port;
    if (waitpid(pid, nullptr, WNOHANG) == pid) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "";
}

v1::RegisterAgentRequest AgentRequest(const Options& o, int i) {
  char name[64];
  std::snprintf(name, sizeof name, "%sagent-%04d", o.prefix.c_str(), i);
  v1::RegisterAgentRequest r;
  r.set_name(name);
  r.set_instance_proof(std::string("proof-") + name);
  const bool server = i % 2 == 0;
  r.add_roles(server ? "server" : "load");
  r.set_address("127.0.0.1:" + std::to_string(20000 + i));  // never called without --campaign
  v1::HostFacts* h = r.mutable_host();
  h->set_hostname(std::string("host-") + name);
  h->set_cpu_model("AMD EPYC 7B13 64-Core Processor");
  h->set_logical_cores(16);
  h->set_physical_cores(8);
  h->set_smt(true);
  h->set_governor("performance");
  h->set_kernel("6.1.0-18-amd64");
  h->set_memory_kb(65'843'212);
  h->set_hypervisor(i % 3 == 0);
  h->set_agent_version("0.1.0");
  r.add_labels("rack-" + std::to_string(i % 10));
  r.add_labels(i % 4 < 2 ? "zone-a" : "zone-b");
  r.add_labels("fleet-bench");
  if (server) {
    for (const char* target : {"hello-server", "nginx", "node-express", "bun-hono"}) {
      r.add_catalogue(target);
      (*r.mutable_versions())[target] = std::string(target) + " 1.2.3";
    }
  }
  return r;
}

// Counters of the completed calls; `measuring` selects the ones inside the measured interval.
struct Tally {
  std::mutex mu;
  bool measuring = false;
  Histogram latency_us;
  uint64_t ok = 0, failed = 0, unknown = 0;
  std::string last_error;
};

struct Fleet {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<v1::Coordinator::Stub>> stubs;
  std::vector<std::string> names;
  std::vector<std::string> addresses;  // --campaign: where each agent serves; else made up
  std::unique_ptr<std::atomic<bool>[]> in_flight;
  std::atomic<int> outstanding{0};
  Tally tally;
  v1::Coordinator::Stub& StubOf(int i) { return *stubs[static_cast<size_t>(i) % stubs.size()]; }
};

// Registers every agent concurrently; returns how many succeeded.
int RegisterAll(Fleet& fleet, const Options& o, std::string* error) {
  std::mutex mu;
  std::condition_variable done;
  int pending = o.agents, registered = 0;
  struct Call {
    grpc::ClientContext ctx;
    v1::RegisterAgentRequest req;
    v1::RegisterAgentReply reply;
  };
  for (int i = 0; i < o.agents; ++i) {
    auto* call = new Call;
    call->req = AgentRequest(o, i);
    if (!fleet.addresses.empty()) call->req.set_address(fleet.addresses[static_cast<size_t>(i)]);
    fleet.names.push_back(call->req.name());
    call->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    fleet.StubOf(i).async()->RegisterAgent(&call->ctx, &call->req, &call->reply,
                                           [&, call](grpc::Status s) {
                                             std::lock_guard lock(mu);
                                             if (s.ok()) {
                                               ++registered;
                                             } else {
                                               *error = s.error_message();
                                             }
                                             delete call;
                                             if (--pending == 0) done.notify_all();
                                           });
  }
  std::unique_lock lock(mu);
  done.wait(lock, [&] { return pending == 0; });
  return registered;
}

struct Beat {
  grpc::ClientContext ctx;
  v1::HeartbeatRequest req;
  v1::HeartbeatReply reply;
  Steady::time_point start;
  int agent = 0;
};

void SendBeat(Fleet& fleet, int i) {
  auto* beat = new Beat;
  beat->req.set_name(fleet.names[static_cast<size_t>(i)]);
  beat->req.set_instance_proof("proof-" + fleet.names[static_cast<size_t>(i)]);
  beat->agent = i;
  // The real agent's deadline (agent/server/agent_daemon.cc).
  beat->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  fleet.outstanding.fetch_add(1);
  beat->start = Steady::now();
  fleet.StubOf(i).async()->Heartbeat(
      &beat->ctx, &beat->req, &beat->reply, [&fleet, beat](grpc::Status s) {
        const auto us =
            std::chrono::duration_cast<std::chrono::microseconds>(Steady::now() - beat->start);
        {
          std::lock_guard lock(fleet.tally.mu);
          if (fleet.tally.measuring) {
            if (!s.ok()) {
              ++fleet.tally.failed;
              fleet.tally.last_error = s.error_message();
            } else if (!beat->reply.known()) {
              ++fleet.tally.unknown;
            } else {
              ++fleet.tally.ok;
              fleet.tally.latency_us.Record(static_cast<uint64_t>(us.count()));
            }
          }
        }
        fleet.in_flight[static_cast<size_t>(beat->agent)].store(false);
        delete beat;
        fleet.outstanding.fetch_sub(1);
      });
}

double Ms(uint64_t us) { return static_cast<double>(us) / 1000.0; }

// Plaintext, or with --tls the certificate NAME of the CA in dir/ca.
std::shared_ptr<grpc::ChannelCredentials> CredentialsOf(const Options& o, const std::string& dir,
                                                        const std::string& name) {
  if (!o.tls) return grpc::InsecureChannelCredentials();
  const CaPaths ca(dir + "/ca");
  auto root = ReadPemFile(ca.cert), key = ReadPemFile(ca.Key(name)),
       cert = ReadPemFile(ca.Cert(name));
  if (!root.ok() || !key.ok() || !cert.ok()) {
    std::fprintf(stderr, "cannot read the certificate of %s in %s\n", name.c_str(), ca.dir.c_str());
    return nullptr;
  }
  return grpc::SslCredentials({root->text, key->text, cert->text});
}

// --- --campaign: the agents serve the Agent service, and one fleet campaign runs on them --------

Steady::duration Seconds(double s) {
  return std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(s));
}

// Figures of a host that ran only the window's own work: 16 CPUs, the target tree's or the load
// generator's core busy, next to nothing foreign, no steal, no throttling, no swapping.
void PlausibleHost(double interval_s, double own_pct, v1::HostFigures* h) {
  h->set_interval_s(interval_s);
  h->set_cpus(16);
  h->set_busy_pct(own_pct + 1.5);
  h->set_idle_pct(1600 - own_pct - 1.5);
  h->set_iowait_pct(0.1);
  h->set_steal_pct(0);
  h->set_own_pct(own_pct + 1);
  h->set_foreign_mean_pct(0.5);
  h->set_foreign_max_pct(1.2);
  v1::ForeignUser* f = h->add_top_foreign();
  f->set_comm("systemd-journal");
  f->set_cpu_pct(0.3);
  h->set_max_temp_c(52);
  h->set_throttle_core_events(0);
  h->set_throttle_package_events(0);
  h->set_min_freq_ratio(0.98);
  h->set_swap_in_pages(0);
  h->set_swap_out_pages(0);
}

// RunLoad of a fake agent: MEASURE_START after the request's warm-up, MEASURE_END after its
// duration (timers, no thread waits), then a result of 20,000 requests/s answered 200.
class FakeLoadRun final : public grpc::ServerWriteReactor<v1::RunLoadEvent> {
 public:
  explicit FakeLoadRun(const v1::RunLoadRequest& req)
      : warmup_ms_(std::max<int64_t>(0, req.warmup_ms())),
        duration_ms_(std::max<int64_t>(1, req.duration_ms())),
        depth_(req.depth() > 0 ? req.depth() : 1),
        status_(req.expect_status_size() > 0 ? req.expect_status(0) : 200) {
    Wait(warmup_ms_);
  }
  void OnWriteDone(bool ok) override { Next(ok); }
  void OnDone() override { delete this; }

 private:
  // One operation is outstanding at a time (a timer or a write), so Next never runs twice at once.
  void Wait(int64_t ms) {
    alarm_ = std::make_unique<grpc::Alarm>();
    alarm_->Set(std::chrono::system_clock::now() + std::chrono::milliseconds(ms),
                [this](bool ok) { Next(ok); });
  }
  void Next(bool ok) {
    if (!ok) return Finish(grpc::Status(grpc::StatusCode::CANCELLED, "load cancelled"));
    switch (step_++) {
      case 0:
        event_.set_kind(v1::RunLoadEvent::MEASURE_START);
        return StartWrite(&event_);
      case 1:
        return Wait(duration_ms_);
      case 2:
        event_.set_kind(v1::RunLoadEvent::MEASURE_END);
        return StartWrite(&event_);
      case 3:
        FillResult();
        return StartWrite(&event_);
      default:
        return Finish(grpc::Status::OK);
    }
  }
  void FillResult() {
    const double s = static_cast<double>(duration_ms_) / 1000.0;
    const auto requests = static_cast<uint64_t>(20'000 * s) + 1;
    event_.set_kind(v1::RunLoadEvent::RESULT);
    v1::LoadResult* r = event_.mutable_result();
    Histogram latency;
    latency.RecordN(180, requests / 2);
    latency.RecordN(240, requests - requests / 2 - requests / 100);
    latency.RecordN(900, requests / 100);
    r->set_requests(requests);
    r->set_duration_s(s);
    r->set_rps(static_cast<double>(requests) / s);
    r->set_throughput_rps(static_cast<double>(requests) / s);
    r->set_histogram(latency.Serialize());
    v1::StatusCount* sc = r->add_status_counts();
    sc->set_status(status_);
    sc->set_count(requests);
    r->mutable_errors();
    r->add_thread_cpu_s(0.6 * s);
    r->set_cpu_user_s(0.35 * s);
    r->set_cpu_sys_s(0.25 * s);
    for (int64_t i = 0; i < std::max<int64_t>(1, duration_ms_ / 1000); ++i) {
      r->add_per_second_requests(20'000);
      r->add_per_second_p99_us(900);
    }
    r->set_sent(requests);
    r->set_depth(depth_);
    r->set_tool("benchlab");
    PlausibleHost(s, 60, r->mutable_host());
  }

  const int64_t warmup_ms_, duration_ms_;
  const int32_t depth_, status_;
  int step_ = 0;
  v1::RunLoadEvent event_;
  std::unique_ptr<grpc::Alarm> alarm_;
};

// Every simulated agent: one service behind one server that listens on one port per agent. It
// measures nothing and answers at once, but for RunLoad, which takes the window's time. Its
// readings are those of a quiet host, so the coordinator's gates find the windows valid.
class FakeAgents final : public v1::Agent::CallbackService {
 public:
  explicit FakeAgents(double window_s) : window_s_(window_s) {}

  grpc::ServerUnaryReactor* DescribeHost(grpc::CallbackServerContext* ctx,
                                         const v1::DescribeHostRequest*,
                                         v1::DescribeHostReply* reply) override {
    reply->add_roles("server");
    reply->add_catalogue("hello-server");
    return Done(ctx);
  }
  grpc::ServerUnaryReactor* CheckHost(grpc::CallbackServerContext* ctx, const v1::CheckHostRequest*,
                                      v1::CheckHostReply* reply) override {
    reply->set_selftest_wall_ms(10.0 + 0.1 * static_cast<double>(++checks_ % 3));
    reply->set_selftest_cpu_ms(10);
    return Done(ctx);
  }
  grpc::ServerUnaryReactor* StartTarget(grpc::CallbackServerContext* ctx,
                                        const v1::StartTargetRequest* req,
                                        v1::StartTargetReply* reply) override {
    reply->set_handle("h-" + req->window());
    reply->set_pid(4242);
    reply->set_port(8080);
    reply->set_startup_ms(25);
    reply->set_first_request_ms(0.4);
    reply->set_idle_rss_kb(8000);
    for (int cpu : req->cpus()) reply->add_cpus(cpu);
    reply->set_version(req->target() + " 1.2.3");
    return Done(ctx);
  }
  grpc::ServerUnaryReactor* StopTarget(grpc::CallbackServerContext* ctx,
                                       const v1::StopTargetRequest*,
                                       v1::StopTargetReply* reply) override {
    reply->set_exit_description("killed by signal 15 (SIGTERM)");
    return Done(ctx);
  }
  grpc::ServerUnaryReactor* CheckConformance(grpc::CallbackServerContext* ctx,
                                             const v1::CheckConformanceRequest*,
                                             v1::CheckConformanceReply* reply) override {
    reply->set_ok(true);
    return Done(ctx);
  }
  grpc::ServerUnaryReactor* Mark(grpc::CallbackServerContext* ctx, const v1::MarkRequest* req,
                                 v1::MarkReply* reply) override {
    reply->set_target_alive(true);
    if (req->kind() == v1::MarkRequest::END) {
      const double s = window_s_;
      reply->set_interval_s(s);
      reply->set_cpu_user_s(0.7 * s);
      reply->set_cpu_sys_s(0.2 * s);
      reply->set_rss_mean_kb(20'000);
      reply->set_rss_peak_kb(21'000);
      reply->set_threads(4);
      reply->set_voluntary_ctxt_switches(static_cast<uint64_t>(1000 * s));
      reply->set_nonvoluntary_ctxt_switches(static_cast<uint64_t>(10 * s));
      reply->set_cpu_source("proc");
      for (int i = 1; i <= std::max(1, static_cast<int>(s)); ++i) {
        v1::ServerSample* sample = reply->add_samples();
        sample->set_t_s(i);
        sample->set_cpu_pct(90);
        sample->set_rss_kb(20'000);
        sample->set_host_busy_pct(92);
        sample->set_foreign_pct(0.5);
      }
      PlausibleHost(s, 90, reply->mutable_host());
    }
    return Done(ctx);
  }
  grpc::ServerWriteReactor<v1::RunLoadEvent>* RunLoad(grpc::CallbackServerContext*,
                                                      const v1::RunLoadRequest* req) override {
    return new FakeLoadRun(*req);
  }
  grpc::ServerUnaryReactor* Acknowledge(grpc::CallbackServerContext* ctx,
                                        const v1::AcknowledgeRequest*,
                                        v1::AcknowledgeReply*) override {
    return Done(ctx);
  }

 private:
  static grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* ctx) {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  const double window_s_;
  std::atomic<uint64_t> checks_{0};
};

// The campaign file: one catalogue target, `pairs = "all"`, windows of window_s measured seconds
// (no warm-up), and enough scenarios x levels x rounds for `windows` windows at least.
std::string CampaignToml(const Options& o, uint64_t windows) {
  const uint64_t levels = 4, max_rounds = 1000;
  const uint64_t scenarios =
      std::max<uint64_t>(1, (windows + levels * max_rounds - 1) / (levels * max_rounds));
  const uint64_t rounds =
      std::max<uint64_t>(1, (windows + levels * scenarios - 1) / (levels * scenarios));
  std::string toml = "name = \"fleet-bench\"\nbaseline = \"hello-server\"\n[matrix]\n";
  toml += "connections = [8, 16, 32, 64]\nrounds = " + std::to_string(rounds) + "\n";
  toml += "warmup = \"0s\"\nduration = \"" +
          std::to_string(static_cast<int64_t>(std::llround(o.window_s * 1000))) + "ms\"\n";
  toml += "[placement]\npairs = \"all\"\n[[target]]\nname = \"hello-server\"\n";
  for (uint64_t i = 1; i <= scenarios; ++i) {
    toml += "[[scenario]]\nname = \"s" + std::to_string(i) + "\"\npath = \"/s" + std::to_string(i) +
            "\"\nexpect = { status = 200 }\n";
  }
  return toml;
}

uint64_t ProcessRssKb(pid_t pid) {
  auto status = ReadProcStatus(pid);
  return status.ok() ? static_cast<uint64_t>(status->vm_rss_kb) : 0;
}

uint64_t FileBytes(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

double Mb(uint64_t kb) { return static_cast<double>(kb) / 1024.0; }

int RunCampaign(Options o) {
  const unsigned cores = std::thread::hardware_concurrency();
  o.agents = 2 * o.pairs;
  // Enough windows to outlast --minutes on each pair (pairs = "all" runs the whole plan on every
  // pair): a window takes at least window_s.
  const auto windows = static_cast<uint64_t>(std::ceil(o.minutes * 60 / o.window_s * 1.1) + 4.0);
  o.max_windows = std::max<uint64_t>(windows * static_cast<uint64_t>(o.pairs) * 2, 100'000);
  std::printf(
      "coordinator_fleet_bench --campaign: %d pairs (%d agents), windows of %.1f s measured, "
      "%.1f minutes at most, a heartbeat every %d ms per agent\n",
      o.pairs, o.agents, o.window_s, o.minutes, o.period_ms);
  std::printf("  machine: %u logical cores, load average %s (at start)\n", cores,
              LoadAverage().c_str());

  // The fake agents: one server, one listening port per agent.
  FakeAgents fakes(o.window_s);
  grpc::ServerBuilder builder;
  std::vector<int> ports(static_cast<size_t>(o.agents), 0);
  for (int& port : ports) {
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  }
  // As a real agent's server: the coordinator's keepalive pings are welcome, with or without
  // calls in flight (with gRPC's defaults they end in a too_many_pings GOAWAY, the window's
  // call fails and the window with it).
  SetServerKeepalive(builder);
  builder.RegisterService(&fakes);
  std::unique_ptr<grpc::Server> agent_server = builder.BuildAndStart();
  if (!agent_server || std::any_of(ports.begin(), ports.end(), [](int p) { return p == 0; })) {
    std::fprintf(stderr, "cannot serve the simulated agents on %d loopback ports\n", o.agents);
    return 1;
  }

  char tmpl[] = "/tmp/benchlab-fleet-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string dir = tmpl;
  const pid_t child = SpawnCoordinator(o, dir);
  auto stop_coordinator = [&] {
    kill(child, SIGTERM);
    int status = 0;
    waitpid(child, &status, 0);
    return status;
  };
  const std::string port = WaitForPort(dir + "/port", child);
  if (port.empty()) {
    std::fprintf(stderr, "the coordinator (%s) did not start; see %s/coordinator.log\n",
                 o.benchlab.c_str(), dir.c_str());
    stop_coordinator();
    agent_server->Shutdown(std::chrono::system_clock::now());
    return 1;
  }
  const std::string address = "127.0.0.1:" + port;
  std::printf(
      "  coordinator: %s coordinator (child pid %d) on %s, database %s/fleet.db, "
      "--max-windows %llu\n",
      o.benchlab.c_str(), child, address.c_str(), dir.c_str(),
      static_cast<unsigned long long>(o.max_windows));
  std::printf(
      "  simulator: one gRPC server (callback API) on %d loopback ports for the agents' "
      "service; a channel per agent to the coordinator; one heartbeat thread\n",
      o.agents);

  Fleet fleet;
  for (int i = 0; i < o.agents; ++i) {
    fleet.addresses.push_back("127.0.0.1:" + std::to_string(ports[static_cast<size_t>(i)]));
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    AddKeepalive(args);  // as a real agent's channel to its coordinator
    fleet.channels.push_back(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
    fleet.stubs.push_back(v1::Coordinator::NewStub(fleet.channels.back()));
  }
  fleet.in_flight = std::make_unique<std::atomic<bool>[]>(static_cast<size_t>(o.agents));
  std::string reg_error;
  const int registered = RegisterAll(fleet, o, &reg_error);
  std::printf("  registration: %d/%d agents%s%s\n", registered, o.agents,
              reg_error.empty() ? "" : "; last error: ", reg_error.c_str());

  // Heartbeats all along, spread evenly over the period, from one thread.
  {
    std::lock_guard lock(fleet.tally.mu);
    fleet.tally.measuring = true;
  }
  std::atomic<bool> stop_beats{false};
  std::thread beats([&] {
    const auto period = std::chrono::microseconds(int64_t{o.period_ms} * 1000);
    const auto start = Steady::now();
    for (int64_t k = 0; !stop_beats.load(); ++k) {
      for (int i = 0; i < o.agents && !stop_beats.load(); ++i) {
        std::this_thread::sleep_until(start + k * period + period * i / o.agents);
        if (fleet.in_flight[static_cast<size_t>(i)].exchange(true)) continue;
        SendBeat(fleet, i);
      }
    }
  });

  grpc::ChannelArguments control_args;
  control_args.SetMaxReceiveMessageSize(-1);  // ListWindows of a whole campaign
  auto control = v1::Coordinator::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), control_args));
  auto deadline = [](grpc::ClientContext& ctx, int s) {
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(s));
  };
  const uint64_t rss_start = ProcessRssKb(child);
  uint64_t rss_max = rss_start;
  const double self_cpu0 = ProcessCpuS(getpid());
  const double coord_cpu0 = ProcessCpuS(child);
  const auto t0 = Steady::now();

  v1::SubmitCampaignRequest submit;
  submit.set_spec_toml(CampaignToml(o, windows));
  submit.set_source("fleet-bench.toml");
  v1::SubmitCampaignReply submitted;
  grpc::Status st;
  {
    grpc::ClientContext ctx;
    deadline(ctx, 120);
    st = control->SubmitCampaign(&ctx, submit, &submitted);
  }
  int rc = 0;
  std::string state = "not submitted";
  int finished = 0;
  if (!st.ok()) {
    std::printf("  SubmitCampaign failed: %s\n", st.error_message().c_str());
    rc = 1;
  } else {
    std::printf("  campaign %s: %d windows planned on each pair, submitted in %.2f s\n",
                submitted.name().c_str(), submitted.total_windows(),
                std::chrono::duration<double>(Steady::now() - t0).count());
    const auto end = t0 + Seconds(o.minutes * 60);
    bool cancelled = false;
    for (;;) {
      std::this_thread::sleep_until(std::min(end, Steady::now() + Seconds(o.sample_s)));
      rss_max = std::max(rss_max, ProcessRssKb(child));
      grpc::ClientContext ctx;
      deadline(ctx, 30);
      v1::ListCampaignsReply campaigns;
      if (control->ListCampaigns(&ctx, v1::ListCampaignsRequest{}, &campaigns).ok()) {
        for (const auto& c : campaigns.campaigns()) {
          if (c.name() != submitted.name()) continue;
          state = c.state();
          finished = c.finished_windows();
        }
      }
      const double elapsed = std::chrono::duration<double>(Steady::now() - t0).count();
      std::printf("  %6.0f s: %s, %d windows finished, coordinator CPU %.1f%% so far, %s\n",
                  elapsed, state.c_str(), finished,
                  100.0 * (ProcessCpuS(child) - coord_cpu0) / elapsed,
                  ProcessMemory(child).c_str());
      std::fflush(stdout);
      if (state == "done" || state == "failed" || state == "cancelled") break;
      if (!cancelled && Steady::now() >= end) {
        grpc::ClientContext cctx;
        deadline(cctx, 30);
        v1::CancelCampaignRequest cancel;
        cancel.set_name(submitted.name());
        v1::CancelCampaignReply cancel_reply;
        grpc::Status cs = control->CancelCampaign(&cctx, cancel, &cancel_reply);
        std::printf("  --minutes elapsed: CancelCampaign %s\n",
                    cs.ok() ? "ok" : cs.error_message().c_str());
        cancelled = true;
        if (!cs.ok()) break;
      }
      if (cancelled && Steady::now() >= end + Seconds(o.window_s + 60)) break;
    }
  }
  const auto t1 = Steady::now();
  const double coord_cpu1 = ProcessCpuS(child), self_cpu1 = ProcessCpuS(getpid());
  const uint64_t rss_end = ProcessRssKb(child);
  rss_max = std::max(rss_max, rss_end);
  const double wall = std::chrono::duration<double>(t1 - t0).count();

  // The verdicts, read after the measured interval.
  uint64_t valid = 0, invalid = 0, failed = 0, other = 0;
  std::map<std::string, std::pair<uint64_t, std::string>> reasons;  // kind: count, the first
  {
    grpc::ClientContext ctx;
    deadline(ctx, 120);
    v1::ListWindowsRequest req;
    req.set_campaign(submitted.name());
    v1::ListWindowsReply reply;
    grpc::Status ls = control->ListWindows(&ctx, req, &reply);
    if (!ls.ok()) {
      std::printf("  ListWindows failed: %s\n", ls.error_message().c_str());
    }
    for (const auto& w : reply.windows()) {
      if (w.verdict() == "valid") {
        ++valid;
      } else if (w.verdict() == "invalid") {
        ++invalid;
      } else if (w.verdict() == "failed") {
        ++failed;
      } else {
        ++other;
      }
      for (const auto& r : w.reasons()) {
        auto& [count, example] = reasons[r.substr(0, r.find(':'))];
        if (count++ == 0) example = w.ended_at() + " " + r;
      }
    }
  }
  stop_beats.store(true);
  beats.join();
  while (fleet.outstanding.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const int coordinator_status = stop_coordinator();
  agent_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  const uint64_t db = FileBytes(dir + "/fleet.db"), wal = FileBytes(dir + "/fleet.db-wal"),
                 shm = FileBytes(dir + "/fleet.db-shm");

  const uint64_t done = valid + invalid + failed;
  const double hours = wall / 3600;
  const double coord_cpu = coord_cpu1 - coord_cpu0;
  std::printf("results (%u logical cores, %d pairs, %d agents, windows of %.1f s measured):\n",
              cores, o.pairs, o.agents, o.window_s);
  std::printf("  campaign: %s after %.1f minutes\n", state.c_str(), wall / 60);
  std::printf(
      "  windows: %llu finished (%llu valid, %llu invalid, %llu failed; %llu other), %.0f "
      "windows per hour\n",
      static_cast<unsigned long long>(done), static_cast<unsigned long long>(valid),
      static_cast<unsigned long long>(invalid), static_cast<unsigned long long>(failed),
      static_cast<unsigned long long>(other), static_cast<double>(done) / hours);
  for (const auto& [reason, seen] : reasons) {
    std::printf("    reason %s: %llu (first: %s)\n", reason.c_str(),
                static_cast<unsigned long long>(seen.first), seen.second.c_str());
  }
  std::printf(
      "  coordinator CPU: %.2f%% of one core (%.1f s user+sys over %.1f s), %.2f ms per "
      "window\n",
      100.0 * coord_cpu / wall, coord_cpu, wall,
      done ? 1000.0 * coord_cpu / static_cast<double>(done) : 0.0);
  std::printf(
      "  coordinator RSS: %.1f MB at start, %.1f MB max, %.1f MB at end (sampled every "
      "%.0f s)\n",
      Mb(rss_start), Mb(rss_max), Mb(rss_end), o.sample_s);
  std::printf(
      "  store after a clean stop (exit status %d): %.2f MB (db %llu, wal %llu, shm %llu "
      "bytes), %.0f bytes per window\n",
      WIFEXITED(coordinator_status) ? WEXITSTATUS(coordinator_status) : -1,
      static_cast<double>(db + wal) / 1048576.0, static_cast<unsigned long long>(db),
      static_cast<unsigned long long>(wal), static_cast<unsigned long long>(shm),
      done ? static_cast<double>(db + wal) / static_cast<double>(done) : 0.0);
  {
    std::lock_guard lock(fleet.tally.mu);
    const Tally& t = fleet.tally;
    std::printf(
        "  heartbeats: %llu ok, %llu failed, %llu unknown; latency p50 %.3f ms, p99 %.3f "
        "ms, max %.3f ms\n",
        static_cast<unsigned long long>(t.ok), static_cast<unsigned long long>(t.failed),
        static_cast<unsigned long long>(t.unknown), Ms(t.latency_us.ValueAtPercentile(50)),
        Ms(t.latency_us.ValueAtPercentile(99)), Ms(t.latency_us.Max()));
  }
  std::printf("  simulator CPU: %.2f%% of one core (%.1f s user+sys)\n",
              100.0 * (self_cpu1 - self_cpu0) / wall, self_cpu1 - self_cpu0);
  std::printf("  load average %s (at end)\n", LoadAverage().c_str());
  if (!o.keep) std::filesystem::remove_all(dir);
  return rc;
}

int Run(const Options& o) {
  const unsigned cores = std::thread::hardware_concurrency();
  std::printf(
      "coordinator_fleet_bench: %d agents, a heartbeat every %d ms each, %.1f s measured "
      "after %.1f s of warm-up\n",
      o.agents, o.period_ms, o.seconds, o.warmup_s);
  std::printf("  machine: %u logical cores, load average %s (at start)\n", cores,
              LoadAverage().c_str());

  std::string dir, address = o.coordinator;
  pid_t child = 0, coordinator_pid = o.coordinator_pid;
  if (address.empty()) {
    char tmpl[] = "/tmp/benchlab-fleet-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
    dir = tmpl;
    if (o.tls) {
      // The fleet's CA, the coordinator's certificate for the address the agents dial, and one
      // agent certificate per simulated agent.
      const auto issued = Steady::now();
      Status st = InitCa(dir + "/ca").status();
      if (st.ok()) {
        st = IssueCertificate(dir + "/ca", {"coordinator", Role::kCoordinator, {"127.0.0.1"}, 2})
                 .status();
      }
      if (st.ok()) st = IssueCertificate(dir + "/ca", {"watcher", Role::kViewer, {}, 2}).status();
      for (int i = 0; st.ok() && i < o.agents; ++i) {
        st = IssueCertificate(dir + "/ca", {AgentRequest(o, i).name(), Role::kAgent, {}, 2})
                 .status();
      }
      if (!st.ok()) {
        std::fprintf(stderr, "cannot make the fleet's certificates: %s\n", st.message().c_str());
        return 1;
      }
      std::printf("  tls: a CA and %d certificates in %.1f s\n", o.agents + 1,
                  std::chrono::duration<double>(Steady::now() - issued).count());
    }
    child = coordinator_pid = SpawnCoordinator(o, dir);
    const std::string port = WaitForPort(dir + "/port", child);
    if (port.empty()) {
      std::fprintf(stderr, "the coordinator (%s) did not start; see %s/coordinator.log\n",
                   o.benchlab.c_str(), dir.c_str());
      return 1;
    }
    address = "127.0.0.1:" + port;
    std::printf("  coordinator: %s coordinator (child pid %d) on %s, database %s/fleet.db\n",
                o.benchlab.c_str(), child, address.c_str(), dir.c_str());
  } else {
    std::printf("  coordinator: %s (pid %s)\n", address.c_str(),
                coordinator_pid ? std::to_string(coordinator_pid).c_str() : "not given");
  }

  Fleet fleet;
  const int channels = o.channels > 0 ? std::min(o.channels, o.agents) : o.agents;
  for (int c = 0; c < channels; ++c) {
    grpc::ChannelArguments args;
    // A channel of its own per agent means a TCP connection of its own, as real agents have;
    // without this, channels with equal arguments share one connection.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto credentials = CredentialsOf(o, dir, AgentRequest(o, c).name());
    if (!credentials) return 1;
    fleet.channels.push_back(grpc::CreateCustomChannel(address, credentials, args));
    fleet.stubs.push_back(v1::Coordinator::NewStub(fleet.channels.back()));
  }
  std::printf("  simulator: %d channels (%s), %s, callback API, one pacing thread\n", channels,
              channels == o.agents ? "one TCP connection per agent" : "shared by the agents",
              o.tls ? "mutual TLS, a certificate per agent" : "plaintext");
  fleet.in_flight = std::make_unique<std::atomic<bool>[]>(static_cast<size_t>(o.agents));

  const auto reg_start = Steady::now();
  std::string reg_error;
  const int registered = RegisterAll(fleet, o, &reg_error);
  const double reg_s = std::chrono::duration<double>(Steady::now() - reg_start).count();
  std::printf("  registration: %d/%d agents in %.2f s%s%s\n", registered, o.agents, reg_s,
              reg_error.empty() ? "" : "; last error: ", reg_error.c_str());

  // Agent i beats at start + i*period/N + k*period: evenly spread, as independent agents are.
  const auto period = std::chrono::microseconds(int64_t{o.period_ms} * 1000);
  const auto start = Steady::now();
  const auto measure_start = start + std::chrono::duration_cast<Steady::duration>(
                                         std::chrono::duration<double>(o.warmup_s));
  const auto measure_end = measure_start + std::chrono::duration_cast<Steady::duration>(
                                               std::chrono::duration<double>(o.seconds));
  double coord_cpu0 = -1, self_cpu0 = -1, coord_cpu1 = -1, self_cpu1 = -1;
  Steady::time_point t0, t1;
  bool measuring = false;
  uint64_t skipped = 0, sent = 0;
  for (int64_t k = 0;; ++k) {
    const auto round = start + k * period;
    if (round >= measure_end) break;
    for (int i = 0; i < o.agents; ++i) {
      const auto due = round + period * i / o.agents;
      std::this_thread::sleep_until(due);
      const auto now = Steady::now();
      if (!measuring && now >= measure_start) {
        measuring = true;
        std::lock_guard lock(fleet.tally.mu);
        fleet.tally.measuring = true;
        t0 = now;
        coord_cpu0 = coordinator_pid ? ProcessCpuS(coordinator_pid) : -1;
        self_cpu0 = ProcessCpuS(getpid());
      }
      if (now >= measure_end) break;
      if (fleet.in_flight[static_cast<size_t>(i)].exchange(true)) {
        if (measuring) ++skipped;  // the previous beat has not come back yet
        continue;
      }
      if (measuring) ++sent;
      SendBeat(fleet, i);
    }
  }
  std::this_thread::sleep_until(measure_end);
  {
    std::lock_guard lock(fleet.tally.mu);
    t1 = Steady::now();
    coord_cpu1 = coordinator_pid ? ProcessCpuS(coordinator_pid) : -1;
    self_cpu1 = ProcessCpuS(getpid());
    fleet.tally.measuring = false;
  }
  const std::string coord_memory = coordinator_pid ? ProcessMemory(coordinator_pid) : "";
  while (fleet.outstanding.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  const double wall = std::chrono::duration<double>(t1 - t0).count();
  const Tally& t = fleet.tally;
  if (coord_cpu0 >= 0 && coord_cpu1 >= 0) {
    std::printf("  coordinator CPU: %.2f%% of one core (%.3f s user+sys over %.2f s), %s\n",
                100.0 * (coord_cpu1 - coord_cpu0) / wall, coord_cpu1 - coord_cpu0, wall,
                coord_memory.c_str());
  } else {
    std::printf("  coordinator CPU: not measured (no pid)\n");
  }
  std::printf(
      "  heartbeats: %.1f/s delivered (%llu ok of %llu sent in %.2f s; expected %.1f/s), "
      "%llu failed, %llu unknown, %llu skipped (previous beat still in flight)\n",
      static_cast<double>(t.ok) / wall, static_cast<unsigned long long>(t.ok),
      static_cast<unsigned long long>(sent), wall, o.agents * 1000.0 / o.period_ms,
      static_cast<unsigned long long>(t.failed), static_cast<unsigned long long>(t.unknown),
      static_cast<unsigned long long>(skipped));
  if (!t.last_error.empty()) std::printf("    last error: %s\n", t.last_error.c_str());
  std::printf("  heartbeat latency (call to reply): p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
              Ms(t.latency_us.ValueAtPercentile(50)), Ms(t.latency_us.ValueAtPercentile(99)),
              Ms(t.latency_us.Max()));
  std::printf("  simulator CPU: %.2f%% of one core (%.3f s user+sys)\n",
              100.0 * (self_cpu1 - self_cpu0) / wall, self_cpu1 - self_cpu0);

  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ListAgentsReply agents;
  const auto list_start = Steady::now();
  // A viewer lists the fleet: an agent's certificate may not.
  auto lister =
      o.tls
          ? v1::Coordinator::NewStub(grpc::CreateChannel(address, CredentialsOf(o, dir, "watcher")))
          : nullptr;
  grpc::Status listed =
      (lister ? *lister : fleet.StubOf(0)).ListAgents(&ctx, v1::ListAgentsRequest{}, &agents);
  const double list_ms =
      std::chrono::duration<double, std::milli>(Steady::now() - list_start).count();
  if (listed.ok()) {
    int ours = 0, ready = 0;
    for (const auto& a : agents.agents()) {
      if (a.name().rfind(o.prefix, 0) != 0) continue;
      ++ours;
      if (a.state() == "ready") ++ready;
    }
    std::printf(
        "  ListAgents: %d of %d agents listed (%d ready; %d agents in all), reply %.1f KB "
        "in %.1f ms\n",
        ours, o.agents, ready, agents.agents_size(),
        static_cast<double>(agents.ByteSizeLong()) / 1024.0, list_ms);
  } else {
    std::printf("  ListAgents: failed: %s\n", listed.error_message().c_str());
  }
  std::printf("  load average %s (at end)\n", LoadAverage().c_str());

  if (child > 0) {
    kill(child, SIGTERM);
    waitpid(child, nullptr, 0);
    if (!o.keep) std::filesystem::remove_all(dir);
  }
  return 0;
}

}  // namespace
}  // namespace benchlab

int main(int argc, char** argv) {
  benchlab::Options o;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  o.benchlab = ec ? "build/bin/benchlab" : (self.parent_path() / "benchlab").string();
  CLI::App app{"What N simulated agents heartbeating over real gRPC cost the coordinator."};
  app.add_option("--agents", o.agents, "simulated agents")->capture_default_str();
  app.add_option("--period-ms", o.period_ms, "heartbeat period of each agent")
      ->capture_default_str();
  app.add_option("--seconds", o.seconds, "measured interval")->capture_default_str();
  app.add_option("--warmup-s", o.warmup_s, "heartbeats before measuring")->capture_default_str();
  app.add_option("--channels", o.channels, "gRPC channels shared by the agents (0: one each)")
      ->capture_default_str();
  app.add_option("--benchlab", o.benchlab, "the benchlab binary to start the coordinator from")
      ->capture_default_str();
  app.add_option("--coordinator", o.coordinator, "HOST:PORT of a running coordinator instead");
  app.add_option("--coordinator-pid", o.coordinator_pid, "its pid, to measure its CPU");
  app.add_option("--prefix", o.prefix, "agent name prefix")->capture_default_str();
  app.add_flag("--keep", o.keep, "keep the temporary directory (database, coordinator.log)");
  app.add_flag("--tls", o.tls, "mutual TLS with a certificate per agent (starts its coordinator)");
  app.add_flag("--campaign", o.campaign,
               "the agents serve fake Agent services and one fleet campaign runs on them");
  app.add_option("--pairs", o.pairs, "--campaign: server/load pairs (2 agents each)")
      ->capture_default_str();
  app.add_option("--minutes", o.minutes, "--campaign: the campaign is cancelled after this")
      ->capture_default_str();
  app.add_option("--window-s", o.window_s, "--campaign: the measured interval of each window")
      ->capture_default_str();
  app.add_option("--sample-s", o.sample_s, "--campaign: coordinator CPU and RSS sampled this often")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (o.campaign) {
    if (o.tls || !o.coordinator.empty() || o.channels > 0) {
      std::fprintf(stderr,
                   "--campaign starts its own plaintext coordinator: not with --tls, "
                   "--coordinator or --channels\n");
      return 2;
    }
    if (o.pairs < 1 || o.minutes <= 0 || o.window_s < 0.001 || o.sample_s <= 0 || o.period_ms < 1) {
      std::fprintf(stderr, "--pairs, --minutes, --window-s and --sample-s must be positive\n");
      return 2;
    }
    // A real agent beats three times per lease (5 s) unless --period-ms says otherwise.
    if (app.count("--period-ms") == 0) o.period_ms = 1667;
    return benchlab::RunCampaign(o);
  }
  if (o.tls && (!o.coordinator.empty() || o.channels > 0)) {
    std::fprintf(stderr,
                 "--tls starts its own coordinator and gives each agent its channel: "
                 "not with --coordinator or --channels\n");
    return 2;
  }
  if (o.agents < 1 || o.period_ms < 1 || o.seconds <= 0 || o.warmup_s < 0) {
    std::fprintf(stderr, "--agents, --period-ms and --seconds must be positive\n");
    return 2;
  }
  return benchlab::Run(o);
}
