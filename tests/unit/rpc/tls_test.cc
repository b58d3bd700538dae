// Mutual TLS over real loopback sockets: a small Agent service whose DescribeHost answers with
// the caller's identity (RequireRole), certificates from tls/ca.h, and the refusals the issue
// lists: plaintext, another CA, the wrong role, the wrong name or host, a revoked certificate.
#include "rpc/tls.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <utility>

#include "benchlab/v1/agent.grpc.pb.h"
#include "tests/unit/support/fake_clock.h"
#include "tests/unit/support/forged_tls.h"
#include "tests/unit/support/temp_dir.h"
#include "tls/ca.h"
#include "tls/verify.h"

namespace benchlab {
namespace {

// Answers DescribeHost with the caller's certificate name; only coordinators may call.
class WhoService final : public v1::Agent::Service {
 public:
  explicit WhoService(TlsContext* tls) : tls_(tls) {}
  grpc::Status DescribeHost(grpc::ServerContext* ctx, const v1::DescribeHostRequest*,
                            v1::DescribeHostReply* reply) override {
    std::optional<CertificateInfo> caller;
    grpc::Status allowed = RequireRole(*ctx, tls_, {Role::kCoordinator}, &caller);
    if (!allowed.ok()) return allowed;
    reply->set_agent_name(caller ? caller->name : "(insecure)");
    return grpc::Status::OK;
  }

 private:
  TlsContext* tls_;
};

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ca_ = dir_.path() + "/ca";
    ASSERT_TRUE(InitCa(ca_).ok());
    Issue("server-1", Role::kAgent, {"127.0.0.1"});
    Issue("coord", Role::kCoordinator, {"127.0.0.1"});
    Issue("alice", Role::kOperator, {});
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  void Issue(const std::string& name, Role role, std::vector<std::string> hosts,
             const std::string& ca = "") {
    auto info = IssueCertificate(ca.empty() ? ca_ : ca, {name, role, std::move(hosts), 30});
    ASSERT_TRUE(info.ok()) << info.status().ToString();
  }
  TlsFiles Files(const std::string& name, const std::string& ca = "") {
    const std::string d = ca.empty() ? ca_ : ca;
    return {d + "/ca.pem", d + "/" + name + ".pem", d + "/" + name + ".key", d + "/crl.pem"};
  }
  std::shared_ptr<TlsContext> Load(const std::string& name, const std::string& ca = "",
                                   Clock& clock = RealClockInstance()) {
    auto tls = TlsContext::Load(Files(name, ca), clock);
    EXPECT_TRUE(tls.ok()) << tls.status().ToString();
    return tls.ok() ? *tls : nullptr;
  }

  // Serves WhoService as server-1 with mutual TLS (or plaintext when `tls` is null).
  void Serve(std::shared_ptr<TlsContext> tls) {
    server_tls_ = std::move(tls);
    service_ = std::make_unique<WhoService>(server_tls_.get());
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0",
                             server_tls_ ? server_tls_->ServerCredentials({Role::kCoordinator})
                                         : grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_ != nullptr);
    address_ = "127.0.0.1:" + std::to_string(port);
  }

  // DescribeHost over `creds` to `address` (the server's by default).
  grpc::Status Call(std::shared_ptr<grpc::ChannelCredentials> creds, std::string* name = nullptr,
                    std::string address = "") {
    auto stub = v1::Agent::NewStub(
        grpc::CreateChannel(address.empty() ? address_ : address, std::move(creds)));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::DescribeHostReply reply;
    grpc::Status status = stub->DescribeHost(&ctx, {}, &reply);
    if (name != nullptr) *name = reply.agent_name();
    return status;
  }

