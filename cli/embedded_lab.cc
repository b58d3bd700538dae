// The embedded lab: a coordinator and two agents (server and load) as separate processes on this
// machine, talking gRPC over loopback on ports the kernel picks. `benchlab run`, `run --resume`
// and `rerun --db` use it; every process it starts is stopped whatever happens.
#include "cli/embedded_lab.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "agent/server/agent_config.h"
#include "agent/supervisor.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/signals.h"
#include "common/sysenv.h"
#include "tls/ca.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

std::string SelfExe() {
  std::error_code ec;
  auto path = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "benchlab" : path.string();
}

// What the lab's own daemons inherit: enough to find commands, nothing secret.
std::map<std::string, std::string> DaemonEnv() {
  std::map<std::string, std::string> env;
  for (const char* name : {"PATH", "HOME", "LANG", "TMPDIR"}) {
    if (const char* value = std::getenv(name)) env[name] = value;
  }
  return env;
}

void PrintLogTail(const TargetProcess& process, const std::string& what) {
  std::fprintf(stderr, "last lines of the %s log:\n", what.c_str());
  for (const auto& line : process.LastLogLines(15)) std::fprintf(stderr, "  %s\n", line.c_str());
}

// The embedded lab's processes, stopped in reverse order of start whatever happens.
class Lab {
 public:
  explicit Lab(std::string work_dir) : work_dir_(std::move(work_dir)) {}
  ~Lab() { Stop(); }

  Result<TargetProcess*> Spawn(const std::string& label, std::vector<std::string> argv) {
    SpawnSpec spec;
    spec.argv = std::move(argv);
    spec.argv.push_back("--parent-pid");
    spec.argv.push_back(std::to_string(getpid()));
    spec.cwd = work_dir_;
    spec.env = DaemonEnv();
    spec.log_path = (fs::path(work_dir_) / (label + ".log")).string();
    BENCHLAB_ASSIGN_OR_RETURN(auto process, TargetProcess::Spawn(RealSysEnv(), spec));
    processes_.push_back({label, std::move(process)});
    return processes_.back().second.get();
  }

  // A daemon that died is reported with its log's last lines.
  bool AllAlive() {
    for (auto& [label, process] : processes_) {
      ExitInfo info;
      if (process->Exited(&info)) {
        std::fprintf(stderr, "benchlab: the %s exited (%s)\n", label.c_str(),
                     info.Describe().c_str());
        PrintLogTail(*process, label);
        return false;
      }
    }
    return true;
  }

  void Stop() {
    while (!processes_.empty()) {
      processes_.back().second->Stop(std::chrono::milliseconds(5000));
      processes_.pop_back();
    }
  }

 private:
  std::string work_dir_;
  std::vector<std::pair<std::string, std::unique_ptr<TargetProcess>>> processes_;
};

Result<uint16_t> WaitForPortFile(Lab& lab, const std::string& path) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    int port = 0;
    if (in >> port && port > 0) return static_cast<uint16_t>(port);
    if (!lab.AllAlive()) return Status::Unavailable("the coordinator did not start");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::DeadlineExceeded("the coordinator did not report its port within 15s");
}

Status WaitForAgents(Lab& lab, v1::Coordinator::Stub& stub, size_t count) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    v1::ListAgentsReply reply;
    grpc::ClientContext ctx;
    SetDeadlineSeconds(ctx, 2);
    if (stub.ListAgents(&ctx, v1::ListAgentsRequest(), &reply).ok() &&
        static_cast<size_t>(reply.agents_size()) >= count) {
      return Status::Ok();
    }
    if (!lab.AllAlive()) return Status::Unavailable("an agent did not start");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Status::DeadlineExceeded("the agents did not register within 15s");
}

int LabFailed(const std::string& verb, const std::string& message) {
  std::fprintf(stderr, "benchlab %s: %s\n", verb.c_str(), message.c_str());
  return kExitFailure;
}

// The lab's throw-away CA in DIR (docs/security.md, "Mutual TLS"): the coordinator, the two
// agents (all on 127.0.0.1) and "lab", the operator this process submits and watches as.
Status MakeLabCa(const std::string& dir) {
  // The CA outlives its certificates: a certificate may not end after its CA.
  BENCHLAB_RETURN_IF_ERROR(InitCa(dir, 31).status());
  const std::vector<IssueRequest> issued = {{"coordinator", Role::kCoordinator, {"127.0.0.1"}, 30},
                                            {"server", Role::kAgent, {"127.0.0.1"}, 30},
                                            {"load", Role::kAgent, {"127.0.0.1"}, 30},
                                            {"lab", Role::kOperator, {}, 30}};
  for (const IssueRequest& request : issued) {
    BENCHLAB_RETURN_IF_ERROR(IssueCertificate(dir, request).status());
  }
  return Status::Ok();
}

TlsFiles LabTls(const std::string& dir, const std::string& name) {
  return {dir + "/ca.pem", dir + "/" + name + ".pem", dir + "/" + name + ".key", dir + "/crl.pem"};
}

}  // namespace

