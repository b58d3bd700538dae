// The dashboard's HTTPS key pair loaded into a TLS context as the HTTP server's UseTls hands it
// over: a chain and its key load; a missing file, a key of another certificate and a missing
// name each fail with InvalidArgument naming what is wrong (docs/security.md, "The dashboard").
#include "tls/https.h"

#include <gtest/gtest.h>
#include <openssl/err.h>

#include <memory>
#include <string>

#include "tests/unit/support/temp_dir.h"
#include "tls/ca.h"

namespace benchlab {
namespace {

struct CtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using CtxPtr = std::unique_ptr<SSL_CTX, CtxFree>;

class HttpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(InitCa(dir_.path()).ok());
    ASSERT_TRUE(
        IssueCertificate(dir_.path(), {"dashboard", Role::kCoordinator, {"127.0.0.1"}, 30}).ok());
    ASSERT_NE(ctx_, nullptr);
  }

  TempDir dir_;
  const CaPaths paths_{dir_.path()};
  CtxPtr ctx_{SSL_CTX_new(TLS_server_method())};
};

TEST_F(HttpsTest, LoadsAChainAndItsKeyForTls12AtLeast) {
  const Status loaded = LoadHttpsKeyPair(*ctx_, paths_.Cert("dashboard"), paths_.Key("dashboard"));
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(SSL_CTX_get_min_proto_version(ctx_.get()), TLS1_2_VERSION);
  EXPECT_EQ(ERR_peek_error(), 0u) << "nothing is left on OpenSSL's error queue";
}

TEST_F(HttpsTest, RefusesAKeyOfAnotherCertificateNamingTheKey) {
  // ca.key is a well-formed key, but not the dashboard certificate's.
  const Status loaded = LoadHttpsKeyPair(*ctx_, paths_.Cert("dashboard"), paths_.key);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(loaded.message().find(paths_.key), std::string::npos) << loaded.message();
}

TEST_F(HttpsTest, RefusesAMissingCertificateFileNamingIt) {
  const std::string missing = dir_.path() + "/missing.pem";
  const Status loaded = LoadHttpsKeyPair(*ctx_, missing, paths_.Key("dashboard"));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(loaded.message().find(missing + ": not a PEM certificate chain"), std::string::npos)
      << loaded.message();
  EXPECT_EQ(loaded.message().find("no detail from OpenSSL"), std::string::npos)
      << "OpenSSL's reason is given: " << loaded.message();
}

TEST_F(HttpsTest, NeedsBothFiles) {
  for (const auto& [cert, key] : {std::pair<std::string, std::string>{paths_.Cert("dashboard"), ""},
                                  {"", paths_.Key("dashboard")}}) {
    const Status loaded = LoadHttpsKeyPair(*ctx_, cert, key);
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(loaded.message().find("--http-tls-cert and --http-tls-key"), std::string::npos)
        << loaded.message();
  }
}

}  // namespace
}  // namespace benchlab
