#include "tls/ca.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "tls/openssl_util.h"
#include "tls/verify.h"

namespace benchlab {

using namespace tls_detail;

namespace {

constexpr long kSecondsPerDay = 86400;
// Certificates start five minutes in the past, so a host whose clock is a little behind the
// CA's accepts them at once.
constexpr long kBackdateSeconds = 300;

Status Errno(const std::string& what) {
  return Status::Internal(what + ": " + std::strerror(errno));
}

// Writes `bytes` to a new file beside `path` with `mode`, syncs it, then links it into place
// (replace: renames it over whatever is there). No reader ever sees part of a file.
Status WriteFile(const std::string& path, const std::string& bytes, mode_t mode, bool replace) {
  std::string tmp = path + ".XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return Errno("writing " + path);
  bool ok = fchmod(fd, mode) == 0;
  for (size_t done = 0; ok && done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ok && fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok) {
    ::unlink(tmp.c_str());
    errno = saved;
    return Errno("writing " + path);
  }
  if (replace) {
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      const Status status = Errno("writing " + path);
      ::unlink(tmp.c_str());
      return status;
    }
    return Status::Ok();
  }
  const int linked = ::link(tmp.c_str(), path.c_str());
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  if (linked != 0) {
    if (link_errno == EEXIST)
      return Status::AlreadyExists(path + " exists; it is never overwritten");
    errno = link_errno;
    return Errno("writing " + path);
  }
  return Status::Ok();
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

Result<KeyPtr> NewKey() {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return OpensslError("generating a P-256 key");
  return key;
}

Status SetRandomSerial(X509* cert) {
  BnPtr bn(BN_new());
  // 127 random bits: positive and unique across every certificate a CA will ever issue.
  if (!bn || BN_rand(bn.get(), 127, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) == nullptr) {
    return OpensslError("choosing a serial number");
  }
  return Status::Ok();
}

Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return OpensslError(std::string("adding ") + OBJ_nid2sn(nid) + " " + value);
  }
  return Status::Ok();
}

Status SetName(X509_NAME* name, const std::vector<std::pair<const char*, std::string>>& parts) {
  for (const auto& [field, value] : parts) {
    if (X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                   0) != 1) {
      return OpensslError(std::string("setting the name's ") + field);
    }
  }
  return Status::Ok();
}

Status SetValidity(X509* cert, long days) {
  if (X509_gmtime_adj(X509_getm_notBefore(cert), -kBackdateSeconds) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert), days * kSecondsPerDay) == nullptr) {
    return OpensslError("setting the validity");
  }
  return Status::Ok();
}

std::string CertPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  return BioText(bio.get());
}

std::string KeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  return BioText(bio.get());
}

struct Ca {
  X509Ptr cert;
  KeyPtr key;
};