  TempDir dir_;
  std::string ca_;
  std::shared_ptr<TlsContext> server_tls_;
  std::unique_ptr<WhoService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

TEST_F(TlsTest, ACoordinatorReachesAnAgentAndIsKnownByItsCertificate) {
  Serve(Load("server-1"));
  auto coord = Load("coord");
  std::string name;
  grpc::Status status = Call(coord->ChannelCredentials(Role::kAgent, "server-1"), &name);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(name, "coord");
}

// The coordinator makes a channel per agent: those channels must not each cost a thread (each
// provider of certificate files watches them on a thread of its own).
TEST_F(TlsTest, ChannelsShareOneWatcherOfTheFiles) {
  auto coord = Load("coord");
  auto threads = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                         std::filesystem::directory_iterator());
  };
  std::vector<std::shared_ptr<grpc::ChannelCredentials>> credentials;
  credentials.push_back(coord->ChannelCredentials(Role::kAgent, "agent-0"));
  const auto before = threads();
  for (int i = 1; i <= 40; ++i) {
    credentials.push_back(coord->ChannelCredentials(Role::kAgent, "agent-" + std::to_string(i)));
  }
  EXPECT_LT(threads() - before, 5) << "40 more channel credentials";
}

TEST_F(TlsTest, APeersCertificateIsParsedOnceAndGarbageIsNeverRemembered) {
  auto coord = Load("coord");
  std::ifstream in(ca_ + "/server-1.pem");
  const std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (int i = 0; i < 3; ++i) {
    auto peer = coord->ParsePeer(pem);
    ASSERT_TRUE(peer.ok()) << peer.status().ToString();
    EXPECT_EQ(peer->name, "server-1");
    EXPECT_EQ(peer->role, Role::kAgent);
  }
  for (int i = 0; i < 2; ++i) {
    auto garbage = coord->ParsePeer("-----BEGIN CERTIFICATE-----\nnot one\n");
    EXPECT_FALSE(garbage.ok());
  }
}

