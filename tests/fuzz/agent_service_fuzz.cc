// libFuzzer target: the agent's gRPC service (agent/server/agent_service.h) called in process,
// as any caller that reaches an agent's port could call it. An input is a sequence of calls
// (tests/fuzz/service_input.h), each one request message of:
//   0 DescribeHost  1 StartTarget  2 StopTarget  3 CheckConformance  4 RunLoad  5 Mark
//   6 CheckHost     7 Acknowledge  8 EndCampaign
//   9 (not an RPC) the loopback sink's response from now on      10 ListCommits
// Unary RPCs are called directly with a default ServerContext; RunLoad, a server stream, goes
// through an in-process gRPC channel (no port) to the same service. Every input gets a fresh
// AgentService, whose targets are stopped and whose run directory and spool are emptied after it.
//
// Nothing an input asks for can leave the fuzz process's reach: every TCP connection lands on the
// loopback sink (tests/fuzz/loopback_sink.h) or fails; the catalogue holds two targets, "noop",
// which runs `sleep 30` (readiness is answered by the sink), and "with-db", the same with a side
// service "db" (`sleep 30` too, ready when `true` exits 0) started for its campaign; wrk and h2load
// are scripts that print saved output (tests/unit/agent/testdata); writes under /proc and /sys
// fail, so no cgroup is made. An input starts at most two targets, and RunLoad's durations,
// connections, threads and rate are cut to bounds that keep a call under a second (ClampLoad).
// CheckHost's self-test is refused its CPU pinning, so it stops there (FuzzEnv). A third target,
// "built", has a build recipe whose source is a repository of four commits made at start-up
// (their subjects hold a tab, a backslash, an escape sequence and 300 bytes of two-byte
// characters), so that ListCommits reaches git; no build cache is set, so nothing is built.
//
// BENCHLAB_FUZZ_VERBOSE=1 in the environment prints each call and what it returned, which is how
// to see what an input does: `BENCHLAB_FUZZ_VERBOSE=1 agent_service_fuzz INPUT`.
//
// Checked beyond the sanitizers, as agent.proto and docs/agent.md state the agent's contract:
// nothing is pinned to CPUs outside the agent's allowed CPUs; a StartTarget that succeeds had a
// well-formed window token and returns a handle; StopTarget and Mark of a target with another
// window's token fail; RunLoad refuses a port outside 1..65535; StartTarget and EndCampaign refuse
// a campaign that is not 1 to 128 characters of [A-Za-z0-9._:#-] (empty allowed to StartTarget),
// and after EndCampaign of the campaign the input's last target was started for, that target's
// next StartTarget starts its service afresh. A StopTarget or Mark whose handle
// (or window token) is empty gets the handle (and token) of the input's last started target, so
// that inputs reach a running target. A ListCommits that succeeds lists 1 to max_commits commits
// of 40 hex digits, oldest first from the good end, whose subjects the coordinator takes
// (IsListedSubject, common/git_rev.h); and no call moves the repository's HEAD or its refs.
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/grpcpp.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "agent/server/agent_service.h"
#include "agent/spool.h"
#include "common/git_rev.h"
#include "common/parse.h"
#include "common/sysenv.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/loopback_sink.h"
#include "tests/fuzz/scratch_dir.h"
#include "tests/fuzz/service_input.h"
#include "tests/fuzz/stream_call.h"