Result<Ca> LoadCa(const CaPaths& paths) {
  auto cert_text = ReadPemFile(paths.cert);
  if (!cert_text.ok()) {
    return Status::NotFound(paths.dir + " holds no CA (" + cert_text.status().message() +
                            "); make one with `benchlab ca init --dir " + paths.dir + "`");
  }
  auto key_text = ReadPemFile(paths.key);
  if (!key_text.ok()) return key_text.status();
  Ca ca;
  BioPtr cert_bio = MemoryBio(cert_text->text);
  ca.cert.reset(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  BioPtr key_bio = MemoryBio(key_text->text);
  ca.key.reset(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!ca.cert) return OpensslError(paths.cert + ": not a PEM certificate");
  if (!ca.key) return OpensslError(paths.key + ": not a PEM private key");
  if (X509_check_private_key(ca.cert.get(), ca.key.get()) != 1) {
    return OpensslError(paths.key + " is not the key of " + paths.cert);
  }
  return ca;
}

// A CRL naming `revoked` (taken over), signed by the CA, valid until the CA expires: a daemon
// checking revocation refuses every certificate once its CRL is out of date, and the CA's
// certificates end there anyway.
Result<std::string> SignCrl(const Ca& ca, std::vector<RevokedPtr> revoked) {
  CrlPtr crl(X509_CRL_new());
  TimePtr now(ASN1_TIME_set(nullptr, std::time(nullptr)));
  if (!crl || !now || X509_CRL_set_version(crl.get(), 1) != 1 ||
      X509_CRL_set_issuer_name(crl.get(), X509_get_subject_name(ca.cert.get())) != 1 ||
      X509_CRL_set1_lastUpdate(crl.get(), now.get()) != 1 ||
      X509_CRL_set1_nextUpdate(crl.get(), X509_get0_notAfter(ca.cert.get())) != 1) {
    return OpensslError("making the CRL");
  }
  for (RevokedPtr& entry : revoked) {
    if (X509_CRL_add0_revoked(crl.get(), entry.get()) != 1) return OpensslError("listing");
    (void)entry.release();  // the CRL owns it now
  }
  X509_CRL_sort(crl.get());
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, ca.cert.get(), nullptr, nullptr, crl.get(), 0);
  ExtPtr aki(X509V3_EXT_conf_nid(nullptr, &ctx, NID_authority_key_identifier, "keyid:always"));
  if (!aki || X509_CRL_add_ext(crl.get(), aki.get(), -1) != 1 ||
      X509_CRL_sign(crl.get(), ca.key.get(), EVP_sha256()) == 0) {
    return OpensslError("signing the CRL");
  }
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509_CRL(bio.get(), crl.get());
  return BioText(bio.get());
}

Result<CrlPtr> ParseCrl(const std::string& pem, const std::string& source) {
  BioPtr bio = MemoryBio(pem);
  CrlPtr crl(PEM_read_bio_X509_CRL(bio.get(), nullptr, nullptr, nullptr));
  if (!crl) {
    ERR_clear_error();
    return Status::InvalidArgument(source + ": expected a PEM CRL (-----BEGIN X509 CRL-----)");
  }
  return crl;
}

bool IsIp(const std::string& host, unsigned char* bytes) {
  return inet_pton(AF_INET, host.c_str(), bytes) == 1 ||
         inet_pton(AF_INET6, host.c_str(), bytes) == 1;
}

// A DNS name of letters, digits and hyphens in dot-separated labels of 1 to 63, 253 at most.
bool ValidDnsName(const std::string& host) {
  if (host.empty() || host.size() > 253) return false;
  size_t label = 0;
  for (size_t i = 0; i <= host.size(); ++i) {
    if (i == host.size() || host[i] == '.') {
      if (label == 0 || label > 63 || host[i - 1] == '-' || host[i - label] == '-') return false;
      label = 0;
      continue;
    }
    const char c = host[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-')) {
      return false;
    }
    ++label;
  }
  return true;
}

// Appends ",IP:host" or ",DNS:host" to a subjectAltName value for each host; InvalidArgument
// naming `field` for a host that is neither.
Status AddHostNames(std::string& san, const std::vector<std::string>& hosts,
                    const std::string& field) {
  for (const std::string& host : hosts) {
    unsigned char bytes[16];
    if (IsIp(host, bytes)) {
      san += ",IP:" + host;
    } else if (ValidDnsName(host)) {
      san += ",DNS:" + host;
    } else {
      return Status::InvalidArgument(field + ": expected a DNS name or an IP address, got \"" +
                                     host + "\"");
    }
  }
  return Status::Ok();
}

// A certificate for `key` named `subject`, signed by `issuer_key` (self-signed when `issuer` is
// null), valid for `days`, with the extensions given as (nid, value).
Result<X509Ptr> SignedCertificate(EVP_PKEY* key, const std::string& subject, X509* issuer,
                                  EVP_PKEY* issuer_key, long days,
                                  const std::vector<std::pair<int, std::string>>& extensions) {
  X509Ptr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1) return OpensslError("making a certificate");
  if (Status s = SetRandomSerial(cert.get()); !s.ok()) return s;
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (Status s = SetName(name, {{"O", "benchlab"}, {"CN", subject}}); !s.ok()) return s;
  X509* signer = issuer != nullptr ? issuer : cert.get();
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(signer)) != 1 ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return OpensslError("making a certificate");
  }
  if (Status s = SetValidity(cert.get(), days); !s.ok()) return s;
  for (const auto& [nid, value] : extensions) {
    if (Status s = AddExtension(cert.get(), signer, nid, value); !s.ok()) return s;
  }
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) == 0) {
    return OpensslError("signing a certificate");
  }
  return cert;
}

}  // namespace