TEST_F(TlsTest, APlaintextClientIsRefused) {
  Serve(Load("server-1"));
  grpc::Status status = Call(grpc::InsecureChannelCredentials());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST_F(TlsTest, ACertificateFromAnotherCaIsRefused) {
  Serve(Load("server-1"));
  const std::string other = dir_.path() + "/other";
  ASSERT_TRUE(InitCa(other).ok());
  Issue("coord", Role::kCoordinator, {"127.0.0.1"}, other);
  // The intruder trusts the real CA, so only the server's check can refuse it.
  TlsFiles files = Files("coord", other);
  files.ca = ca_ + "/ca.pem";
  files.crl.clear();
  auto intruder = TlsContext::Load(files);
  ASSERT_FALSE(intruder.ok());  // its own certificate does not verify against the CA it names
  EXPECT_NE(intruder.status().message().find("does not verify"), std::string::npos);
  auto own_ca = Load("coord", other);
  grpc::Status status = Call(own_ca->ChannelCredentials(Role::kAgent, "server-1"));
  EXPECT_FALSE(status.ok());
}

TEST_F(TlsTest, TheWrongRoleIsRefusedAtTheHandshake) {
  Serve(Load("server-1"));
  auto alice = Load("alice");  // an operator may not drive an agent
  grpc::Status status = Call(alice->ChannelCredentials(Role::kAgent, "server-1"));
  EXPECT_FALSE(status.ok());
}

TEST_F(TlsTest, AnAgentOfAnotherNameOrRoleIsRefused) {
  Serve(Load("server-1"));
  auto coord = Load("coord");
  EXPECT_FALSE(Call(coord->ChannelCredentials(Role::kAgent, "server-2")).ok());
  EXPECT_FALSE(Call(coord->ChannelCredentials(Role::kCoordinator)).ok());
  EXPECT_TRUE(Call(coord->ChannelCredentials(Role::kAgent, "server-1")).ok());
}

TEST_F(TlsTest, AServerWhoseCertificateDoesNotCoverTheHostDialledIsRefused) {
  // server-9 is issued for 127.0.0.2 only and listens on 127.0.0.1, where it is dialled. (An IP
  // address, not a name: no resolver runs, whose library leaks under LeakSanitizer.)
  Issue("server-9", Role::kAgent, {"127.0.0.2"});
  Serve(Load("server-9"));
  auto coord = Load("coord");
  EXPECT_FALSE(Call(coord->ChannelCredentials(Role::kAgent, "server-9")).ok());
}

TEST_F(TlsTest, ARevokedCertificateIsRefusedOnceTheListChanges) {
  FakeClock clock;
  Serve(Load("server-1", "", clock));
  auto coord = Load("coord");
  auto creds = coord->ChannelCredentials(Role::kAgent, "server-1");
  auto stub = v1::Agent::NewStub(grpc::CreateChannel(address_, creds));
  auto call = [&] {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::DescribeHostReply reply;
    return stub->DescribeHost(&ctx, {}, &reply);
  };
  ASSERT_TRUE(call().ok());
  ASSERT_TRUE(RevokeCertificate(ca_, "coord").ok());
  // The server re-reads a changed CRL at most once a second: within it, the old list stands.
  clock.Advance(std::chrono::milliseconds(999));
  EXPECT_TRUE(call().ok());
  clock.Advance(std::chrono::milliseconds(1));
  grpc::Status same_channel = call();
  EXPECT_EQ(same_channel.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << same_channel.error_message();
  EXPECT_NE(same_channel.error_message().find("revoked"), std::string::npos);
  EXPECT_FALSE(Call(creds).ok());  // a new connection fails its handshake
}

TEST_F(TlsTest, TheCrlIsReadAgainOnceASecondHasPassedOnTheContextsClock) {
  FakeClock clock;
  auto server = Load("server-1", "", clock);
  ASSERT_NE(server, nullptr);
  const std::string serial = Load("coord")->own().serial;
  EXPECT_FALSE(server->Revoked(serial));
  ASSERT_TRUE(RevokeCertificate(ca_, "coord").ok());
  clock.Advance(std::chrono::milliseconds(999));
  EXPECT_FALSE(server->Revoked(serial)) << "the list was read again within the second";
  clock.Advance(std::chrono::milliseconds(1));
  EXPECT_TRUE(server->Revoked(serial)) << "a second on, the changed list is read";
}

TEST_F(TlsTest, TheCaFileIsReadAgainOnceASecondHasPassedOnTheContextsClock) {
  FakeClock clock;
  auto server = Load("server-1", "", clock);
  ASSERT_NE(server, nullptr);
  const std::string before = server->CaPem();
  const std::string other = dir_.path() + "/other";
  ASSERT_TRUE(InitCa(other).ok());
  const std::string replaced = forged::ReadText(other + "/ca.pem");
  ASSERT_NE(replaced, before);
  std::filesystem::copy_file(other + "/ca.pem", ca_ + "/ca.pem",
                             std::filesystem::copy_options::overwrite_existing);
  clock.Advance(std::chrono::milliseconds(999));
  EXPECT_EQ(server->CaPem(), before);
  clock.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(server->CaPem(), replaced);
}

TEST_F(TlsTest, APeersChainIsVerifiedAgainstTheCaWithItsReason) {
  const std::string ca = forged::ReadText(ca_ + "/ca.pem");
  auto check = [&](const std::string& pem) { return VerifyPeerChain(ca, pem, pem, true); };
  EXPECT_EQ(check(forged::ReadText(ca_ + "/alice.pem")).fault, ChainFault::kNone);
  Issue("old", Role::kOperator, {});
  ASSERT_EQ(forged::Reissue(ca_, "old", {.starts_in_s = -7200, .ends_in_s = -3600}), "");
  EXPECT_EQ(check(forged::ReadText(ca_ + "/old.pem")).fault, ChainFault::kExpired);
  Issue("early", Role::kOperator, {});
  ASSERT_EQ(forged::Reissue(ca_, "early", {.starts_in_s = 3600, .ends_in_s = 7200}), "");
  EXPECT_EQ(check(forged::ReadText(ca_ + "/early.pem")).fault, ChainFault::kNotYetValid);
  const std::string other = dir_.path() + "/other";
  ASSERT_TRUE(InitCa(other).ok());
  Issue("alice", Role::kOperator, {}, other);
  const ChainCheck foreign = check(forged::ReadText(other + "/alice.pem"));
  EXPECT_EQ(foreign.fault, ChainFault::kUnknownCa);
  EXPECT_EQ(foreign.detail, "unable to get local issuer certificate");
  // The CA's own certificate presented as a peer's is not one it issued to a client.
  EXPECT_EQ(check(forged::ReadText(other + "/ca.pem")).fault, ChainFault::kUnknownCa);
  EXPECT_EQ(check("not a certificate").fault, ChainFault::kInvalid);
}

// Collects what a server's TlsContext reports of the handshakes it refused.
class RefusalsSeen {
 public:
  explicit RefusalsSeen(TlsContext& tls) : tls_(tls) {
    tls.SetRefusalSink([this](const HandshakeRefusal& r) {
      std::lock_guard lock(mu_);
      seen_.push_back(r);
    });
  }
  ~RefusalsSeen() { tls_.SetRefusalSink(nullptr); }
  std::vector<HandshakeRefusal> Take() {
    std::lock_guard lock(mu_);
    return std::exchange(seen_, {});
  }

 private:
  TlsContext& tls_;
  std::mutex mu_;
  std::vector<HandshakeRefusal> seen_;
};

// Each certificate a server refuses at the handshake is reported once, with what it says and why:
// before, gRPC's TLS refused an expired one or one from another CA before benchlab saw it, and
// benchlab's own reasons went nowhere.
TEST_F(TlsTest, EveryRefusedHandshakeIsReportedWithItsCertificateAndReason) {
  Serve(Load("server-1"));
  RefusalsSeen seen(*server_tls_);
  const std::string other = dir_.path() + "/other";
  ASSERT_TRUE(InitCa(other).ok());
  Issue("stranger", Role::kCoordinator, {}, other);
  Issue("old", Role::kCoordinator, {});
  ASSERT_EQ(forged::Reissue(ca_, "old", {.starts_in_s = -7200, .ends_in_s = -3600}), "");
  Issue("early", Role::kCoordinator, {});
  ASSERT_EQ(forged::Reissue(ca_, "early", {.starts_in_s = 3600, .ends_in_s = 7200}), "");
  Issue("anon", Role::kCoordinator, {});
  ASSERT_EQ(forged::Reissue(ca_, "anon", {.drop_identity = true}), "");
  struct Case {
    std::string name, ca;
    HandshakeFault fault;
    std::string identity;
  };
  for (const Case& c : std::vector<Case>{
           {"old", ca_, HandshakeFault::kExpired, "benchlab://coordinator/old"},
           {"early", ca_, HandshakeFault::kNotYetValid, "benchlab://coordinator/early"},
           {"stranger", other, HandshakeFault::kUnknownCa, "benchlab://coordinator/stranger"},
           {"alice", ca_, HandshakeFault::kWrongRole, "benchlab://operator/alice"},
           {"anon", ca_, HandshakeFault::kNotBenchlab, ""}}) {
    SCOPED_TRACE(c.name);
    auto presented = ParseCertificatePem(forged::ReadText(c.ca + "/" + c.name + ".pem"), c.name,
                                         Identity::kNone);
    ASSERT_TRUE(presented.ok());
    grpc::Status status = Call(forged::RawCredentials(ca_ + "/ca.pem", c.ca + "/" + c.name + ".pem",
                                                      c.ca + "/" + c.name + ".key"));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
    auto refusals = seen.Take();
    ASSERT_EQ(refusals.size(), 1u);
    const HandshakeRefusal& r = refusals[0];
    EXPECT_EQ(r.fault, c.fault) << DescribeRefusal(r);
    EXPECT_EQ(r.identity, c.identity);
    EXPECT_EQ(r.serial, presented->serial);
    EXPECT_NE(r.subject.find("CN=" + c.name), std::string::npos) << r.subject;
    EXPECT_EQ(r.peer, "");  // a server's verifier is not told the client's address
    EXPECT_EQ(r.suppressed, 0u);
    EXPECT_NE(r.message.find(presented->serial), std::string::npos) << r.message;
  }
  // A certificate that may connect is not reported.
  EXPECT_TRUE(Call(Load("coord")->ChannelCredentials(Role::kAgent, "server-1")).ok());
  EXPECT_TRUE(seen.Take().empty());
}

// A client retrying with a refused certificate is reported once per kRefusalWindow; the count of
// the others is reported with the next report of its kind, or when the server stops.
TEST_F(TlsTest, ABurstOfRefusalsIsReportedOnceWithItsCount) {
  Serve(Load("server-1"));
  RefusalsSeen seen(*server_tls_);
  Issue("old", Role::kCoordinator, {});
  ASSERT_EQ(forged::Reissue(ca_, "old", {.starts_in_s = -7200, .ends_in_s = -3600}), "");
  constexpr int kBurst = 50;
  for (int i = 0; i < kBurst; ++i) {
    EXPECT_FALSE(
        Call(forged::RawCredentials(ca_ + "/ca.pem", ca_ + "/old.pem", ca_ + "/old.key")).ok());
  }
  auto reported = seen.Take();
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0].fault, HandshakeFault::kExpired);
  EXPECT_FALSE(reported[0].summary);
  server_tls_->FlushRefusals(/*all=*/true);
  auto counted = seen.Take();
  ASSERT_EQ(counted.size(), 1u);
  EXPECT_TRUE(counted[0].summary);
  // At least one handshake per call; gRPC may try a failed connection once more.
  EXPECT_GE(counted[0].suppressed, static_cast<uint64_t>(kBurst - 1));
  EXPECT_NE(DescribeRefusal(counted[0]).find("not reported one by one"), std::string::npos);
}