namespace {

namespace fs = std::filesystem;
using namespace benchlab;

constexpr size_t kMaxCalls = 8;
constexpr int kMaxStartsPerInput = 2;
enum Rpc {
  kDescribeHost,
  kStartTarget,
  kStopTarget,
  kCheckConformance,
  kRunLoad,
  kMark,
  kCheckHost,
  kAcknowledge,
  kEndCampaign,
  kSinkResponse,
  kListCommits,
  kRpcCount
};
constexpr const char* kRpcNames[kRpcCount] = {
    "DescribeHost", "StartTarget", "StopTarget",  "CheckConformance", "RunLoad",    "Mark",
    "CheckHost",    "Acknowledge", "EndCampaign", "SinkResponse",     "ListCommits"};

// The real machine for reads and signals; writes under /proc and /sys are refused (no cgroups);
// an affinity outside the agent's allowed CPUs fails the run, any other is refused.
class FuzzEnv final : public SysEnv {
 public:
  FuzzEnv(SysEnv& real, std::vector<int> allowed) : real_(real), allowed_(std::move(allowed)) {}
  Result<std::string> ReadFile(const std::string& path) override { return real_.ReadFile(path); }
  Result<std::vector<std::string>> ListDir(const std::string& path) override {
    return real_.ListDir(path);
  }
  bool Exists(const std::string& path) override { return real_.Exists(path); }
  Status WriteFile(const std::string& path, const std::string& content) override {
    if (System(path)) return Refused(path);
    return real_.WriteFile(path, content);
  }
  Status MakeDir(const std::string& path) override {
    if (System(path)) return Refused(path);
    return real_.MakeDir(path);
  }
  Status RemoveDir(const std::string& path) override {
    if (System(path)) return Refused(path);
    return real_.RemoveDir(path);
  }
  std::string RealPath(const std::string& path) override { return real_.RealPath(path); }
  long ClockTicksPerSecond() override { return real_.ClockTicksPerSecond(); }
  long PageSizeBytes() override { return real_.PageSizeBytes(); }
  // Checked, then refused: its one caller is CheckHost's self-test (agent/selftest.h), whose
  // fixed calibration work takes 0.6 s under the sanitizers and depends on no input.
  Status SetAffinity(pid_t, const std::vector<int>& cpus) override {
    for (int cpu : cpus) {
      FUZZ_CHECK(std::find(allowed_.begin(), allowed_.end(), cpu) != allowed_.end(),
                 "affinity " + FormatCpuList(cpus) + " outside the agent's allowed CPUs " +
                     FormatCpuList(allowed_));
    }
    return Status::Unavailable("affinity: not set by the fuzz target");
  }
  Result<std::vector<int>> GetAffinity(pid_t pid) override { return real_.GetAffinity(pid); }
  Status Signal(pid_t pid, int signal) override { return real_.Signal(pid, signal); }

 private:
  static bool System(const std::string& path) {
    return path.starts_with("/proc/") || path.starts_with("/sys/");
  }
  static Status Refused(const std::string& path) {
    return Status::Unavailable(path + ": not written by the fuzz target");
  }
  SysEnv& real_;
  const std::vector<int> allowed_;
};

// Bounds on RunLoad so that one call takes well under a second. Values at or below zero pass
// unchanged (the agent's own checks see them).
void ClampLoad(v1::RunLoadRequest& req) {
  req.set_warmup_ms(std::min<int64_t>(req.warmup_ms(), 10));
  req.set_duration_ms(std::min<int64_t>(req.duration_ms(), 20));
  req.set_timeout_ms(std::min<int64_t>(req.timeout_ms(), 100));
  req.set_connections(std::min(req.connections(), 4));
  req.set_threads(std::min(req.threads(), 2));
  req.set_max_conns(std::min(req.max_conns(), 4));
  if (req.rate() > 2000) req.set_rate(2000);
}

void WriteScript(const fs::path& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(path, fs::perms::owner_all);
}

// Everything that lives as long as the process: directories, fake tools, the sink, and an
// in-process gRPC server whose RunLoad calls the current input's service.
struct Harness {
  // The in-process server's service: RunLoad on the current input's service.
  class Forwarder final : public v1::Agent::Service {
   public:
    benchlab::fuzz::StreamCall<AgentService> call;
    grpc::Status RunLoad(grpc::ServerContext* ctx, const v1::RunLoadRequest* req,
                         grpc::ServerWriter<v1::RunLoadEvent>* writer) override {
      return call.Run(*ctx, [&](AgentService& s) { return s.RunLoad(ctx, req, writer); });
    }
  };

  fs::path root, run_root, spool_dir, repo;
  std::string repo_refs;  // `git show-ref --head` of repo as made
  std::vector<int> allowed_cpus;
  std::unique_ptr<FuzzEnv> env;
  std::vector<TargetDef> catalogue;
  std::vector<ServiceDef> services;
  Forwarder forwarder;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<v1::Agent::Stub> stub;

