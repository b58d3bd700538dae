// The CA directory: what `benchlab ca init`, `ca issue` and `ca revoke` write, read back by
// ParseCertificatePem, and checked the way a TLS peer checks a chain (OpenSSL's X509_verify_cert,
// with and without the CRL).
#include "tls/ca.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/unit/support/temp_dir.h"
#include "tls/verify.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;
using std::chrono::hours;
using std::chrono::system_clock;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

mode_t Mode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// X509_verify_cert of `leaf` against `ca` (and `crl` when given): X509_V_OK or the error.
int Verify(const std::string& ca_pem, const std::string& leaf_pem,
           const std::string& crl_pem = "") {
  BIO* ca_bio = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
  BIO* leaf_bio = BIO_new_mem_buf(leaf_pem.data(), static_cast<int>(leaf_pem.size()));
  X509* ca = PEM_read_bio_X509(ca_bio, nullptr, nullptr, nullptr);
  X509* leaf = PEM_read_bio_X509(leaf_bio, nullptr, nullptr, nullptr);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  if (!crl_pem.empty()) {
    BIO* crl_bio = BIO_new_mem_buf(crl_pem.data(), static_cast<int>(crl_pem.size()));
    X509_CRL* crl = PEM_read_bio_X509_CRL(crl_bio, nullptr, nullptr, nullptr);
    X509_STORE_add_crl(store, crl);
    X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
    X509_CRL_free(crl);
    BIO_free(crl_bio);
  }
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  const int ok = X509_verify_cert(ctx);
  const int error = ok == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(leaf);
  X509_free(ca);
  BIO_free(leaf_bio);
  BIO_free(ca_bio);
  return error;
}

// The serials the CA directory's CRL lists, read as daemons read it (tls/verify.h: the CA's
// signature is checked first).
Result<std::vector<std::string>> Serials(const std::string& ca) {
  auto serials =
      ReadCrl({ca + "/ca.pem", Read(ca + "/ca.pem")}, {ca + "/crl.pem", Read(ca + "/crl.pem")});
  if (!serials.ok()) return serials.status();
  return std::vector<std::string>(serials->begin(), serials->end());
}

class CaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ca_ = dir_.path() + "/etc/benchlab/ca";  // parents made as needed
    auto info = InitCa(ca_);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
  }
  Result<CertificateInfo> Issue(const std::string& name, Role role,
                                std::vector<std::string> hosts = {}, int days = 365) {
    return IssueCertificate(ca_, {name, role, std::move(hosts), days});
  }
  TempDir dir_;
  std::string ca_;
};

TEST_F(CaTest, InitWritesACaItsKeyPrivateAndAnEmptyCrl) {
  EXPECT_EQ(Mode(ca_), 0700u);
  EXPECT_EQ(Mode(ca_ + "/ca.key"), 0600u);
  EXPECT_EQ(Mode(ca_ + "/ca.pem"), 0644u);
  auto ca = ReadCertificateFile(ca_ + "/ca.pem", Identity::kNone);
  ASSERT_TRUE(ca.ok()) << ca.status().ToString();
  EXPECT_EQ(ca->name.rfind("benchlab CA ", 0), 0u) << ca->name;
  EXPECT_EQ(ca->subject, ca->issuer);
  const auto years =
      std::chrono::duration_cast<hours>(ca->not_after - system_clock::now()).count() / 24 / 365;
  EXPECT_EQ(years, 9);  // 3650 days, a little under ten years of 365 days from now
  auto serials = Serials(ca_);
  ASSERT_TRUE(serials.ok()) << serials.status().ToString();
  EXPECT_TRUE(serials->empty());
  // The CA's key and certificate are made for each other.
  EXPECT_NE(Read(ca_ + "/ca.key").find("BEGIN PRIVATE KEY"), std::string::npos);
}

TEST_F(CaTest, ASecondInitLeavesTheFirstCaIntact) {
  const std::string before = Read(ca_ + "/ca.pem") + Read(ca_ + "/ca.key");
  auto again = InitCa(ca_);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.status().message().find("never overwritten"), std::string::npos)
      << again.status().message();
  EXPECT_EQ(Read(ca_ + "/ca.pem") + Read(ca_ + "/ca.key"), before);
}

