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
// Build and run: make bench-coordinator, or
//   ninja -C build coordinator_fleet_bench benchlab && build/bin/coordinator_fleet_bench
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/proc.h"
#include "benchlab/v1/coordinator.grpc.pb.h"
#include "common/histogram.h"
#include "common/sysenv.h"
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

std::string ProcessMemory(pid_t pid) {
  auto text = RealSysEnv().ReadFile("/proc/" + std::to_string(pid) + "/status");
  if (!text.ok()) return "unavailable";
  auto status = ParseProcStatus(*text);
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
  r.set_address("127.0.0.1:" + std::to_string(20000 + i));  // never called: no campaign runs
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
  CLI11_PARSE(app, argc, argv);
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