  Harness() {
    spdlog::set_level(spdlog::level::off);
    google::protobuf::SetLogHandler(nullptr);  // not a word per unparsable message
    benchlab::fuzz::StartLoopbackSink();
    root = benchlab::fuzz::MakeScratchDir("agent");
    run_root = root / "run";
    spool_dir = root / "spool";
    fs::create_directories(run_root);
    fs::create_directories(root / "bin");
    const std::string testdata = BENCHLAB_SOURCE_DIR "/tests/unit/agent/testdata/";
    WriteScript(root / "bin" / "wrk", "exec cat '" + testdata + "wrk-4.1-latency.txt'");
    WriteScript(root / "bin" / "h2load", "exec cat '" + testdata + "h2load-1.52.txt'");
    const char* path = ::getenv("PATH");
    ::setenv("PATH", ((root / "bin").string() + ":" + (path ? path : "/usr/bin:/bin")).c_str(), 1);

    // The agent may use the first CPU this process may run on, and no other.
    cpu_set_t set;
    CPU_ZERO(&set);
    FUZZ_CHECK(::sched_getaffinity(0, sizeof(set), &set) == 0, "sched_getaffinity");
    for (int cpu = 0; cpu < CPU_SETSIZE && allowed_cpus.empty(); ++cpu) {
      if (CPU_ISSET(cpu, &set)) allowed_cpus.push_back(cpu);
    }
    env = std::make_unique<FuzzEnv>(RealSysEnv(), allowed_cpus);

    TargetDef noop;
    noop.name = "noop";
    noop.command = {"sleep", "30"};
    noop.ready_timeout = std::chrono::milliseconds(1000);
    noop.campaign_dir = root.string();
    catalogue.push_back(noop);
    TargetDef with_db = noop;
    with_db.name = "with-db";
    with_db.services = {"db"};
    catalogue.push_back(with_db);
    ServiceDef db;
    db.name = "db";
    db.command = {"sleep", "30"};
    db.ready_command = {"true"};
    db.ready_timeout = std::chrono::milliseconds(1000);
    db.campaign_dir = root.string();
    services.push_back(db);

    repo = root / "src";
    MakeRepository();
    TargetDef built = noop;
    built.name = "built";
    built.recipe.source = repo.string();
    built.recipe.build = {{"true"}};
    catalogue.push_back(built);

    grpc::ServerBuilder builder;
    builder.RegisterService(&forwarder);
    server = builder.BuildAndStart();
    FUZZ_CHECK(server != nullptr, "in-process gRPC server");
    stub = v1::Agent::NewStub(server->InProcessChannel(grpc::ChannelArguments()));
  }

  // Four commits, tagged v1 to v4, whose subjects are authors' text at its worst.
  void MakeRepository() {
    fs::create_directories(repo);
    auto git = [&](std::vector<std::string> args) {
      args.insert(args.begin(), {"-c", "user.name=fuzz", "-c", "user.email=fuzz@example.org"});
      auto ran = RunGit(repo.string(), args);
      FUZZ_CHECK(ran.ok() && ran->ok(),
                 "git " + args[4] + ": " + (ran.ok() ? ran->output : ran.status().ToString()));
    };
    std::string accents = "x";
    for (int i = 0; i < 150; ++i) accents += "\u00e9";
    const std::vector<std::string> subjects = {"first", "tab\there back\\slash",
                                               "escape \x1b[2J here", accents};
    git({"init", "-q"});
    for (size_t i = 0; i < subjects.size(); ++i) {
      git({"commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", subjects[i]});
      git({"tag", "v" + std::to_string(i + 1)});
    }
    repo_refs = Refs();
  }

  std::string Refs() {
    auto refs = RunGit(repo.string(), {"show-ref", "--head"});
    FUZZ_CHECK(refs.ok() && refs->ok(), "git show-ref --head");
    return refs->output;
  }

  std::unique_ptr<AgentService> NewService() {
    AgentIdentity identity;
    identity.name = "fuzz-agent";
    identity.roles = {"server", "load"};
    identity.run_root = run_root.string();
    identity.allowed_cpus = allowed_cpus;
    identity.cookie = "benchlab-fuzz";
    identity.sample_period = std::chrono::milliseconds(10);
    auto service = std::make_unique<AgentService>(*env, identity, catalogue, services);
    auto spool = Spool::Open(spool_dir.string());
    FUZZ_CHECK(spool.ok(), spool.status().ToString());
    service->SetSpool(std::move(spool).value());
    return service;
  }

  // What an input left behind: run directories and spooled results.
  void Clean() {
    for (const fs::path& dir : {run_root, spool_dir}) {
      std::error_code ec;
      for (const auto& entry : fs::directory_iterator(dir, ec)) fs::remove_all(entry.path(), ec);
    }
    benchlab::fuzz::SetSinkResponse(benchlab::fuzz::DefaultSinkResponse());
  }

