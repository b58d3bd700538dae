// AgentService over real gRPC on loopback, against a small HTTP server that counts connections:
// what the agent refuses (hosts outside allowed_targets, malformed request heads, calls over
// its limits, another window's targets and results), how fast load stops when its caller
// goes away, and that benchlab's generator, wrk and h2load stream, spool and stop alike.
#include "agent/server/agent_service.h"

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <thread>

#include "agent/orphans.h"
#include "agent/window_profiler.h"
#include "common/folded_profile.h"
#include "tests/sanitizer.h"
#include "tests/unit/agent/server/test_http_server.h"

namespace benchlab {
namespace {

// The agent stops a load within 100 ms of its end (stretched under ThreadSanitizer's slowdown).
constexpr std::chrono::milliseconds kStopBound =
    std::chrono::milliseconds(100) * kSanitizerTimeScale;

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using test_support::CountingHttpServer;
using Clock = std::chrono::steady_clock;

const std::string kWindowA = "window-A-0123456789";
const std::string kWindowB = "window-B-0123456789";

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class AgentServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/benchlab-agent-service-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directory(dir_ + "/run");
    fs::permissions(dir_ + "/run", fs::perms::owner_all);
  }
  void TearDown() override {
    if (server_) {
      service_->BeginShutdown();
      server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
      server_->Wait();
    }
    service_.reset();
    if (!saved_path_.empty()) setenv("PATH", saved_path_.c_str(), 1);
    fs::remove_all(dir_);
  }

  // Stand-ins for wrk and h2load, found first in PATH: each prints a real output of its tool
  // (tests/unit/agent/testdata) after 300 ms, or with `hang` sleeps 30 s and prints nothing.
  void FakeTools(bool hang) {
    const std::string bin = dir_ + "/tools";
    fs::create_directory(bin);
    const std::string testdata = std::string(BENCHLAB_SOURCE_DIR) + "/tests/unit/agent/testdata/";
    for (const auto& [tool, output] :
         {std::pair<std::string, std::string>{"wrk", "wrk-4.1-latency.txt"},
          {"h2load", "h2load-1.52.txt"}}) {
      const std::string script = bin + "/" + tool;
      std::ofstream(script) << "#!/bin/sh\n"
                            << (hang ? "exec sleep 30\n"
                                     : "sleep 0.3\ncat '" + testdata + output + "'\n");
      fs::permissions(script, fs::perms::owner_all);
    }
    saved_path_ = getenv("PATH") != nullptr ? getenv("PATH") : "/usr/bin:/bin";
    setenv("PATH", (bin + ":" + saved_path_).c_str(), 1);
  }

  AgentIdentity Identity() {
    AgentIdentity identity;
    identity.name = "svc-test";
    identity.roles = {"server", "load"};
    identity.run_root = dir_ + "/run";
    identity.cookie = AgentCookie("svc-test", "1");
    return identity;
  }

  TargetDef Hello() {
    TargetDef def;
    def.name = "hello";
    def.command = {std::string(BENCHLAB_BINARY_DIR) + "/bin/hello-server", "--port", "{port}"};
    def.campaign_dir = dir_;
    def.ready_timeout = milliseconds(5000);
    return def;
  }

