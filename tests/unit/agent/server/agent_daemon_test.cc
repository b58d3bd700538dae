// AgentDaemon against a stand-in coordinator that records what the agent sends: the spool
// offered in pages under the message limit after registration, the instance proof kept across
// restarts, private directories, and a shutdown that stops load in progress.
#include "agent/server/agent_daemon.h"

#include <arpa/inet.h>
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "benchlab/v1/coordinator.grpc.pb.h"
#include "rpc/keepalive.h"
#include "tests/sanitizer.h"
#include "tests/unit/agent/server/test_http_server.h"
#include "tests/unit/support/eventually.h"
#include "tests/unit/support/fake_clock.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// gRPC's default limit on a received message, which a page must stay well under.
constexpr size_t kMessageLimit = 4 << 20;
const std::string kWindow = "window-0123456789abcdef";

// Records every call and acknowledges everything offered.
class FakeCoordinator final : public v1::Coordinator::Service {
 public:
  grpc::Status RegisterAgent(grpc::ServerContext*, const v1::RegisterAgentRequest* req,
                             v1::RegisterAgentReply* reply) override {
    std::lock_guard lock(mu);
    if (cut) return Cut();
    proofs.insert(req->instance_proof());
    ++registrations;
    reply->set_lease_ms(600);
    return grpc::Status::OK;
  }
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest* req,
                         v1::HeartbeatReply* reply) override {
    std::lock_guard lock(mu);
    if (cut) return Cut();
    ++heartbeats;
    proofs.insert(req->instance_proof());
    reply->set_known(true);
    return grpc::Status::OK;
  }
  grpc::Status OfferResults(grpc::ServerContext*, const v1::OfferResultsRequest* req,
                            v1::OfferResultsReply* reply) override {
    std::lock_guard lock(mu);
    if (cut) return Cut();
    proofs.insert(req->instance_proof());
    page_bytes.push_back(req->ByteSizeLong());
    for (const auto& item : req->spooled()) {
      offered.insert(item.key());
      reply->add_acknowledged(item.key());
    }
    return grpc::Status::OK;
  }

  // While `cut`, every call fails as it does across a partition.
  grpc::Status Cut() {
    ++refused;
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection lost (the test's partition)");
  }

  std::mutex mu;
  bool cut = false;
  int refused = 0;
  int heartbeats = 0;
  int registrations = 0;
  std::set<std::string> proofs;
  std::vector<size_t> page_bytes;
  std::set<std::string> offered;
};

class AgentDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/benchlab-agent-daemon-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&coordinator_);
    // As the real coordinator's server does: the agent's channel pings every 2 s, which a server
    // with gRPC's defaults answers with a too_many_pings GOAWAY and a dropped connection.
    SetServerKeepalive(builder);
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_ != nullptr && port > 0);
    address_ = "127.0.0.1:" + std::to_string(port);
  }
  void TearDown() override {
    server_->Shutdown();
    fs::remove_all(dir_);
  }

  AgentConfig Config() {
    AgentConfig config;
    config.name = "daemon-test";
    config.roles = {"load"};
    config.coordinator = address_;
    config.state_dir = dir_ + "/state";
    config.run_root = dir_ + "/state/run";
    config.spool_dir = dir_ + "/state/spool";
    return config;
  }

  std::string dir_;
  FakeCoordinator coordinator_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

TEST_F(AgentDaemonTest, ASpoolOverTheMessageLimitIsOfferedInPagesAfterRestart) {
  // What an agent that ran 3,400 windows while its coordinator was away holds, with a few
  // results larger than a page: 4.4 MB of small records and 4.5 MiB of large ones.
  std::set<std::string> keys;
  {
    auto spool = Spool::Open(dir_ + "/state/spool");
    ASSERT_TRUE(spool.ok()) << spool.status().ToString();
    for (int i = 0; i < 3400; ++i) {
      const std::string key = "9-hello-hello-c1-r" + std::to_string(i) + "-a1.load";
      ASSERT_TRUE((*spool)->Put(key, kWindow, std::string(1300, 'r')).ok());
      keys.insert(key);
    }
    for (int i = 0; i < 3; ++i) {
      const std::string key = "9-big-" + std::to_string(i) + ".server";
      ASSERT_TRUE((*spool)->Put(key, kWindow, std::string(3 << 19, 'b')).ok());
      keys.insert(key);
    }
    ASSERT_GT((*spool)->bytes_held(), 2 * kMessageLimit);
  }
  AgentDaemon daemon(RealSysEnv(), Config());
  ASSERT_TRUE(daemon.Start().ok());
  auto drained = [&] {
    auto left = Spool::Open(dir_ + "/state/spool");
    return left.ok() && (*left)->bytes_held() == 0;
  };
  ASSERT_TRUE(Eventually(drained, milliseconds(30000))) << "the spool was never handed over";
  EXPECT_TRUE(daemon.registered());
  daemon.Shutdown();

  std::lock_guard lock(coordinator_.mu);
  EXPECT_EQ(coordinator_.offered, keys) << "every result, offered once it registered";
  EXPECT_GE(coordinator_.page_bytes.size(), 8u);
  for (size_t bytes : coordinator_.page_bytes) {
    EXPECT_LT(bytes, kMessageLimit / 2) << "a page stays well under the message limit";
  }
}

