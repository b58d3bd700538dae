// A TLS target's certificate files (tls/ca.h, MakeTargetTls), read back with OpenSSL: the names
// the certificate is for, its key, its chain to the run directory's CA, the files' modes.
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "tests/unit/support/temp_dir.h"
#include "tls/ca.h"
#include "tls/verify.h"

namespace benchlab {
namespace {

std::string TlsFileText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

mode_t TlsFileMode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

X509* ParseCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

EVP_PKEY* ParseKey(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return key;
}

TEST(TargetTlsTest, MakesACaACertificateForItsHostsAndAPrivateKey) {
  TempDir dir;
  auto ca_pem = MakeTargetTls(dir.path(), {"10.1.2.3", "lab-server.example", "127.0.0.1"});
  ASSERT_TRUE(ca_pem.ok()) << ca_pem.status().ToString();
  const TargetTlsFiles files(dir.path());
  EXPECT_EQ(files.ca, dir.path() + "/tls_ca.pem");
  EXPECT_EQ(files.cert, dir.path() + "/tls_cert.pem");
  EXPECT_EQ(files.key, dir.path() + "/tls_key.pem");
  EXPECT_EQ(TlsFileText(files.ca), *ca_pem) << "the CA returned is the one written";
  EXPECT_EQ(TlsFileMode(files.key), 0600u);
  EXPECT_EQ(TlsFileMode(files.cert), 0644u);
  EXPECT_EQ(TlsFileMode(files.ca), 0644u);
  EXPECT_EQ(ca_pem->find("PRIVATE KEY"), std::string::npos);
  // The CA's key is never written: the directory holds the three files and nothing else.
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 3u);

  const std::string cert_pem = TlsFileText(files.cert);
  auto info = ParseCertificatePem(cert_pem, files.cert, Identity::kNone);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->hosts,
            (std::vector<std::string>{"localhost", "127.0.0.1", "10.1.2.3", "lab-server.example"}));
  const auto lifetime =
      std::chrono::duration_cast<std::chrono::minutes>(info->not_after - info->not_before);
  EXPECT_EQ(lifetime.count(), 2 * 24 * 60 + 5) << "two days from five minutes ago";

  X509* cert = ParseCert(cert_pem);
  EVP_PKEY* key = ParseKey(TlsFileText(files.key));
  ASSERT_NE(cert, nullptr);
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(X509_check_private_key(cert, key), 1) << "the key is the certificate's";
  EXPECT_EQ(X509_check_host(cert, "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(cert, "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(cert, "10.1.2.3", 0), 1);
  EXPECT_NE(X509_check_host(cert, "example.org", 0, 0, nullptr), 1);
  EVP_PKEY_free(key);
  X509_free(cert);

  // The chain verifies against tls_ca.pem as a server's, and against no other CA.
  const ChainCheck own = VerifyPeerChain(*ca_pem, cert_pem, "", /*peer_is_client=*/false);
  EXPECT_EQ(own.fault, ChainFault::kNone) << own.detail;
  TempDir other;
  auto other_ca = MakeTargetTls(other.path(), {});
  ASSERT_TRUE(other_ca.ok()) << other_ca.status().ToString();
  EXPECT_EQ(VerifyPeerChain(*other_ca, cert_pem, "", false).fault, ChainFault::kUnknownCa);
  EXPECT_NE(*other_ca, *ca_pem) << "every run directory has its own CA";
}

TEST(TargetTlsTest, NothingIsOverwrittenAndABadHostIsNamed) {
  TempDir dir;
  ASSERT_TRUE(MakeTargetTls(dir.path(), {}).ok());
  const std::string before = TlsFileText(dir.path() + "/tls_key.pem");
  auto again = MakeTargetTls(dir.path(), {});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(TlsFileText(dir.path() + "/tls_key.pem"), before);

  TempDir bad;
  auto refused = MakeTargetTls(bad.path(), {"not a host"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("\"not a host\""), std::string::npos)
      << refused.status().message();
  EXPECT_FALSE(std::filesystem::exists(bad.path() + "/tls_key.pem"));
}

}  // namespace
}  // namespace benchlab