  void Serve(AgentIdentity identity, std::vector<TargetDef> catalogue = {},
             std::vector<ServiceDef> services = {}) {
    service_ = std::make_unique<AgentService>(RealSysEnv(), std::move(identity),
                                              std::move(catalogue), std::move(services));
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_ != nullptr && port > 0);
    stub_ = v1::Agent::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                   grpc::InsecureChannelCredentials()));
  }

  static v1::RunLoadRequest Load(uint16_t port, int64_t duration_ms = 200) {
    v1::RunLoadRequest req;
    req.set_host("127.0.0.1");
    req.set_port(port);
    req.set_connections(4);
    req.set_threads(1);
    req.set_duration_ms(duration_ms);
    return req;
  }

  static void Deadline(grpc::ClientContext& ctx, milliseconds after = milliseconds(30000)) {
    ctx.set_deadline(std::chrono::system_clock::now() + after);
  }

  grpc::Status RunLoad(const v1::RunLoadRequest& req, v1::LoadResult* result = nullptr) {
    grpc::ClientContext ctx;
    Deadline(ctx);
    auto reader = stub_->RunLoad(&ctx, req);
    v1::RunLoadEvent event;
    while (reader->Read(&event)) {
      if (event.kind() == v1::RunLoadEvent::RESULT && result != nullptr) *result = event.result();
    }
    return reader->Finish();
  }

  grpc::Status Conformance(const v1::CheckConformanceRequest& req) {
    grpc::ClientContext ctx;
    Deadline(ctx);
    v1::CheckConformanceReply reply;
    return stub_->CheckConformance(&ctx, req, &reply);
  }

  grpc::Status Start(const std::string& window, v1::StartTargetReply* reply,
                     const std::string& campaign = "") {
    v1::StartTargetRequest req;
    req.set_target("hello");
    req.set_window(window);
    req.set_window_label("test");
    req.set_campaign(campaign);
    grpc::ClientContext ctx;
    Deadline(ctx);
    return stub_->StartTarget(&ctx, req, reply);
  }

  grpc::Status Stop(const std::string& handle, const std::string& window) {
    v1::StopTargetRequest req;
    req.set_handle(handle);
    req.set_window(window);
    req.set_grace_ms(1000);
    grpc::ClientContext ctx;
    Deadline(ctx);
    v1::StopTargetReply reply;
    return stub_->StopTarget(&ctx, req, &reply);
  }

  grpc::Status Mark(const std::string& handle, const std::string& window,
                    v1::MarkRequest::Kind kind) {
    v1::MarkRequest req;
    req.set_handle(handle);
    req.set_window(window);
    req.set_kind(kind);
    grpc::ClientContext ctx;
    Deadline(ctx);
    v1::MarkReply reply;
    return stub_->Mark(&ctx, req, &reply);
  }

  // Starts a long RunLoad, lets it run ~300 ms, then ends it with `end` (which returns the
  // instant it acted); returns how long after that instant the HTTP server saw the last of the
  // load's connections close.
  template <typename End>
  milliseconds CloseLatency(v1::RunLoadRequest req, grpc::ClientContext& ctx, End end,
                            grpc::Status* status) {
    CountingHttpServer& http = *http_;
    req.set_port(http.port());
    auto reader = stub_->RunLoad(&ctx, req);
    EXPECT_TRUE(http.WaitOpen(req.connections(), milliseconds(5000) * kSanitizerTimeScale));
    std::this_thread::sleep_for(milliseconds(300));
    const Clock::time_point ended = end();
    const Clock::time_point closed = http.WaitAllClosed(milliseconds(40000));
    v1::RunLoadEvent event;
    while (reader->Read(&event)) {
    }
    *status = reader->Finish();
    EXPECT_NE(closed, Clock::time_point::max()) << "the load's connections never closed";
    const auto latency = std::chrono::duration_cast<std::chrono::microseconds>(closed - ended);
    RecordProperty("close_latency_us", static_cast<int>(latency.count()));
    return std::chrono::duration_cast<milliseconds>(latency);
  }

  std::string dir_;
  std::string saved_path_;  // PATH before FakeTools
  std::unique_ptr<AgentService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Agent::Stub> stub_;
  std::unique_ptr<CountingHttpServer> http_ = std::make_unique<CountingHttpServer>();
};

// --- where requests may go -------------------------------------------------------------------

TEST_F(AgentServiceTest, RunLoadAndConformanceGoOnlyToAllowedTargets) {
  AgentIdentity identity = Identity();
  Serve(identity);
  v1::RunLoadRequest load = Load(80);
  load.set_host("192.0.2.1");  // TEST-NET-1: outside the default, loopback only
  grpc::Status refused = RunLoad(load);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Contains(refused.error_message(),
                       "host 192.0.2.1 is not in this agent's "
                       "allowed_targets (127.0.0.0/8, ::1/128, localhost)"))
      << refused.error_message();

  v1::CheckConformanceRequest check;
  check.set_host("[::ffff:192.0.2.1]");  // an IPv4-mapped address is its IPv4 address
  check.set_port(80);
  check.add_cases()->set_name("hello");
  refused = Conformance(check);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Contains(refused.error_message(), "host 192.0.2.1 ")) << refused.error_message();

  check.set_host("127.0.0.1");
  check.set_port(http_->port());
  check.mutable_cases(0)->set_expect_status(200);
  EXPECT_TRUE(Conformance(check).ok());
  EXPECT_EQ(http_->accepted(), 1) << "loopback is allowed by default";
}

