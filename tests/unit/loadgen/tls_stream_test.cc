// TlsClient and TlsStream against an OpenSSL server over memory BIOs (no sockets): full and
// resumed handshakes, ALPN, the version pinned, certificates refused when verification is on,
// and the resumption share.
#include "loadgen/tls_stream.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <string>

#include "tests/unit/support/temp_dir.h"
#include "tls/ca.h"

namespace benchlab {
namespace {

// A server end over memory BIOs, with a certificate of benchlab's CA for 127.0.0.1.
class MemoryTlsServer {
 public:
  MemoryTlsServer(const std::string& ca_dir, const std::string& name) {
    ctx_ = SSL_CTX_new(TLS_server_method());
    CaPaths paths(ca_dir);
    ok_ = SSL_CTX_use_certificate_chain_file(ctx_, paths.Cert(name).c_str()) == 1 &&
          SSL_CTX_use_PrivateKey_file(ctx_, paths.Key(name).c_str(), SSL_FILETYPE_PEM) == 1;
    SSL_CTX_set_alpn_select_cb(
        ctx_,
        [](SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
           unsigned inlen, void*) {
          static const unsigned char kHttp11[] = "\x08http/1.1";
          unsigned char* selected = nullptr;
          if (SSL_select_next_proto(&selected, outlen, kHttp11, 9, in, inlen) !=
              OPENSSL_NPN_NEGOTIATED) {
            return SSL_TLSEXT_ERR_NOACK;
          }
          *out = selected;
          return SSL_TLSEXT_ERR_OK;
        },
        nullptr);
  }
  ~MemoryTlsServer() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    SSL_CTX_free(ctx_);
  }
  bool ok() const { return ok_; }
  SSL_CTX* ctx() { return ctx_; }

  void Accept() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    ssl_ = SSL_new(ctx_);
    in_ = BIO_new(BIO_s_mem());
    out_ = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(in_, -1);
    SSL_set_bio(ssl_, in_, out_);
    SSL_set_accept_state(ssl_);
  }

  // Moves bytes both ways until neither side has any; the server's plaintext into `got`.
  void Pump(TlsStream& client, std::string& client_plain, std::string* got = nullptr) {
    for (int turn = 0; turn < 20; ++turn) {
      bool moved = false;
      // In two pieces, as a short send would leave them.
      std::string_view to_server = client.Outgoing();
      if (!to_server.empty()) {
        const size_t first = to_server.size() / 2;
        BIO_write(in_, to_server.data(), static_cast<int>(first));
        client.Sent(first);
        to_server = client.Outgoing();
        BIO_write(in_, to_server.data(), static_cast<int>(to_server.size()));
        client.Sent(to_server.size());
        moved = true;
      }
      char buf[16384];
      int n;
      while ((n = SSL_read(ssl_, buf, sizeof(buf))) > 0) {
        if (got != nullptr) got->append(buf, static_cast<size_t>(n));
      }
      char* data = nullptr;
      const long pending = BIO_get_mem_data(out_, &data);
      if (pending > 0) {
        const std::string bytes(data, static_cast<size_t>(pending));
        BIO_reset(out_);
        client.Feed(bytes.data(), bytes.size(), client_plain);
        moved = true;
      }
      if (!moved) return;
    }
  }

  // Ciphertext the client wrote, delivered by the test itself.
  void Receive(std::string_view bytes) {
    BIO_write(in_, bytes.data(), static_cast<int>(bytes.size()));
  }

  void Send(std::string_view plain) {
    SSL_write(ssl_, plain.data(), static_cast<int>(plain.size()));
  }
  SSL* ssl() { return ssl_; }

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;
  BIO* out_ = nullptr;
  bool ok_ = false;
};

class TlsStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(InitCa(ca_).ok());
    ASSERT_TRUE(IssueCertificate(ca_, {"server", Role::kAgent, {"127.0.0.1"}, 30}).ok());
  }
  TlsLoadOptions Options() const {
    TlsLoadOptions o;
    o.ca_file = CaPaths(ca_).cert;
    return o;
  }

  TempDir dir_;
  std::string ca_ = dir_.path() + "/ca";
};