  grpc::Status RunLoad(AgentService& service, const v1::RunLoadRequest& req) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    forwarder.call.Begin(&service, ctx);
    auto reader = stub->RunLoad(&ctx, req);
    v1::RunLoadEvent event;
    while (reader->Read(&event)) {
    }
    grpc::Status status = reader->Finish();
    forwarder.call.End([] {});
    return status;
  }
};

// A window token as agent.proto defines it: 16 to 128 characters of [A-Za-z0-9._:-].
bool IsWindowToken(const std::string& token) {
  return token.size() >= 16 && token.size() <= 128 &&
         std::all_of(token.begin(), token.end(), [](unsigned char c) {
           return std::isalnum(c) || c == '.' || c == '_' || c == ':' || c == '-';
         });
}

// A campaign key as agent.proto defines it: 1 to 128 characters of [A-Za-z0-9._:#-].
bool IsCampaignKey(const std::string& key) {
  return !key.empty() && key.size() <= 128 &&
         std::all_of(key.begin(), key.end(), [](unsigned char c) {
           return std::isalnum(c) || c == '.' || c == '_' || c == ':' || c == '#' || c == '-';
         });
}

using benchlab::fuzz::NotParsed;
using benchlab::fuzz::Parse;
using benchlab::fuzz::Skipped;

// The current input: its service, and the targets it started.
struct Session {
  explicit Session(Harness& harness) : h(harness), service(harness.NewService()) {}

  Harness& h;
  std::unique_ptr<AgentService> service;
  std::string last_handle, last_window;
  std::string last_campaign;    // of the last started target that has a side service
  bool campaign_ended = false;  // EndCampaign of last_campaign succeeded since its start
  int starts = 0;
  bool listed = false;  // ListCommits was called

  // StopTarget and Mark name the last started target unless the input names one.
  template <typename Request>
  void NameTarget(Request& req) const {
    if (req.handle().empty()) req.set_handle(last_handle);
    if (req.window().empty()) req.set_window(last_window);
  }

  // A StopTarget or Mark of the last started target with another window's token must fail.
  template <typename Request>
  grpc::Status RefusedToOthers(const Request& req, grpc::Status status) const {
    const bool foreign =
        !last_handle.empty() && req.handle() == last_handle && req.window() != last_window;
    FUZZ_CHECK(!foreign || !status.ok(), "target " + last_handle + " of window \"" + last_window +
                                             "\" obeyed window \"" + req.window() + "\"");
    return status;
  }

  void Call(const benchlab::fuzz::Call& call) {
    const int rpc = call.selector % kRpcCount;
    benchlab::fuzz::Traced(kRpcNames[rpc], [&] { return Dispatch(rpc, call.message); });
  }