TEST_F(CaTest, AnIssuedCertificateNamesItsRoleNameAndHosts) {
  auto info = Issue("server-1", Role::kAgent, {"10.0.0.5", "bench-a.lan", "::1"}, 30);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->name, "server-1");
  EXPECT_EQ(info->role, Role::kAgent);
  EXPECT_EQ(info->hosts, (std::vector<std::string>{"10.0.0.5", "bench-a.lan", "::1"}));
  const auto days =
      std::chrono::duration_cast<hours>(info->not_after - system_clock::now()).count() / 24;
  EXPECT_EQ(days, 29);  // 30 days from now, less the seconds the test took
  EXPECT_LT(info->not_before, system_clock::now());
  EXPECT_EQ(Mode(ca_ + "/server-1.key"), 0600u);

  auto read = ReadCertificateFile(ca_ + "/server-1.pem");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->serial, info->serial);
  EXPECT_EQ(read->subject, "CN=server-1,OU=agent,O=benchlab");
  EXPECT_EQ(Verify(Read(ca_ + "/ca.pem"), Read(ca_ + "/server-1.pem")), X509_V_OK);
}

TEST_F(CaTest, EveryRoleRoundTrips) {
  for (Role role : {Role::kCoordinator, Role::kAgent, Role::kOperator, Role::kViewer}) {
    const std::string name = "who-" + std::string(RoleName(role));
    auto info = Issue(name, role);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    auto read = ReadCertificateFile(ca_ + "/" + name + ".pem");
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(read->role, role);
    EXPECT_EQ(ParseRole(RoleName(role)), role);
  }
  EXPECT_FALSE(ParseRole("admin").has_value());
  EXPECT_FALSE(ParseRole("").has_value());
}