int RunOnEmbeddedLab(const LabJob& job) {
  const Campaign& campaign = job.campaign;
  auto fail = [&](const std::string& message) { return LabFailed(job.verb, message); };
  char tmpl[] = "/tmp/benchlab-run-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return fail("cannot create a work directory in /tmp");
  std::string work_dir = tmpl;
  BlockTerminationSignals();
  // The lab, stopped when this returns: every way out of it, early ones included, comes back
  // below to say where the daemons' logs are (or to remove them after a clean run).
  auto run = [&]() -> int {
    int status = 1;
    Lab lab(work_dir);
    std::string exe = SelfExe();
    std::string db = fs::absolute(job.db).string();
    std::string port_file = work_dir + "/coordinator.port";
    // Mutual TLS even on one machine, so the secure path is the one every run takes.
    const std::string ca = work_dir + "/ca";
    if (Status made = MakeLabCa(ca); !made.ok())
      return fail("making the lab's CA: " + made.message());
    const TlsFiles coordinator_tls = LabTls(ca, "coordinator");
    auto coordinator =
        lab.Spawn("coordinator",
                  {exe, "coordinator", "--listen", "127.0.0.1:0", "--db", db, "--port-file",
                   port_file, "--tls-ca", coordinator_tls.ca, "--tls-cert", coordinator_tls.cert,
                   "--tls-key", coordinator_tls.key, "--tls-crl", coordinator_tls.crl,
                   // The lab's run re-measures on labs of its own (cli/remeasure.h).
                   "--no-remeasure"});
    if (!coordinator.ok()) return fail(coordinator.status().message());
    auto port = WaitForPortFile(lab, port_file);
    if (!port.ok()) return fail(port.status().message());
    std::string address = "127.0.0.1:" + std::to_string(*port);

    for (const char* role : {"server", "load"}) {
      AgentConfig config;
      config.name = std::string(role);
      config.roles = {role};
      config.coordinator = address;
      // Below the lab's own mkdtemp directory (0700, unpredictable name), like everything else
      // the lab writes.
      config.state_dir = work_dir + "/" + role;
      config.run_root = config.state_dir + "/run";
      config.spool_dir = config.state_dir + "/spool";
      if (std::string(role) == "server") {
        auto catalogue = EmbeddedCatalogue(campaign);
        if (!catalogue.ok()) return fail(catalogue.status().message());
        config.catalogue = std::move(catalogue).value();
        config.services = campaign.services;
        if (!job.build_cache_dir.empty()) config.build_cache_dir = job.build_cache_dir;
      }
      config.tls = LabTls(ca, role);
      std::string path = work_dir + "/agent-" + role + ".toml";
      Status written = WriteAgentConfig(config, path);
      if (!written.ok()) return fail(written.message());
      auto agent = lab.Spawn(std::string(role) + " agent", {exe, "agent", "--config", path});
      if (!agent.ok()) return fail(agent.status().message());
    }
    auto stub = ConnectCoordinator(address, LabTls(ca, "lab"));
    if (!stub.ok()) return fail(stub.status().message());
    Status agents = WaitForAgents(lab, **stub, 2);
    if (!agents.ok()) return fail(agents.message());

    int total_windows = job.total_windows;
    if (!job.submit_text.empty()) {
      v1::SubmitCampaignRequest req;
      req.set_spec_toml(job.submit_text);
      req.set_source(campaign.source_name);
      req.set_campaign_dir(campaign.campaign_dir);
      req.set_gates_mode(job.gates_mode);
      req.set_profile(job.profile);
      v1::SubmitCampaignReply reply;
      grpc::ClientContext ctx;
      SetDeadlineSeconds(ctx, 10);
      grpc::Status submitted = (*stub)->SubmitCampaign(&ctx, req, &reply);
      if (!submitted.ok()) return fail(submitted.error_message());
      total_windows = reply.total_windows();
    }
    std::printf("campaign %s: %s, server and load agents on this machine, results in %s\n",
                campaign.name.c_str(), PlannedWindows(campaign, total_windows).c_str(),
                job.db.c_str());
    std::fflush(stdout);

    WatchCanceller canceller;
    {
      SignalWatcher watcher([&](int) { canceller.Cancel(); });
      auto printer = MakeStdoutProgress(job.progress, total_windows, campaign.adaptive);
      auto outcome = WatchCampaign(**stub, campaign.name, canceller, *printer);
      if (canceller.cancelled()) {
        std::fprintf(stderr,
                     "benchlab %s: interrupted; stopping the lab (windows stored so far "
                     "are kept in %s)\n",
                     job.verb.c_str(), job.db.c_str());
        status = kExitInterrupted;
      } else if (!outcome.ok()) {
        lab.AllAlive();
        status = fail(outcome.status().message());
      } else {
        status = ReportOutcome(*outcome, campaign.baseline, total_windows, campaign.adaptive,
                               job.fail_on_invalid);
      }
    }
    lab.Stop();
    return status;
  };
  int status = run();
  if (!job.keep_work_dir && (status == kExitOk || status == kExitInvalid)) {
    std::error_code ec;
    fs::remove_all(work_dir, ec);
  } else {
    std::fprintf(stderr, "benchlab %s: logs kept in %s\n", job.verb.c_str(), work_dir.c_str());
  }
  return status;
}

}  // namespace benchlab