TEST_F(AgentServiceTest, ANameMustResolveInsideTheAllowedNetworks) {
  AgentIdentity identity = Identity();
  identity.allowed_targets = AllowedTargets();
  ASSERT_TRUE(identity.allowed_targets.Add("10.0.0.0/8").ok());
  Serve(identity);
  v1::RunLoadRequest load = Load(http_->port());
  load.set_host("localhost");
  grpc::Status refused = RunLoad(load);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Contains(refused.error_message(), "host localhost (it resolves to "))
      << refused.error_message();
  EXPECT_TRUE(Contains(refused.error_message(), "allowed_targets (10.0.0.0/8)"))
      << refused.error_message();
  EXPECT_EQ(http_->accepted(), 0);
}

TEST_F(AgentServiceTest, ALoadToACheckedNameGoesToTheCheckedAddressWithItsHostHeader) {
  Serve(Identity());
  v1::RunLoadRequest load = Load(http_->port());
  load.set_host("localhost");
  v1::LoadResult result;
  grpc::Status status = RunLoad(load, &result);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_GT(result.requests(), 0u);
  EXPECT_TRUE(Contains(http_->last_head(), "\r\nHost: localhost:" + std::to_string(http_->port())))
      << http_->last_head();
}

// --- request heads ---------------------------------------------------------------------------

TEST_F(AgentServiceTest, ARequestLineWithCrLfIsRefusedEverywhere) {
  Serve(Identity());
  v1::RunLoadRequest load = Load(http_->port());
  load.set_method("GET / HTTP/1.1\r\nHost: x\r\n\r\nDELETE");
  grpc::Status refused = RunLoad(load);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(refused.error_message(), "RunLoad: method")) << refused.error_message();

  load = Load(http_->port());
  auto* header = load.add_headers();
  header->set_name("X-Injected");
  header->set_value("a\r\nSet-Cookie: b");
  EXPECT_EQ(RunLoad(load).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  v1::CheckConformanceRequest check;
  check.set_host("127.0.0.1");
  check.set_port(http_->port());
  auto* c = check.add_cases();
  c->set_name("smuggle");
  c->set_method("GET");
  c->set_path("/ HTTP/1.1\r\n\r\nGET /admin");
  refused = Conformance(check);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(refused.error_message(), "case \"smuggle\": path"))
      << refused.error_message();
  EXPECT_EQ(http_->accepted(), 0) << "nothing reached the server";
}

// --- limits ------------------------------------------------------------------------------------

TEST_F(AgentServiceTest, RequestsOverTheLimitsAreRefusedNamingTheLimit) {
  Serve(Identity());
  v1::RunLoadRequest load = Load(http_->port());
  load.set_duration_ms(20000000000);
  grpc::Status refused = RunLoad(load);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(refused.error_message(), "duration_ms 20000000000 exceeds limits.max_duration = 10m");

  load = Load(http_->port());
  load.set_connections(50000);
  EXPECT_EQ(RunLoad(load).error_message(),
            "connections 50000 exceeds limits.max_connections = 10000");
  load = Load(http_->port());
  load.set_threads(64);
  EXPECT_EQ(RunLoad(load).error_message(), "threads 64 exceeds limits.max_threads = 1")
      << "one per allowed CPU; the test agent has none set, so one";

  v1::CheckConformanceRequest check;
  check.set_host("127.0.0.1");
  check.set_port(http_->port());
  for (int i = 0; i < 1001; ++i) check.add_cases()->set_name("c");
  refused = Conformance(check);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(refused.error_message(), "cases 1001 exceeds limits.max_conformance_cases = 1000");
  EXPECT_EQ(http_->accepted(), 0);
}

TEST_F(AgentServiceTest, CheckHostRunsOnlyOnAllowedCpus) {
  AgentIdentity identity = Identity();
  identity.allowed_cpus = {0};
  Serve(identity);
  v1::CheckHostRequest req;
  req.add_cpus(0);
  req.add_cpus(1);
  grpc::ClientContext ctx;
  Deadline(ctx);
  v1::CheckHostReply reply;
  grpc::Status refused = stub_->CheckHost(&ctx, req, &reply);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(refused.error_message(), "cpus 0-1 are outside agent \"svc-test\"'s allowed CPUs 0");
}