TEST_F(TlsStreamTest, AFullHandshakeThenRequestAndResponse) {
  MemoryTlsServer server(ca_, "server");
  ASSERT_TRUE(server.ok());
  auto client = TlsClient::Create(Options(), "127.0.0.1");
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  TlsStream stream(**client);
  server.Accept();
  ASSERT_TRUE(stream.Begin(false).ok());
  EXPECT_FALSE(stream.Outgoing().empty()) << "the ClientHello";
  std::string plain, got;
  server.Pump(stream, plain);
  ASSERT_EQ(stream.state(), TlsStream::State::kOpen) << stream.error();
  EXPECT_FALSE(stream.resumed());
  EXPECT_EQ(stream.alpn(), "http/1.1");
  EXPECT_EQ(SSL_version(server.ssl()), TLS1_3_VERSION);
  ASSERT_TRUE(stream.Write("GET / HTTP/1.1\r\n\r\n").ok());
  server.Pump(stream, plain, &got);
  EXPECT_EQ(got, "GET / HTTP/1.1\r\n\r\n");
  server.Send("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  server.Pump(stream, plain);
  EXPECT_EQ(plain, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  EXPECT_NE((*client)->session(), nullptr) << "the server's ticket was kept";
}

TEST_F(TlsStreamTest, OutgoingBytesStayPutWhileMoreRecordsAreMade) {
  MemoryTlsServer server(ca_, "server");
  auto client = TlsClient::Create(Options(), "127.0.0.1");
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  TlsStream stream(**client);
  std::string plain, got;
  server.Accept();
  ASSERT_TRUE(stream.Begin(false).ok());
  server.Pump(stream, plain);
  ASSERT_EQ(stream.state(), TlsStream::State::kOpen) << stream.error();
  ASSERT_TRUE(stream.Write("first").ok());
  const std::string_view flight = stream.Outgoing();
  const std::string copy(flight);
  ASSERT_FALSE(copy.empty());
  // An io_uring send points at `flight` now; a second request is encrypted meanwhile.
  ASSERT_TRUE(stream.Write(std::string(20000, 'x')).ok());
  EXPECT_EQ(stream.Outgoing().data(), flight.data());
  EXPECT_EQ(std::string(flight), copy);
  server.Receive(flight);
  stream.Sent(flight.size());
  EXPECT_GT(stream.Outgoing().size(), 20000u) << "the second request's records come next";
  server.Pump(stream, plain, &got);  // delivers the rest: the server sees both, in order
  EXPECT_EQ(got, "first" + std::string(20000, 'x'));
}

TEST_F(TlsStreamTest, TheNextConnectionResumesWithTheTicket) {
  MemoryTlsServer server(ca_, "server");
  auto client = TlsClient::Create(Options(), "127.0.0.1");
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  TlsStream stream(**client);
  std::string plain;
  server.Accept();
  ASSERT_TRUE(stream.Begin(true).ok());
  server.Pump(stream, plain);
  ASSERT_EQ(stream.state(), TlsStream::State::kOpen) << stream.error();
  EXPECT_FALSE(stream.resumed()) << "no session yet: the first handshake is full";
  // The same stream, reused for a new connection (SSL_clear), resumes.
  server.Accept();
  ASSERT_TRUE(stream.Begin(true).ok());
  server.Pump(stream, plain);
  ASSERT_EQ(stream.state(), TlsStream::State::kOpen) << stream.error();
  EXPECT_TRUE(stream.resumed());
  // And a connection told not to resume makes a full handshake.
  server.Accept();
  ASSERT_TRUE(stream.Begin(false).ok());
  server.Pump(stream, plain);
  ASSERT_EQ(stream.state(), TlsStream::State::kOpen) << stream.error();
  EXPECT_FALSE(stream.resumed());
}

TEST_F(TlsStreamTest, VersionOneTwoIsPinned) {
  MemoryTlsServer server(ca_, "server");
  TlsLoadOptions o = Options();
  o.version = "1.2";
  auto client = TlsClient::Create(o, "127.0.0.1");
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  TlsStream stream(**client);
  std::string plain;
  server.Accept();
  ASSERT_TRUE(stream.Begin(false).ok());
  server.Pump(stream, plain);
  ASSERT_EQ(stream.state(), TlsStream::State::kOpen) << stream.error();
  EXPECT_EQ(SSL_version(server.ssl()), TLS1_2_VERSION);
}

TEST_F(TlsStreamTest, ACertificateOfAnotherCaOrNameIsRefusedWhenVerifying) {
  MemoryTlsServer server(ca_, "server");
  const std::string other = dir_.path() + "/other";
  ASSERT_TRUE(InitCa(other).ok());
  TlsLoadOptions wrong_ca = Options();
  wrong_ca.ca_file = CaPaths(other).cert;
  TlsLoadOptions wrong_name = Options();
  wrong_name.server_name = "db.example";
  for (const TlsLoadOptions& o : {wrong_ca, wrong_name}) {
    auto client = TlsClient::Create(o, "127.0.0.1");
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    TlsStream stream(**client);
    std::string plain;
    server.Accept();
    ASSERT_TRUE(stream.Begin(false).ok());
    server.Pump(stream, plain);
    EXPECT_EQ(stream.state(), TlsStream::State::kFailed);
    EXPECT_NE(stream.error().find("TLS handshake"), std::string::npos) << stream.error();
  }
  // Without verification the same certificate is accepted.
  wrong_ca.verify = false;
  auto client = TlsClient::Create(wrong_ca, "127.0.0.1");
  ASSERT_TRUE(client.ok());
  TlsStream stream(**client);
  std::string plain;
  server.Accept();
  ASSERT_TRUE(stream.Begin(false).ok());
  server.Pump(stream, plain);
  EXPECT_EQ(stream.state(), TlsStream::State::kOpen) << stream.error();
}

TEST_F(TlsStreamTest, TheResumptionShareIsExactOverAnyRun) {
  for (double share : {0.0, 0.25, 0.5, 0.9, 1.0}) {
    TlsLoadOptions o = Options();
    o.resumption = share;
    auto client = TlsClient::Create(o, "127.0.0.1");
    ASSERT_TRUE(client.ok());
    int resumed = 0;
    for (int i = 0; i < 100; ++i) resumed += (*client)->NextResumes() ? 1 : 0;
    EXPECT_EQ(resumed, static_cast<int>(share * 100 + 0.5)) << share;
  }
}

TEST(TlsOptionsTest, BadValuesAreNamed) {
  TlsLoadOptions o;
  o.resumption = 1.5;
  EXPECT_NE(ValidateTlsOptions(o).message().find("tls.resumption"), std::string::npos);
  o = {};
  o.version = "1.1";
  EXPECT_NE(ValidateTlsOptions(o).message().find("tls.version"), std::string::npos);
  o = {};
  o.alpn = {""};
  EXPECT_NE(ValidateTlsOptions(o).message().find("tls.alpn"), std::string::npos);
  o = {};
  o.ca_file = "/nonexistent/ca.pem";
  auto client = TlsClient::Create(o, "127.0.0.1");
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.status().message().find("tls.ca"), std::string::npos);
}

}  // namespace
}  // namespace benchlab
