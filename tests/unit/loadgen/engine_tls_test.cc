// HTTPS load under both engines (docs/load.md, "HTTPS"): keep-alive over TLS 1.3 and 1.2, the
// handshakes counted apart from requests and equal to the server's own count, the share of
// resumed handshakes as asked over a window of reconnects, a wrong certificate refused when
// verification is on, and ALPN.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>

#include "loadgen/load.h"
#include "tests/unit/loadgen/engine_param.h"
#include "tests/unit/loadgen/tls_http_server.h"
#include "tests/unit/support/temp_dir.h"
#include "tls/ca.h"

namespace benchlab {
namespace {

using std::chrono::milliseconds;

class EngineTlsTest : public EngineParamTest {
 protected:
  void SetUp() override {
    EngineParamTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_TRUE(InitCa(ca_).ok());
    ASSERT_TRUE(IssueCertificate(ca_, {"server", Role::kAgent, {"127.0.0.1"}, 30}).ok());
  }

  TlsHttpServer::Options ServerOptions() const {
    CaPaths paths(ca_);
    TlsHttpServer::Options s;
    s.cert_file = paths.Cert("server");
    s.key_file = paths.Key("server");
    return s;
  }

  LoadOptions Options(uint16_t port) const {
    LoadOptions o;
    EXPECT_TRUE(ParseUrlInto("https://127.0.0.1:" + std::to_string(port) + "/", o).ok());
    o.tls->ca_file = CaPaths(ca_).cert;
    o.connections = 2;
    o.threads = 1;
    o.duration = milliseconds(400);
    o.timeout = milliseconds(2000);
    o.engine = GetParam();
    return o;
  }

  TempDir dir_;
  std::string ca_ = dir_.path() + "/ca";
};

TEST_P(EngineTlsTest, KeepAliveRequestsAfterOneFullHandshakePerConnection) {
  TlsHttpServer server(ServerOptions());
  ASSERT_TRUE(server.ok());
  LoadOptions o = Options(server.port());
  o.connections = 3;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->requests, 100u);
  EXPECT_EQ(r->errors.Total(), 0u) << r->tls.first_error;
  EXPECT_EQ(r->status_counts[200], r->requests);
  EXPECT_EQ(r->bytes_read, r->requests * 43) << "43 bytes of every decrypted response";
  ASSERT_TRUE(r->tls.on);
  EXPECT_EQ(r->tls.version, "1.3");
  EXPECT_EQ(r->tls.alpn, "http/1.1");
  // Without warm-up the handshakes fall inside the interval: one full one per connection.
  EXPECT_EQ(r->tls.full, 3u);
  EXPECT_EQ(r->tls.resumed, 0u);
  EXPECT_EQ(r->tls.handshake_us.Count(), 3u);
  EXPECT_GT(r->tls.handshake_us.Max(), 0u);
  EXPECT_EQ(server.handshakes(), 3u);
  EXPECT_EQ(r->reconnects, 0u);
}

TEST_P(EngineTlsTest, ReconnectsResumeTheAskedShareAndAgreeWithTheServer) {
  for (double share : {0.0, 0.5, 1.0}) {
    SCOPED_TRACE("resumption " + std::to_string(share));
    TlsHttpServer server(ServerOptions());
    ASSERT_TRUE(server.ok());
    LoadOptions o = Options(server.port());
    o.requests_per_connection = 4;
    o.tls->resumption = share;
    Result<LoadResult> r = GenerateLoad(o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->errors.Total(), 0u) << r->tls.first_error;
    const uint64_t handshakes = r->tls.full + r->tls.resumed;
    ASSERT_GT(handshakes, 40u);
    // Every connection carried 4 requests, so requests and handshakes go together.
    EXPECT_NEAR(static_cast<double>(r->requests) / static_cast<double>(handshakes), 4.0, 0.5);
    EXPECT_GE(r->reconnects + o.connections, handshakes);
    // The first connection of the worker has no session to resume; after that the sequence
    // resumes exactly `share` of them, whatever the run's length.
    const double resumed = static_cast<double>(r->tls.resumed) / static_cast<double>(handshakes);
    EXPECT_NEAR(resumed, share, 0.05);
    // The server saw the same handshakes, less those still in flight when the interval ended.
    EXPECT_LE(handshakes, server.handshakes());
    EXPECT_LE(server.handshakes() - handshakes, static_cast<uint64_t>(o.connections));
    EXPECT_LE(r->tls.resumed, server.resumed());
    EXPECT_LE(server.resumed() - r->tls.resumed, static_cast<uint64_t>(o.connections));
  }
}

TEST_P(EngineTlsTest, Tls12IsPinnedAndResumes) {
  TlsHttpServer::Options s = ServerOptions();
  s.max_version = TLS1_2_VERSION;
  TlsHttpServer server(s);
  ASSERT_TRUE(server.ok());
  LoadOptions o = Options(server.port());
  o.tls->version = "1.2";
  o.requests_per_connection = 8;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->errors.Total(), 0u) << r->tls.first_error;
  EXPECT_GT(r->tls.resumed, 0u);
  EXPECT_EQ(r->tls.version, "1.2");