// --- cancellation --------------------------------------------------------------------------

TEST_F(AgentServiceTest, RunLoadUsesTheEngineAskedForAndRefusesAnUnknownOne) {
  Serve(Identity());
  v1::RunLoadRequest load = Load(http_->port());
  load.set_engine("epoll");
  v1::LoadResult result;
  grpc::Status ok = RunLoad(load, &result);
  ASSERT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_TRUE(Contains(result.record_json(), "\"engine\": \"epoll\"")) << result.record_json();
  load.set_engine("kqueue");
  grpc::Status bad = RunLoad(load);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(bad.error_message(),
            "RunLoad: engine: expected \"auto\", \"io_uring\" or \"epoll\", got \"kqueue\"");
}

TEST_F(AgentServiceTest, RunLoadChecksItsTlsOptions) {
  Serve(Identity());
  struct Bad {
    std::function<void(v1::TlsLoad&)> edit;
    const char* error;
  } bad[] = {
      {[](v1::TlsLoad& t) { t.set_version("1.1"); }, "RunLoad: tls.version: expected"},
      {[](v1::TlsLoad& t) { t.set_resumption(2); }, "RunLoad: tls.resumption: expected"},
      {[](v1::TlsLoad& t) { t.add_alpn("h2"); }, "RunLoad: tls.alpn: expected a list that offers"},
      {[](v1::TlsLoad& t) {
         for (int i = 0; i < 9; ++i) t.add_alpn("http/1.1");
       },
       "RunLoad: tls.alpn: at most 8 protocols"},
      {[](v1::TlsLoad& t) { t.set_ca_pem(std::string(300 * 1024, 'x')); },
       "RunLoad: tls.ca_pem: at most"},
      {[](v1::TlsLoad& t) { t.set_server_name("a\nb"); }, "RunLoad: tls.server_name: expected"},
      {[](v1::TlsLoad& t) { t.set_ca_pem("not a certificate"); }, "tls.ca_pem: expected PEM"},
  };
  for (const Bad& b : bad) {
    v1::RunLoadRequest load = Load(http_->port());
    b.edit(*load.mutable_tls());
    grpc::Status st = RunLoad(load);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << b.error;
    EXPECT_NE(st.error_message().find(b.error), std::string::npos) << st.error_message();
  }
  // wrk and h2load are not driven over TLS.
  v1::RunLoadRequest wrk = Load(http_->port());
  wrk.set_tool("wrk");
  wrk.mutable_tls();
  grpc::Status st = RunLoad(wrk);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("tool \"benchlab\" is"), std::string::npos)
      << st.error_message();
}

TEST_F(AgentServiceTest, RunLoadOverTlsToAPlainServerCountsFailedHandshakes) {
  Serve(Identity());
  // The plain server waits for a request head and never answers the ClientHello: each
  // handshake fails at the timeout, and the connection is tried again.
  v1::RunLoadRequest load = Load(http_->port(), 400);
  load.set_timeout_ms(50);
  load.mutable_tls()->set_insecure(true);
  load.set_requests_per_connection(3);
  v1::LoadResult result;
  grpc::Status ok = RunLoad(load, &result);
  ASSERT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_EQ(result.requests(), 0u);
  EXPECT_GT(result.errors().connect(), 0u) << result.record_json();
  EXPECT_TRUE(Contains(result.record_json(), "TLS handshake timed out")) << result.record_json();
}