TEST_F(CaTest, ACertificateFromAnotherCaDoesNotVerify) {
  ASSERT_TRUE(InitCa(dir_.path() + "/other").ok());
  ASSERT_TRUE(IssueCertificate(dir_.path() + "/other", {"intruder", Role::kOperator, {}, 10}).ok());
  EXPECT_EQ(Verify(Read(ca_ + "/ca.pem"), Read(dir_.path() + "/other/intruder.pem")),
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

TEST_F(CaTest, BadInputNamesTheFieldAndWritesNothing) {
  struct Case {
    IssueRequest request;
    std::string field;
  };
  const std::vector<Case> cases = {
      {{"", Role::kAgent, {}, 10}, "--name"},
      {{"a/b", Role::kAgent, {}, 10}, "--name"},
      {{"-x", Role::kAgent, {}, 10}, "--name"},
      {{std::string(65, 'a'), Role::kAgent, {}, 10}, "--name"},
      {{"ok", Role::kAgent, {"bad host"}, 10}, "--host"},
      {{"ok", Role::kAgent, {"a,URI:benchlab://operator/x"}, 10}, "--host"},
      {{"ok", Role::kAgent, {"-lead.example"}, 10}, "--host"},
      {{"ok", Role::kAgent, {}, 0}, "--days"},
      {{"ok", Role::kAgent, {}, 4000}, "--days"},  // beyond the CA's own end
  };
  for (const Case& c : cases) {
    auto info = IssueCertificate(ca_, c.request);
    ASSERT_FALSE(info.ok()) << c.request.name;
    EXPECT_EQ(info.status().code(), StatusCode::kInvalidArgument) << info.status().ToString();
    EXPECT_EQ(info.status().message().rfind(c.field + ":", 0), 0u) << info.status().message();
  }
  EXPECT_FALSE(fs::exists(ca_ + "/ok.pem"));
  EXPECT_FALSE(fs::exists(ca_ + "/ok.key"));
}

TEST_F(CaTest, IssuingANameTwiceIsRefused) {
  ASSERT_TRUE(Issue("load-1", Role::kAgent).ok());
  const std::string first = Read(ca_ + "/load-1.pem");
  auto again = Issue("load-1", Role::kOperator);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.status().message().find("benchlab ca revoke"), std::string::npos);
  EXPECT_EQ(Read(ca_ + "/load-1.pem"), first);
}

TEST_F(CaTest, ARevokedCertificateFailsTheCrlCheckAndItsNameCanBeIssuedAgain) {
  auto kept = Issue("keeper", Role::kViewer);
  auto gone = Issue("leaver", Role::kOperator);
  ASSERT_TRUE(kept.ok() && gone.ok());
  const std::string ca_pem = Read(ca_ + "/ca.pem");
  const std::string leaver_pem = Read(ca_ + "/leaver.pem");
  EXPECT_EQ(Verify(ca_pem, leaver_pem, Read(ca_ + "/crl.pem")), X509_V_OK);

  auto revoked = RevokeCertificate(ca_, "leaver");
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();
  const std::string crl = Read(ca_ + "/crl.pem");
  EXPECT_EQ(Verify(ca_pem, leaver_pem, crl), X509_V_ERR_CERT_REVOKED);
  EXPECT_EQ(Verify(ca_pem, Read(ca_ + "/keeper.pem"), crl), X509_V_OK);
  auto serials = Serials(ca_);
  ASSERT_TRUE(serials.ok());
  EXPECT_EQ(*serials, std::vector<std::string>{gone->serial});
  EXPECT_FALSE(fs::exists(ca_ + "/leaver.pem"));
  EXPECT_FALSE(fs::exists(ca_ + "/leaver.key"));
  EXPECT_TRUE(fs::exists(ca_ + "/revoked/leaver-" + gone->serial + ".pem"));

  // A second revocation keeps the first in the list.
  ASSERT_TRUE(RevokeCertificate(ca_, "keeper").ok());
  serials = Serials(ca_);
  ASSERT_TRUE(serials.ok());
  EXPECT_EQ(serials->size(), 2u);
  EXPECT_EQ(Verify(ca_pem, leaver_pem, Read(ca_ + "/crl.pem")), X509_V_ERR_CERT_REVOKED);

  auto again = Issue("leaver", Role::kOperator);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_NE(again->serial, gone->serial);
  EXPECT_EQ(Verify(ca_pem, Read(ca_ + "/leaver.pem"), Read(ca_ + "/crl.pem")), X509_V_OK);
}

TEST_F(CaTest, RevokingAnUnknownNameIsNotFound) {
  auto r = RevokeCertificate(ca_, "nobody");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST_F(CaTest, IssuingWithoutACaSaysHowToMakeOne) {
  auto r = IssueCertificate(dir_.path() + "/empty", {"x", Role::kAgent, {}, 10});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("benchlab ca init --dir"), std::string::npos)
      << r.status().message();
}

TEST(CertificateTest, ACertificateWithoutABenchlabIdentityIsRefused) {
  TempDir dir;
  ASSERT_TRUE(InitCa(dir.path() + "/ca").ok());
  const std::string ca_pem = Read(dir.path() + "/ca/ca.pem");
  auto as_leaf = ParseCertificatePem(ca_pem, "ca.pem");
  ASSERT_FALSE(as_leaf.ok());
  EXPECT_NE(as_leaf.status().message().find("not a benchlab certificate"), std::string::npos);
  auto garbage = ParseCertificatePem("hello", "x.pem");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().message().rfind("x.pem: expected a PEM certificate", 0), 0u);
}

TEST(CertificateTest, NamesAndIdentityUris) {
  EXPECT_TRUE(ValidCertificateName("server-1.lab_A"));
  EXPECT_FALSE(ValidCertificateName(".hidden"));
  EXPECT_FALSE(ValidCertificateName("a b"));
  EXPECT_FALSE(ValidCertificateName("a/b"));
  EXPECT_EQ(IdentityUri(Role::kAgent, "server-1"), "benchlab://agent/server-1");
  EXPECT_EQ(FormatUtc(system_clock::from_time_t(1798761600)), "2027-01-01T00:00:00Z");
}

TEST(RolesTest, ARefusalNamesTheRolesWithTheirArticle) {
  EXPECT_EQ(RolesWithArticle({Role::kOperator}), "an operator");
  EXPECT_EQ(RolesWithArticle({Role::kViewer}), "a viewer");
  EXPECT_EQ(RolesWithArticle({Role::kViewer, Role::kOperator}), "an operator or viewer");
  EXPECT_EQ(RolesWithArticle({Role::kCoordinator}), "a coordinator");
}

}  // namespace
}  // namespace benchlab