TargetTlsFiles::TargetTlsFiles(const std::string& dir)
    : ca(dir + "/tls_ca.pem"), cert(dir + "/tls_cert.pem"), key(dir + "/tls_key.pem") {}

Result<std::string> MakeTargetTls(const std::string& dir, const std::vector<std::string>& hosts,
                                  int days) {
  if (days < 1 || days > 365) {
    return Status::InvalidArgument("days: expected 1 to 365, got " + std::to_string(days));
  }
  std::string san = "DNS:localhost,IP:127.0.0.1";
  std::vector<std::string> more;
  for (const std::string& host : hosts) {
    if (host != "localhost" && host != "127.0.0.1" &&
        std::find(more.begin(), more.end(), host) == more.end()) {
      more.push_back(host);
    }
  }
  if (Status s = AddHostNames(san, more, "host"); !s.ok()) return s;
  const TargetTlsFiles files(dir);
  for (const std::string& path : {files.ca, files.cert, files.key}) {
    if (Exists(path)) return Status::AlreadyExists(path + " exists; it is never overwritten");
  }
  auto ca_key = NewKey();
  if (!ca_key.ok()) return ca_key.status();
  auto ca = SignedCertificate(ca_key->get(), "benchlab target CA", nullptr, ca_key->get(), days,
                              {{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                               {NID_key_usage, "critical,keyCertSign"},
                               {NID_subject_key_identifier, "hash"},
                               {NID_authority_key_identifier, "keyid:always"}});
  if (!ca.ok()) return ca.status();
  auto key = NewKey();
  if (!key.ok()) return key.status();
  auto cert = SignedCertificate(key->get(), "localhost", ca->get(), ca_key->get(), days,
                                {{NID_basic_constraints, "critical,CA:FALSE"},
                                 {NID_key_usage, "critical,digitalSignature"},
                                 {NID_ext_key_usage, "serverAuth"},
                                 {NID_subject_key_identifier, "hash"},
                                 {NID_authority_key_identifier, "keyid:always"},
                                 {NID_subject_alt_name, san}});
  if (!cert.ok()) return cert.status();
  // The key first, so that a certificate on disk always has its key beside it.
  if (Status s = WriteFile(files.key, KeyPem(key->get()), 0600, false); !s.ok()) return s;
  if (Status s = WriteFile(files.cert, CertPem(cert->get()), 0644, false); !s.ok()) return s;
  const std::string ca_pem = CertPem(ca->get());
  if (Status s = WriteFile(files.ca, ca_pem, 0644, false); !s.ok()) return s;
  return ca_pem;
}

CaPaths::CaPaths(std::string d)
    : dir(std::move(d)),
      cert(dir + "/ca.pem"),
      key(dir + "/ca.key"),
      crl(dir + "/crl.pem"),
      revoked(dir + "/revoked") {}

std::string CaPaths::Cert(const std::string& name) const { return dir + "/" + name + ".pem"; }
std::string CaPaths::Key(const std::string& name) const { return dir + "/" + name + ".key"; }

Result<CertificateInfo> InitCa(const std::string& dir, int days) {
  if (days < 1 || days > 36500) {
    return Status::InvalidArgument("--days: expected 1 to 36500, got " + std::to_string(days));
  }
  const CaPaths paths(dir);
  // Missing parents are made as usual; the CA's own directory is private.
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return Status::Internal("making " + parent.string() + ": " + ec.message());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return Errno("making " + dir);
  for (const std::string& path : {paths.cert, paths.key}) {
    if (Exists(path)) {
      return Status::AlreadyExists(path + " exists: " + dir +
                                   " already holds a CA, and a CA is never overwritten");
    }
  }
  auto key = NewKey();
  if (!key.ok()) return key.status();
  X509Ptr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1) return OpensslError("making the CA");
  if (Status s = SetRandomSerial(cert.get()); !s.ok()) return s;
  const std::string serial = SerialHex(X509_get0_serialNumber(cert.get()));
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (Status s = SetName(name, {{"O", "benchlab"}, {"CN", "benchlab CA " + serial.substr(0, 8)}});
      !s.ok()) {
    return s;
  }
  if (X509_set_issuer_name(cert.get(), name) != 1 || X509_set_pubkey(cert.get(), key->get()) != 1) {
    return OpensslError("making the CA");
  }
  if (Status s = SetValidity(cert.get(), days); !s.ok()) return s;
  for (const auto& [nid, value] : std::vector<std::pair<int, std::string>>{
           {NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
           {NID_key_usage, "critical,keyCertSign,cRLSign"},
           {NID_subject_key_identifier, "hash"},
           {NID_authority_key_identifier, "keyid:always"}}) {
    if (Status s = AddExtension(cert.get(), cert.get(), nid, value); !s.ok()) return s;
  }
  if (X509_sign(cert.get(), key->get(), EVP_sha256()) == 0) return OpensslError("signing the CA");

  // The key first: a directory with ca.pem but no ca.key would look like a CA and issue nothing.
  if (Status s = WriteFile(paths.key, KeyPem(key->get()), 0600, false); !s.ok()) return s;
  if (Status s = WriteFile(paths.cert, CertPem(cert.get()), 0644, false); !s.ok()) {
    ::unlink(paths.key.c_str());
    return s;
  }
  Ca ca{std::move(cert), std::move(*key)};
  auto crl = SignCrl(ca, {});
  if (!crl.ok()) return crl.status();
  if (Status s = WriteFile(paths.crl, *crl, 0644, true); !s.ok()) return s;
  return ParseCertificatePem(CertPem(ca.cert.get()), paths.cert, Identity::kNone);
}

Result<CertificateInfo> IssueCertificate(const std::string& dir, const IssueRequest& request) {
  if (!ValidCertificateName(request.name)) {
    return Status::InvalidArgument(
        "--name: expected 1 to 64 of [A-Za-z0-9._-], not starting "
        "with '.' or '-', got \"" +
        request.name + "\"");
  }
  const CaPaths paths(dir);
  auto ca = LoadCa(paths);
  if (!ca.ok()) return ca.status();
  const auto ca_end = ParseCertificatePem(CertPem(ca->cert.get()), paths.cert, Identity::kNone);
  if (!ca_end.ok()) return ca_end.status();
  const auto left = std::chrono::duration_cast<std::chrono::hours>(ca_end->not_after -
                                                                   std::chrono::system_clock::now())
                        .count() /
                    24;
  if (request.days < 1 || request.days > left) {
    return Status::InvalidArgument("--days: expected 1 to " + std::to_string(left) +
                                   " (the CA's days left, until " + FormatUtc(ca_end->not_after) +
                                   "), got " + std::to_string(request.days));
  }
  std::string san = "URI:" + IdentityUri(request.role, request.name);
  if (Status s = AddHostNames(san, request.hosts, "--host"); !s.ok()) return s;
  for (const std::string& path : {paths.Cert(request.name), paths.Key(request.name)}) {
    if (Exists(path)) {
      return Status::AlreadyExists(path + " exists: \"" + request.name +
                                   "\" is already issued; revoke it first (`benchlab ca revoke "
                                   "--dir " +
                                   dir + " " + request.name + "`)");
    }
  }

  auto key = NewKey();
  if (!key.ok()) return key.status();
  X509Ptr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1) return OpensslError("making a certificate");
  if (Status s = SetRandomSerial(cert.get()); !s.ok()) return s;
  if (Status s = SetName(
          X509_get_subject_name(cert.get()),
          {{"O", "benchlab"}, {"OU", std::string(RoleName(request.role))}, {"CN", request.name}});
      !s.ok()) {
    return s;
  }
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(ca->cert.get())) != 1 ||
      X509_set_pubkey(cert.get(), key->get()) != 1) {
    return OpensslError("making a certificate");
  }
  if (Status s = SetValidity(cert.get(), request.days); !s.ok()) return s;
  for (const auto& [nid, value] :
       std::vector<std::pair<int, std::string>>{{NID_basic_constraints, "critical,CA:FALSE"},
                                                {NID_key_usage, "critical,digitalSignature"},
                                                {NID_ext_key_usage, "serverAuth,clientAuth"},
                                                {NID_subject_key_identifier, "hash"},
                                                {NID_authority_key_identifier, "keyid:always"},
                                                {NID_subject_alt_name, san}}) {
    if (Status s = AddExtension(cert.get(), ca->cert.get(), nid, value); !s.ok()) return s;
  }
  if (X509_sign(cert.get(), ca->key.get(), EVP_sha256()) == 0) {
    return OpensslError("signing the certificate");
  }
  const std::string pem = CertPem(cert.get());
  if (Status s = WriteFile(paths.Key(request.name), KeyPem(key->get()), 0600, false); !s.ok()) {
    return s;
  }
  if (Status s = WriteFile(paths.Cert(request.name), pem, 0644, false); !s.ok()) {
    ::unlink(paths.Key(request.name).c_str());
    return s;
  }
  return ParseCertificatePem(pem, paths.Cert(request.name));
}