TEST_F(AgentServiceTest, LoadStopsWithin100msOfItsCallerCancelling) {
  Serve(Identity());
  grpc::ClientContext ctx;
  Deadline(ctx, milliseconds(60000));
  grpc::Status status;
  const milliseconds latency = CloseLatency(
      Load(0, 30000), ctx,
      [&] {
        const auto now = Clock::now();
        ctx.TryCancel();
        return now;
      },
      &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_LT(latency, kStopBound) << "connections closed " << latency.count()
                                 << " ms after the caller cancelled";
}

TEST_F(AgentServiceTest, LoadStopsWithin100msOfItsDeadline) {
  Serve(Identity());
  grpc::ClientContext ctx;
  const auto deadline = Clock::now() + milliseconds(800) * kSanitizerTimeScale;
  ctx.set_deadline(std::chrono::system_clock::now() + milliseconds(800) * kSanitizerTimeScale);
  grpc::Status status;
  const milliseconds latency = CloseLatency(
      Load(0, 30000), ctx,
      [&] {
        std::this_thread::sleep_until(deadline);
        return deadline;
      },
      &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(latency, kStopBound) << "connections closed " << latency.count()
                                 << " ms after the deadline";
}

TEST_F(AgentServiceTest, AnExternalToolIsKilledWithin100msOfCancellation) {
  if (system("command -v wrk > /dev/null 2>&1") != 0) GTEST_SKIP() << "wrk is not installed";
  Serve(Identity());
  v1::RunLoadRequest req = Load(0, 30000);
  req.set_tool("wrk");
  grpc::ClientContext ctx;
  Deadline(ctx, milliseconds(60000));
  grpc::Status status;
  const milliseconds latency = CloseLatency(
      req, ctx,
      [&] {
        const auto now = Clock::now();
        ctx.TryCancel();
        return now;
      },
      &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_LT(latency, kStopBound) << "wrk's connections closed " << latency.count()
                                 << " ms after the caller cancelled";
}

// --- targets -------------------------------------------------------------------------------

TEST_F(AgentServiceTest, ATargetNeedsAWindowTokenAndGetsAnUnguessableHandle) {
  AgentIdentity identity = Identity();
  identity.limits.max_targets = 2;
  Serve(identity, {Hello()});
  v1::StartTargetReply reply;
  grpc::Status refused = Start("", &reply);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(refused.error_message(), "window: expected a window token"))
      << refused.error_message();
  EXPECT_EQ(Start("too-short", &reply).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  v1::StartTargetReply a, b;
  ASSERT_TRUE(Start(kWindowA, &a).ok());
  ASSERT_TRUE(Start(kWindowB, &b).ok());
  EXPECT_EQ(a.handle().size(), 32u) << "128 random bits in hex";
  EXPECT_EQ(a.handle().find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a.handle(), b.handle());
  EXPECT_EQ(a.tls_ca_pem(), "") << "a plain target has no CA";
  EXPECT_TRUE(Stop(a.handle(), kWindowA).ok());
  EXPECT_TRUE(Stop(b.handle(), kWindowB).ok());
}

TEST_F(AgentServiceTest, ATlsTargetsStartReplyCarriesItsCaAndNoKey) {
  if (!fs::exists("/usr/sbin/nginx")) GTEST_SKIP() << "needs nginx";
  TargetDef def;
  def.name = "hello";  // the name Start asks for
  def.command = {"/usr/sbin/nginx",          "-p", "{run_dir}",  "-c",
                 "{run_dir}/nginx-tls.conf", "-g", "daemon off;"};
  def.templates = {"{campaign_dir}/nginx-tls.conf.in"};
  def.campaign_dir = std::string(BENCHLAB_SOURCE_DIR) + "/examples";
  def.ready_timeout = milliseconds(5000);
  def.tls = true;
  Serve(Identity(), {def});
  v1::StartTargetReply reply;
  grpc::Status started = Start(kWindowA, &reply);
  ASSERT_TRUE(started.ok()) << started.error_message();
  EXPECT_EQ(reply.tls_ca_pem().rfind("-----BEGIN CERTIFICATE-----", 0), 0u) << reply.tls_ca_pem();
  EXPECT_FALSE(Contains(reply.tls_ca_pem(), "PRIVATE KEY"));
  std::string on_disk;
  for (const auto& run : fs::directory_iterator(dir_ + "/run")) {
    if (fs::exists(run.path() / "tls_ca.pem")) {
      std::ifstream in(run.path() / "tls_ca.pem");
      on_disk.assign(std::istreambuf_iterator<char>(in), {});
    }
  }
  EXPECT_EQ(reply.tls_ca_pem(), on_disk) << "the CA of the window's own run directory";
  EXPECT_TRUE(Stop(reply.handle(), kWindowA).ok());
}

TEST_F(AgentServiceTest, AnotherWindowCannotStopOrMarkATarget) {
  Serve(Identity(), {Hello()});
  v1::StartTargetReply started;
  ASSERT_TRUE(Start(kWindowA, &started).ok());
  for (const grpc::Status& refused :
       {Stop(started.handle(), kWindowB), Mark(started.handle(), kWindowB, v1::MarkRequest::BEGIN),
        Mark(started.handle(), kWindowB, v1::MarkRequest::END)}) {
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(refused.error_message(),
              "target \"" + started.handle() + "\" was not started by this window");
  }
  EXPECT_EQ(kill(started.pid(), 0), 0) << "still running";
  EXPECT_EQ(Stop(started.handle(), "").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Stop("00000000000000000000000000000000", kWindowB).error_code(),
            grpc::StatusCode::NOT_FOUND);

  EXPECT_TRUE(Mark(started.handle(), kWindowA, v1::MarkRequest::BEGIN).ok());
  EXPECT_TRUE(Mark(started.handle(), kWindowA, v1::MarkRequest::END).ok());
  EXPECT_TRUE(Stop(started.handle(), kWindowA).ok());
}

// docs/profiles.md: a target started with profile_hz is sampled over Mark BEGIN to END, and the
// END reply carries the folded stacks (or why there are none); the window is unaffected.
TEST_F(AgentServiceTest, AProfiledWindowCarriesItsFoldedStacks) {
  Serve(Identity(), {Hello()});
  auto start = [&](int hz, v1::StartTargetReply* reply) {
    v1::StartTargetRequest req;
    req.set_target("hello");
    req.set_window(kWindowA);
    req.set_profile_hz(hz);
    grpc::ClientContext ctx;
    Deadline(ctx);
    return stub_->StartTarget(&ctx, req, reply);
  };
  auto mark = [&](const std::string& handle, v1::MarkRequest::Kind kind, v1::MarkReply* reply) {
    v1::MarkRequest req;
    req.set_handle(handle);
    req.set_window(kWindowA);
    req.set_kind(kind);
    grpc::ClientContext ctx;
    Deadline(ctx);
    return stub_->Mark(&ctx, req, reply);
  };
  v1::StartTargetReply refused;
  EXPECT_EQ(start(kMaxProfileHz + 1, &refused).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(start(-1, &refused).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  for (int hz : {0, 499}) {
    v1::StartTargetReply started;
    ASSERT_TRUE(start(hz, &started).ok());
    v1::MarkReply begun, ended;
    ASSERT_TRUE(mark(started.handle(), v1::MarkRequest::BEGIN, &begun).ok());
    ASSERT_TRUE(RunLoad(Load(static_cast<uint16_t>(started.port()), 800)).ok());
    ASSERT_TRUE(mark(started.handle(), v1::MarkRequest::END, &ended).ok());
    ASSERT_TRUE(Stop(started.handle(), kWindowA).ok());
    EXPECT_GT(ended.cpu_user_s() + ended.cpu_sys_s(), 0) << "the window's own figures are there";
    if (hz == 0) {
      EXPECT_TRUE(ended.profile_folded_z().empty());
      EXPECT_EQ(ended.profile_samples(), 0u);
      EXPECT_EQ(ended.profile_error(), "");
      continue;
    }
    if (system("perf --version > /dev/null 2>&1") != 0) {
      EXPECT_NE(ended.profile_error().find("install linux-perf"), std::string::npos)
          << ended.profile_error();
      continue;
    }
    ASSERT_EQ(ended.profile_error(), "");
    EXPECT_GT(ended.profile_samples(), 0u);
    auto folded = DecompressFolded(ended.profile_folded_z());
    ASSERT_TRUE(folded.ok()) << folded.status().message();
    EXPECT_EQ(folded->samples(), ended.profile_samples());
    for (const auto& [stack, count] : folded->stacks) {
      EXPECT_EQ(stack.rfind("hello-server;", 0), 0u) << "only the target's process: " << stack;
    }
  }
}

TEST_F(AgentServiceTest, EndCampaignStopsThatCampaignsServicesAndRefusesMalformedNames) {
  TargetDef hello = Hello();
  hello.services = {"db"};
  ServiceDef db;
  db.name = "db";
  db.command = {"sleep", "30"};
  db.ready_command = {"true"};
  db.campaign_dir = dir_;
  Serve(Identity(), {hello}, {db});
  auto end = [&](const std::string& campaign, v1::EndCampaignReply* reply) {
    v1::EndCampaignRequest req;
    req.set_campaign(campaign);
    grpc::ClientContext ctx;
    Deadline(ctx);
    return stub_->EndCampaign(&ctx, req, reply);
  };
  v1::StartTargetReply first;
  ASSERT_TRUE(Start(kWindowA, &first, "db-demo#7").ok());
  ASSERT_EQ(first.services_size(), 1);
  EXPECT_TRUE(first.services(0).started());
  ASSERT_TRUE(Stop(first.handle(), kWindowA).ok());

  v1::EndCampaignReply reply;
  for (const std::string& bad : {std::string(""), std::string("db demo#7"),
                                 std::string("../../etc"), std::string(129, 'a')}) {
    grpc::Status refused = end(bad, &reply);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
    EXPECT_TRUE(Contains(refused.error_message(), "campaign: expected 1 to 128 characters"))
        << refused.error_message();
  }
  v1::StartTargetReply refused;
  EXPECT_EQ(Start(kWindowB, &refused, "db\n#7").error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  ASSERT_TRUE(end("other#8", &reply).ok());
  EXPECT_EQ(reply.services_stopped(), 0);
  ASSERT_TRUE(end("db-demo#7", &reply).ok());
  EXPECT_EQ(reply.services_stopped(), 1);
  EXPECT_EQ(reply.services_in_use(), 0);

  // The same campaign's next window (a late re-run) starts it afresh.
  v1::StartTargetReply again;
  ASSERT_TRUE(Start(kWindowB, &again, "db-demo#7").ok());
  ASSERT_EQ(again.services_size(), 1);
  EXPECT_TRUE(again.services(0).started());
  EXPECT_TRUE(Stop(again.handle(), kWindowB).ok());
}

TEST_F(AgentServiceTest, RunningTargetsAreLimited) {
  AgentIdentity identity = Identity();
  identity.limits.max_targets = 1;
  Serve(identity, {Hello()});
  v1::StartTargetReply first, second;
  ASSERT_TRUE(Start(kWindowA, &first).ok());
  grpc::Status full = Start(kWindowB, &second);
  EXPECT_EQ(full.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(full.error_message(),
            "agent \"svc-test\" already runs 1 target(s), limits.max_targets = 1: a window must "
            "stop its target first");
  ASSERT_TRUE(Stop(first.handle(), kWindowA).ok());
  ASSERT_TRUE(Start(kWindowB, &second).ok()) << "a stopped target frees its slot";
  EXPECT_TRUE(Stop(second.handle(), kWindowB).ok());
}

// --- the spool -----------------------------------------------------------------------------

TEST_F(AgentServiceTest, AcknowledgeDropsOnlyTheCallersOwnResults) {
  Serve(Identity());
  auto spool = Spool::Open(dir_ + "/spool");
  ASSERT_TRUE(spool.ok());
  service_->SetSpool(std::move(spool).value());
  v1::RunLoadRequest load = Load(http_->port());
  load.set_spool_key("7-hello-hello-c4-r1-a1");
  EXPECT_EQ(RunLoad(load).error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << "a spooled result needs the window it belongs to";
  load.set_window(kWindowA);
  ASSERT_TRUE(RunLoad(load).ok());
  auto held = [&] { return service_->spool()->Page("", UINT64_MAX)->size(); };
  ASSERT_EQ(held(), 1u);

  auto acknowledge = [&](const std::string& window) {
    v1::AcknowledgeRequest req;
    auto* ack = req.add_acks();
    ack->set_key("7-hello-hello-c4-r1-a1.load");
    ack->set_window(window);
    grpc::ClientContext ctx;
    Deadline(ctx);
    v1::AcknowledgeReply reply;
    return stub_->Acknowledge(&ctx, req, &reply);
  };
  EXPECT_TRUE(acknowledge(kWindowB).ok()) << "ignored, not an error";
  EXPECT_EQ(held(), 1u) << "another window's acknowledgement leaves it";
  EXPECT_TRUE(acknowledge(kWindowA).ok());
  EXPECT_EQ(held(), 0u);
}

TEST_F(AgentServiceTest, AFullSpoolFailsTheWindowAndKeepsWhatItHolds) {
  Serve(Identity());
  auto spool = Spool::Open(dir_ + "/spool", 1 << 20);
  ASSERT_TRUE(spool.ok());
  ASSERT_TRUE((*spool)->Put("old", kWindowB, std::string((1 << 20) - 100, 'x')).ok());
  service_->SetSpool(std::move(spool).value());
  v1::RunLoadRequest load = Load(http_->port());
  load.set_spool_key("8-hello-hello-c4-r1-a1");
  load.set_window(kWindowA);
  grpc::Status full = RunLoad(load);
  EXPECT_EQ(full.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(Contains(full.error_message(), "spool full")) << full.error_message();
  auto records = service_->spool()->Page("", UINT64_MAX);
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].key, "old");
}

// --- every kind of load ----------------------------------------------------------------------

// benchlab's own generator, wrk and h2load (stand-ins: FakeTools) take one path through RunLoad.
class AgentServiceLoadKindTest : public AgentServiceTest,
                                 public ::testing::WithParamInterface<std::string> {};

TEST_P(AgentServiceLoadKindTest, StreamsStartEndThenResultAndSpoolsItUnderItsWindow) {
  FakeTools(/*hang=*/false);
  Serve(Identity());
  auto spool = Spool::Open(dir_ + "/spool");
  ASSERT_TRUE(spool.ok());
  service_->SetSpool(std::move(spool).value());
  v1::RunLoadRequest load = Load(http_->port());
  load.set_tool(GetParam());
  load.set_spool_key("9-hello-hello-c4-r1-a1");
  load.set_window(kWindowA);

  grpc::ClientContext ctx;
  Deadline(ctx);
  auto reader = stub_->RunLoad(&ctx, load);
  std::vector<v1::RunLoadEvent> events;
  for (v1::RunLoadEvent event; reader->Read(&event);) events.push_back(event);
  grpc::Status status = reader->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind(), v1::RunLoadEvent::MEASURE_START);
  EXPECT_EQ(events[1].kind(), v1::RunLoadEvent::MEASURE_END);
  ASSERT_EQ(events[2].kind(), v1::RunLoadEvent::RESULT);
  const v1::LoadResult& result = events[2].result();
  EXPECT_EQ(result.tool(), GetParam());
  EXPECT_GT(result.requests(), 0u);
  EXPECT_FALSE(result.record_json().empty());
  EXPECT_TRUE(result.has_host()) << "the load host was watched over the measured interval";

  auto records = service_->spool()->Page("", UINT64_MAX);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].key, "9-hello-hello-c4-r1-a1.load");
  EXPECT_EQ((*records)[0].window, kWindowA);
  EXPECT_EQ((*records)[0].payload, events[2].SerializeAsString()) << "the RESULT event as sent";
}

TEST_P(AgentServiceLoadKindTest, ALoadCancelledMidwayEndsCancelledAndSpoolsNothing) {
  FakeTools(/*hang=*/true);
  Serve(Identity());
  auto spool = Spool::Open(dir_ + "/spool");
  ASSERT_TRUE(spool.ok());
  service_->SetSpool(std::move(spool).value());
  v1::RunLoadRequest load = Load(http_->port(), 30000);
  load.set_tool(GetParam());
  load.set_spool_key("10-hello-hello-c4-r1-a1");
  load.set_window(kWindowA);

  grpc::ClientContext ctx;
  Deadline(ctx, milliseconds(60000));
  auto reader = stub_->RunLoad(&ctx, load);
  v1::RunLoadEvent event;
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.kind(), v1::RunLoadEvent::MEASURE_START);
  std::this_thread::sleep_for(milliseconds(200));
  // The agent stopping cancels the call on its side, so the status read here is the agent's.
  const auto cancelled_at = Clock::now();
  service_->BeginShutdown();
  std::vector<v1::RunLoadEvent::Kind> after;
  while (reader->Read(&event)) after.push_back(event.kind());
  grpc::Status status = reader->Finish();
  EXPECT_LT(Clock::now() - cancelled_at, milliseconds(1000));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(status.error_message(), "RunLoad cancelled: the agent is stopping");
  for (v1::RunLoadEvent::Kind kind : after) {
    EXPECT_NE(kind, v1::RunLoadEvent::RESULT) << "a cancelled load sends no result";
  }
  auto records = service_->spool()->Page("", UINT64_MAX);
  ASSERT_TRUE(records.ok());
  EXPECT_TRUE(records->empty()) << "a cancelled load spools nothing";
}

INSTANTIATE_TEST_SUITE_P(Kinds, AgentServiceLoadKindTest,
                         ::testing::Values("benchlab", "wrk", "h2load"),
                         // Not `info`: INSTANTIATE_TEST_SUITE_P's own parameter has that name.
                         [](const auto& kind) { return kind.param; });

}  // namespace
}  // namespace benchlab