TEST_F(TlsTest, AnInsecureListenerLetsEveryCallerThroughAsNobody) {
  Serve(nullptr);
  std::string name;
  ASSERT_TRUE(Call(grpc::InsecureChannelCredentials(), &name).ok());
  EXPECT_EQ(name, "(insecure)");
}

TEST_F(TlsTest, LoadNamesTheFileThatIsWrong) {
  TlsFiles missing = Files("coord");
  missing.key.clear();
  auto a = TlsContext::Load(missing);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message().rfind("--tls-key: missing", 0), 0u) << a.status().message();

  TlsFiles swapped = Files("coord");
  swapped.key = ca_ + "/alice.key";
  auto b = TlsContext::Load(swapped);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("is not the key of"), std::string::npos);

  const std::string kept_key = dir_.path() + "/alice.key";
  std::filesystem::copy_file(ca_ + "/alice.key", kept_key);
  ASSERT_TRUE(RevokeCertificate(ca_, "alice").ok());
  TlsFiles revoked = Files("alice");
  revoked.cert = ca_ + "/revoked/" +
                 std::filesystem::directory_iterator(ca_ + "/revoked")->path().filename().string();
  revoked.key = kept_key;
  auto c = TlsContext::Load(revoked);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("is revoked by"), std::string::npos) << c.status().message();
}

TEST(TlsFilesTest, FlagsWinOverTheEnvironment) {
  ::setenv("BENCHLAB_TLS_CA", "/env/ca.pem", 1);
  ::setenv("BENCHLAB_TLS_CERT", "/env/me.pem", 1);
  TlsFiles files = TlsFilesWithEnvironment({"", "/flag/me.pem", "", ""});
  ::unsetenv("BENCHLAB_TLS_CA");
  ::unsetenv("BENCHLAB_TLS_CERT");
  EXPECT_EQ(files.ca, "/env/ca.pem");
  EXPECT_EQ(files.cert, "/flag/me.pem");
  EXPECT_EQ(files.key, "");
}

}  // namespace
}  // namespace benchlab