TEST_F(AgentDaemonTest, TheInstanceProofIsKeptAcrossRestartsAndSentWithEveryCall) {
  std::string proof;
  for (int start = 0; start < 2; ++start) {
    AgentDaemon daemon(RealSysEnv(), Config());
    ASSERT_TRUE(daemon.Start().ok());
    ASSERT_TRUE(Eventually([&] { return daemon.registered(); }, milliseconds(10000)));
    const int beats = [&] {
      std::lock_guard lock(coordinator_.mu);
      return coordinator_.heartbeats;
    }();
    ASSERT_TRUE(Eventually(
        [&] {
          std::lock_guard lock(coordinator_.mu);
          return coordinator_.heartbeats >= beats + 1;  // a heartbeat carries it too
        },
        milliseconds(10000)));
    daemon.Shutdown();
  }
  std::ifstream in(dir_ + "/state/instance_proof");
  in >> proof;
  EXPECT_EQ(proof.size(), 64u);
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/state/instance_proof").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::lock_guard lock(coordinator_.mu);
  EXPECT_EQ(coordinator_.registrations, 2);
  EXPECT_EQ(coordinator_.proofs, std::set<std::string>{proof})
      << "registration and heartbeats of both starts carry the one proof";
}

// One agent per state directory (docs/security.md, "One owner per state"): a second one would
// share the first's spool and instance proof, and take its registration over.
TEST_F(AgentDaemonTest, ASecondAgentOnTheStateDirectoryIsRefusedAtStart) {
  AgentDaemon first(RealSysEnv(), Config());
  ASSERT_TRUE(first.Start().ok());
  ASSERT_TRUE(Eventually([&] { return first.registered(); }, milliseconds(10000)));
  {
    AgentDaemon second(RealSysEnv(), Config());
    auto started = second.Start();
    ASSERT_FALSE(started.ok());
    EXPECT_EQ(started.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(started.status().message().rfind("state_dir " + dir_ +
                                                   "/state is in use by benchlab "
                                                   "agent " +
                                                   Config().name + ", pid " +
                                                   std::to_string(getpid()) + ", listening on ",
                                               0),
              0u)
        << started.status().message();
  }
  std::lock_guard lock(coordinator_.mu);
  EXPECT_EQ(coordinator_.registrations, 1) << "the refused agent never registered";
}

TEST_F(AgentDaemonTest, DirectoriesThatAreNotPrivateAreRefusedAtStart) {
  fs::create_directories(dir_ + "/elsewhere");
  fs::create_directories(dir_ + "/state");
  fs::permissions(dir_ + "/state", fs::perms::owner_all, fs::perm_options::replace);
  fs::create_directory_symlink(dir_ + "/elsewhere", dir_ + "/state/run");
  {
    AgentDaemon daemon(RealSysEnv(), Config());
    auto started = daemon.Start();
    ASSERT_FALSE(started.ok());
    EXPECT_EQ(started.status().message(),
              "run_root " + dir_ +
                  "/state/run: is a symbolic link; the agent uses only a "
                  "directory of its own (give the real path, or remove the link)");
  }
  fs::remove(dir_ + "/state/run");
  fs::create_directories(dir_ + "/state/spool");
  fs::permissions(dir_ + "/state/spool", fs::perms::all, fs::perm_options::replace);
  {
    AgentDaemon daemon(RealSysEnv(), Config());
    auto started = daemon.Start();
    ASSERT_FALSE(started.ok());
    EXPECT_EQ(started.status().message().rfind("spool_dir " + dir_ +
                                                   "/state/spool: is writable "
                                                   "by group or others",
                                               0),
              0u)
        << started.status().message();
  }
  fs::permissions(dir_ + "/state", fs::perms::all, fs::perm_options::replace);
  {
    AgentDaemon daemon(RealSysEnv(), Config());
    auto started = daemon.Start();
    ASSERT_FALSE(started.ok());
    EXPECT_EQ(started.status().message().rfind("state_dir " + dir_ + "/state: ", 0), 0u)
        << started.status().message();
  }
}

TEST_F(AgentDaemonTest, TheSpoolIsOfferedAgainAfterAPartitionHealsWithoutReRegistering) {
  AgentDaemon daemon(RealSysEnv(), Config());
  ASSERT_TRUE(daemon.Start().ok());
  ASSERT_TRUE(Eventually(
      [&] {
        std::lock_guard lock(coordinator_.mu);
        return coordinator_.heartbeats > 0;
      },
      milliseconds(10000)));
  {
    std::lock_guard lock(coordinator_.mu);
    coordinator_.cut = true;
  }
  // A result spooled during the cut, whose RESULT event never reached the coordinator.
  const std::string key = "9-hello-hello-c1-r0-a1.load";
  auto spool = Spool::Open(dir_ + "/state/spool");
  ASSERT_TRUE(spool.ok()) << spool.status().ToString();
  ASSERT_TRUE((*spool)->Put(key, kWindow, "result").ok());
  ASSERT_TRUE(Eventually(
      [&] {
        std::lock_guard lock(coordinator_.mu);
        return coordinator_.refused >= 2;
      },
      milliseconds(10000)));
  {
    std::lock_guard lock(coordinator_.mu);
    coordinator_.cut = false;
  }
  EXPECT_TRUE(Eventually(
      [&] {
        std::lock_guard lock(coordinator_.mu);
        return coordinator_.offered.count(key) == 1;
      },
      milliseconds(10000)))
      << "the spooled result is offered once the coordinator answers again";
  daemon.Shutdown();
  std::lock_guard lock(coordinator_.mu);
  EXPECT_EQ(coordinator_.registrations, 1) << "the coordinator still knew the agent";
}

// Whether something accepts TCP connections on 127.0.0.1:port.
bool Listening(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool open = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return open;
}

TEST_F(AgentDaemonTest, TargetsStopOnceTheCoordinatorIsUnreachableLongerThanLeaseAndGrace) {
  AgentConfig config = Config();
  config.roles = {"server"};
  TargetDef hello;
  hello.name = "hello";
  hello.command = {std::string(BENCHLAB_BINARY_DIR) + "/bin/hello-server", "--port", "{port}"};
  hello.campaign_dir = dir_;
  hello.ready_timeout = milliseconds(5000);
  config.catalogue = {hello};
  FakeClock clock;
  AgentDaemon daemon(RealSysEnv(), config, clock);
  auto bound = daemon.Start();
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  ASSERT_TRUE(Eventually([&] { return daemon.registered(); }, milliseconds(10000)));
  auto stub = v1::Agent::NewStub(
      grpc::CreateChannel(bound->ToString(), grpc::InsecureChannelCredentials()));
  v1::StartTargetRequest req;
  req.set_target("hello");
  req.set_window(kWindow);
  req.set_window_label("test");
  v1::StartTargetReply started;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  ASSERT_TRUE(stub->StartTarget(&ctx, req, &started).ok());
  ASSERT_TRUE(Listening(started.port()));
  int refused = 0;
  {
    std::lock_guard lock(coordinator_.mu);
    coordinator_.cut = true;
    refused = coordinator_.refused;
  }
  // Waits until `more` further calls were refused: the daemon has then handled every refusal
  // before the last (one call at a time, each handled before the next).
  auto refused_more = [&](int more) {
    const bool seen = Eventually(
        [&] {
          std::lock_guard lock(coordinator_.mu);
          return coordinator_.refused >= refused + more;
        },
        milliseconds(10000));
    std::lock_guard lock(coordinator_.mu);
    refused = coordinator_.refused;
    return seen;
  };
  // The outage begins at the first refused call, on the daemon's clock.
  ASSERT_TRUE(refused_more(2));
  // The lease is 600 ms: lease and grace are 1.8 s. At exactly that the targets still run.
  clock.Advance(milliseconds(1800));
  ASSERT_TRUE(refused_more(2));
  EXPECT_TRUE(Listening(started.port())) << "stopped before the coordinator judged it lost";
  // Past it, the next refusal stops them.
  clock.Advance(milliseconds(1));
  ASSERT_TRUE(refused_more(2));
  EXPECT_FALSE(Listening(started.port()))
      << "the target of a window the coordinator has failed keeps running";
  daemon.Shutdown();
}

TEST_F(AgentDaemonTest, ShutdownStopsALoadInProgress) {
  if (system("command -v wrk > /dev/null 2>&1") != 0) GTEST_SKIP() << "wrk is not installed";
  test_support::CountingHttpServer http;
  AgentDaemon daemon(RealSysEnv(), Config());
  auto bound = daemon.Start();
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  auto stub = v1::Agent::NewStub(
      grpc::CreateChannel(bound->ToString(), grpc::InsecureChannelCredentials()));
  v1::RunLoadRequest req;
  req.set_host("127.0.0.1");
  req.set_port(http.port());
  req.set_connections(2);
  req.set_threads(1);
  req.set_duration_ms(30000);
  req.set_tool("wrk");
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  auto reader = stub->RunLoad(&ctx, req);
  ASSERT_TRUE(http.WaitOpen(2, milliseconds(5000)));
  // The load runs on for a while: what is under test is cutting short a load well under way.
  std::this_thread::sleep_for(milliseconds(300));
  const auto begin = std::chrono::steady_clock::now();
  daemon.Shutdown();
  const auto took = std::chrono::steady_clock::now() - begin;
  EXPECT_LT(took, milliseconds(1000)) << "the load's call ends at once, not at its 30 s";
  EXPECT_NE(http.WaitAllClosed(milliseconds(100)),
            test_support::CountingHttpServer::Clock::time_point::max());
  v1::RunLoadEvent event;
  while (reader->Read(&event)) {
  }
  EXPECT_FALSE(reader->Finish().ok());
}

}  // namespace
}  // namespace benchlab