  grpc::Status Dispatch(int rpc, std::string_view message) {
    grpc::ServerContext ctx;
    switch (rpc) {
      case kDescribeHost: {
        v1::DescribeHostRequest req;
        v1::DescribeHostReply reply;
        if (!Parse(message, req)) return NotParsed();
        return service->DescribeHost(&ctx, &req, &reply);
      }
      case kStartTarget: {
        v1::StartTargetRequest req;
        v1::StartTargetReply reply;
        if (!Parse(message, req)) return NotParsed();
        if (starts++ >= kMaxStartsPerInput) return Skipped("two targets started already");
        grpc::Status status = service->StartTarget(&ctx, &req, &reply);
        if (status.ok()) {
          FUZZ_CHECK(!reply.handle().empty(), "StartTarget succeeded without a handle");
          FUZZ_CHECK(IsWindowToken(req.window()),
                     "StartTarget accepted the window token \"" + req.window() + "\"");
          FUZZ_CHECK(req.campaign().empty() || IsCampaignKey(req.campaign()),
                     "StartTarget accepted the campaign \"" + req.campaign() + "\"");
          last_handle = reply.handle();
          last_window = req.window();
          if (reply.services_size() > 0) {
            // The service its campaign ended with was stopped, so this start made a new one.
            if (campaign_ended && req.campaign() == last_campaign) {
              FUZZ_CHECK(reply.services(0).started(),
                         "service of ended campaign \"" + last_campaign + "\" served again");
            }
            last_campaign = req.campaign();
            campaign_ended = false;
          }
        }
        return status;
      }
      case kStopTarget: {
        v1::StopTargetRequest req;
        v1::StopTargetReply reply;
        if (!Parse(message, req)) return NotParsed();
        NameTarget(req);
        req.set_grace_ms(std::min(req.grace_ms(), 500));
        return RefusedToOthers(req, service->StopTarget(&ctx, &req, &reply));
      }
      case kCheckConformance: {
        v1::CheckConformanceRequest req;
        v1::CheckConformanceReply reply;
        if (!Parse(message, req)) return NotParsed();
        req.set_timeout_ms(std::min(req.timeout_ms(), 200));
        return service->CheckConformance(&ctx, &req, &reply);
      }
      case kRunLoad: {
        v1::RunLoadRequest req;
        if (!Parse(message, req)) return NotParsed();
        ClampLoad(req);
        grpc::Status status = h.RunLoad(*service, req);
        FUZZ_CHECK(!status.ok() || (req.port() > 0 && req.port() <= 65535),
                   "RunLoad ran against port " + std::to_string(req.port()));
        return status;
      }
      case kMark: {
        v1::MarkRequest req;
        v1::MarkReply reply;
        if (!Parse(message, req)) return NotParsed();
        NameTarget(req);
        return RefusedToOthers(req, service->Mark(&ctx, &req, &reply));
      }
      case kCheckHost: {
        v1::CheckHostRequest req;
        v1::CheckHostReply reply;
        if (!Parse(message, req)) return NotParsed();
        return service->CheckHost(&ctx, &req, &reply);
      }
      case kAcknowledge: {
        v1::AcknowledgeRequest req;
        v1::AcknowledgeReply reply;
        if (!Parse(message, req)) return NotParsed();
        return service->Acknowledge(&ctx, &req, &reply);
      }
      case kEndCampaign: {
        v1::EndCampaignRequest req;
        v1::EndCampaignReply reply;
        if (!Parse(message, req)) return NotParsed();
        grpc::Status status = service->EndCampaign(&ctx, &req, &reply);
        FUZZ_CHECK(!status.ok() || IsCampaignKey(req.campaign()),
                   "EndCampaign accepted the campaign \"" + req.campaign() + "\"");
        if (status.ok() && req.campaign() == last_campaign && reply.services_in_use() == 0) {
          campaign_ended = true;
        }
        return status;
      }
      case kSinkResponse:
        benchlab::fuzz::SetSinkResponse(std::string(message));
        return grpc::Status::OK;
      default: {
        v1::ListCommitsRequest req;
        v1::ListCommitsReply reply;
        if (!Parse(message, req)) return NotParsed();
        grpc::Status status = service->ListCommits(&ctx, &req, &reply);
        listed = true;
        if (status.ok()) CheckListed(req, reply);
        return status;
      }
    }
  }

  static void CheckListed(const v1::ListCommitsRequest& req, const v1::ListCommitsReply& reply) {
    FUZZ_CHECK(reply.commits_size() >= 1 && reply.commits_size() <= req.max_commits(),
               std::to_string(reply.commits_size()) + " commits listed, at most " +
                   std::to_string(req.max_commits()) + " asked for");
    for (const auto& c : reply.commits()) {
      FUZZ_CHECK(IsFullObjectId(c.oid()), "listed commit id \"" + c.oid() + "\"");
      FUZZ_CHECK(IsListedSubject(c.subject()),
                 "listed subject \"" + c.subject() + "\" is one the coordinator refuses");
    }
  }

  void Finish() {
    if (listed) FUZZ_CHECK(h.Refs() == h.repo_refs, "the repository's refs moved");
    service->StopAll();
    service.reset();
    h.Clean();
  }
};

}  // namespace

// A smaller ASan quarantine than the default 256 MB: each input makes and frees a whole service,
// and recycling that memory sooner triples the executions per second. Use-after-free within an
// input is still caught.
extern "C" const char* __asan_default_options() { return "quarantine_size_mb=32"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Harness* harness = new Harness();  // lives until exit: the gRPC server outlives inputs
  Session session(*harness);
  for (const auto& call : benchlab::fuzz::SplitCalls(data, size, kMaxCalls)) session.Call(call);
  session.Finish();
  return 0;
}