  // 1.3 only against a 1.2 server: every handshake is refused, and says why.
  o.tls->version = "1.3";
  o.requests_per_connection = 0;
  o.duration = milliseconds(200);
  r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 0u);
  EXPECT_GT(r->tls.failed, 0u);
  EXPECT_GT(r->errors.connect, 0u);
  EXPECT_NE(r->tls.first_error.find("TLS handshake"), std::string::npos) << r->tls.first_error;
}

TEST_P(EngineTlsTest, AWrongCertificateIsRefusedWhenVerifying) {
  TlsHttpServer server(ServerOptions());
  ASSERT_TRUE(server.ok());
  const std::string other = dir_.path() + "/other";
  ASSERT_TRUE(InitCa(other).ok());
  LoadOptions o = Options(server.port());
  o.tls->ca_file = CaPaths(other).cert;
  o.duration = milliseconds(200);
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 0u);
  EXPECT_GT(r->tls.failed, 0u);
  // The chain does not lead to the CA trusted: OpenSSL's words for it.
  EXPECT_NE(r->tls.first_error.find("unable to get local issuer certificate"), std::string::npos)
      << r->tls.first_error;
  EXPECT_NE(FormatLoadResult(o, *r).find("First TLS failure"), std::string::npos);

  // A name the certificate does not hold is refused too.
  o.tls->ca_file = CaPaths(ca_).cert;
  o.tls->server_name = "elsewhere.example";
  r = GenerateLoad(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->requests, 0u);
  EXPECT_NE(r->tls.first_error.find("mismatch"), std::string::npos) << r->tls.first_error;

  // Without verification the same server is measured.
  o.tls->verify = false;
  o.tls->ca_file = CaPaths(other).cert;
  r = GenerateLoad(o);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->requests, 0u);
  EXPECT_EQ(r->errors.Total(), 0u) << r->tls.first_error;
}

TEST_P(EngineTlsTest, AlpnOtherThanHttp11IsRefusedAndNoAlpnIsAccepted) {
  TlsHttpServer::Options s = ServerOptions();
  s.prefer_alpn = "h2";
  TlsHttpServer server(s);
  ASSERT_TRUE(server.ok());
  LoadOptions o = Options(server.port());
  o.tls->alpn = {"h2", "http/1.1"};
  o.duration = milliseconds(200);
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, 0u);
  EXPECT_NE(r->tls.first_error.find("ALPN \"h2\""), std::string::npos) << r->tls.first_error;

  o.tls->alpn = {};
  r = GenerateLoad(o);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->requests, 0u);
  EXPECT_EQ(r->tls.alpn, "");
  EXPECT_EQ(r->errors.Total(), 0u) << r->tls.first_error;
}

TEST_P(EngineTlsTest, PipelinedRequestsOverTls) {
  TlsHttpServer server(ServerOptions());
  ASSERT_TRUE(server.ok());
  LoadOptions o = Options(server.port());
  o.depth = 16;
  o.requests_per_connection = 64;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->requests, 500u);
  EXPECT_EQ(r->errors.Total(), 0u) << r->tls.first_error;
  EXPECT_EQ(r->retries, 0u);
  EXPECT_EQ(r->sent, r->requests);
}

TEST_P(EngineTlsTest, OpenLoopOverTlsWithReconnects) {
  TlsHttpServer server(ServerOptions());
  ASSERT_TRUE(server.ok());
  LoadOptions o = Options(server.port());
  o.rate = 2000;
  o.max_conns = 8;
  o.requests_per_connection = 10;
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->errors.Total(), 0u) << r->tls.first_error;
  EXPECT_EQ(r->dropped, 0u);
  EXPECT_EQ(r->sent, r->scheduled);
  EXPECT_EQ(r->requests, r->sent);
  EXPECT_GT(r->tls.full + r->tls.resumed, 40u);
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineTlsTest, kEngines, EngineParamName);

TEST(LoadTlsOptionsTest, BadValuesAreRefusedBeforeAnyConnection) {
  LoadOptions o;
  ASSERT_TRUE(ParseUrlInto("https://127.0.0.1:1/", o).ok());
  o.tls->version = "1.1";
  Result<LoadResult> r = GenerateLoad(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tls.version"), std::string::npos);
  o.tls->version = "1.3";
  o.tls->alpn = {"h2"};
  r = GenerateLoad(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("http/1.1"), std::string::npos) << r.status().message();
}

TEST(LoadTlsOptionsTest, HttpsUrlsSetTlsAndDefaultToPort443) {
  LoadOptions o;
  ASSERT_TRUE(ParseUrlInto("https://127.0.0.1:1/", o).ok());
  ASSERT_TRUE(o.tls.has_value());
  EXPECT_EQ(o.port, 1);
  ASSERT_TRUE(ParseUrlInto("http://127.0.0.1/", o).ok());
  EXPECT_FALSE(o.tls.has_value());
  ASSERT_TRUE(ParseUrlInto("https://[::1]/", o).ok());
  EXPECT_EQ(o.port, 443);
}

}  // namespace
}  // namespace benchlab