Result<CertificateInfo> RevokeCertificate(const std::string& dir, const std::string& name) {
  if (!ValidCertificateName(name)) {
    return Status::InvalidArgument("NAME: expected 1 to 64 of [A-Za-z0-9._-], got \"" + name +
                                   "\"");
  }
  const CaPaths paths(dir);
  auto ca = LoadCa(paths);
  if (!ca.ok()) return ca.status();
  auto pem = ReadPemFile(paths.Cert(name));
  if (!pem.ok()) {
    return Status::NotFound(paths.Cert(name) + ": no certificate \"" + name + "\" in " + dir);
  }
  auto info = ParseCertificatePem(pem->text, paths.Cert(name));
  if (!info.ok()) return info.status();
  BioPtr bio = MemoryBio(pem->text);
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return OpensslError(paths.Cert(name));

  std::vector<RevokedPtr> revoked;
  if (auto crl_text = ReadPemFile(paths.crl); crl_text.ok()) {
    auto crl = ParseCrl(crl_text->text, paths.crl);
    if (!crl.ok()) return crl.status();
    STACK_OF(X509_REVOKED)* entries = X509_CRL_get_REVOKED(crl->get());
    for (int i = 0; i < sk_X509_REVOKED_num(entries); ++i) {
      revoked.emplace_back(X509_REVOKED_dup(sk_X509_REVOKED_value(entries, i)));
    }
  }
  RevokedPtr entry(X509_REVOKED_new());
  TimePtr now(ASN1_TIME_set(nullptr, std::time(nullptr)));
  if (!entry || !now ||
      X509_REVOKED_set_serialNumber(entry.get(), X509_get_serialNumber(cert.get())) != 1 ||
      X509_REVOKED_set_revocationDate(entry.get(), now.get()) != 1) {
    return OpensslError("listing " + name + " as revoked");
  }
  revoked.push_back(std::move(entry));
  auto crl = SignCrl(*ca, std::move(revoked));
  if (!crl.ok()) return crl.status();

  // The CRL first: once it is written the certificate is refused wherever it is loaded; the
  // files are then moved out of the way so that the name can be issued again.
  if (Status s = WriteFile(paths.crl, *crl, 0644, true); !s.ok()) return s;
  if (::mkdir(paths.revoked.c_str(), 0700) != 0 && errno != EEXIST) {
    return Errno("making " + paths.revoked);
  }
  const std::string kept = paths.revoked + "/" + name + "-" + info->serial + ".pem";
  if (::rename(paths.Cert(name).c_str(), kept.c_str()) != 0) return Errno("moving to " + kept);
  if (::unlink(paths.Key(name).c_str()) != 0 && errno != ENOENT) {
    return Errno("deleting " + paths.Key(name));
  }
  return info;
}

}  // namespace benchlab
