#include "tls/certificate.h"

#include <arpa/inet.h>
#include <openssl/asn1.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <array>
#include <ctime>

#include "tls/openssl_util.h"
#include "tls/verify.h"

namespace benchlab {
namespace tls_detail {

std::string OpensslErrorQueue() {
  std::string text;
  std::array<char, 256> buf{};
  while (unsigned long code = ERR_get_error()) {
    ERR_error_string_n(code, buf.data(), buf.size());
    if (!text.empty()) text += "; ";
    text += buf.data();
  }
  return text;
}

Status OpensslError(std::string_view what) {
  const std::string queued = OpensslErrorQueue();
  return Status::Internal(queued.empty() ? std::string(what) : std::string(what) + ": " + queued);
}

BioPtr MemoryBio(std::string_view text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

std::string SerialHex(const ASN1_INTEGER* serial) {
  BnPtr bn(ASN1_INTEGER_to_BN(serial, nullptr));
  if (!bn) return "0";
  char* hex = BN_bn2hex(bn.get());
  std::string out = hex != nullptr ? hex : "0";
  OPENSSL_free(hex);
  return out;
}

std::string NameLine(const X509_NAME* name) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253);
  return BioText(bio.get());
}

}  // namespace tls_detail

using namespace tls_detail;

namespace {

constexpr std::string_view kScheme = "benchlab://";

std::chrono::system_clock::time_point ToTimePoint(const ASN1_TIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return {};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string Ia5Text(const ASN1_IA5STRING* s) {
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<size_t>(ASN1_STRING_length(s)));
}

std::string IpText(const ASN1_OCTET_STRING* s) {
  const unsigned char* bytes = ASN1_STRING_get0_data(s);
  std::array<char, INET6_ADDRSTRLEN> buf{};
  const int n = ASN1_STRING_length(s);
  const int family = n == 4 ? AF_INET : n == 16 ? AF_INET6 : AF_UNSPEC;
  if (family == AF_UNSPEC || inet_ntop(family, bytes, buf.data(), buf.size()) == nullptr) {
    return "?";
  }
  return buf.data();
}

}  // namespace

std::string RolesWithArticle(const std::set<Role>& roles) {
  std::string out;
  for (Role r : roles) out += (out.empty() ? "" : " or ") + std::string(RoleName(r));
  const bool vowel =
      !out.empty() && std::string_view("aeiou").find(out[0]) != std::string_view::npos;
  return (vowel ? "an " : "a ") + out;
}

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kCoordinator:
      return "coordinator";
    case Role::kAgent:
      return "agent";
    case Role::kOperator:
      return "operator";
    case Role::kViewer:
      return "viewer";
  }
  return "viewer";
}

std::optional<Role> ParseRole(std::string_view text) {
  for (Role r : {Role::kCoordinator, Role::kAgent, Role::kOperator, Role::kViewer}) {
    if (text == RoleName(r)) return r;
  }
  return std::nullopt;
}

bool ValidCertificateName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name[0] == '.' || name[0] == '-') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string IdentityUri(Role role, std::string_view name) {
  return std::string(kScheme) + std::string(RoleName(role)) + "/" + std::string(name);
}

Result<CertificateInfo> ParseCertificatePem(std::string_view pem, std::string_view source,
                                            Identity identity) {
  const std::string where(source);
  BioPtr bio = MemoryBio(pem);
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) {
    ERR_clear_error();
    return Status::InvalidArgument(where +
                                   ": expected a PEM certificate (-----BEGIN CERTIFICATE-----)");
  }
  CertificateInfo info;
  info.serial = SerialHex(X509_get0_serialNumber(cert.get()));
  info.subject = NameLine(X509_get_subject_name(cert.get()));
  info.issuer = NameLine(X509_get_issuer_name(cert.get()));
  info.not_before = ToTimePoint(X509_get0_notBefore(cert.get()));
  info.not_after = ToTimePoint(X509_get0_notAfter(cert.get()));

  GeneralNamesPtr names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr)));
  int identities = 0;
  std::string identity_error;
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* gen = sk_GENERAL_NAME_value(names.get(), i);
    if (gen->type == GEN_DNS) {
      info.hosts.push_back(Ia5Text(gen->d.dNSName));
    } else if (gen->type == GEN_IPADD) {
      info.hosts.push_back(IpText(gen->d.iPAddress));
    } else if (gen->type == GEN_URI) {
      const std::string uri = Ia5Text(gen->d.uniformResourceIdentifier);
      if (uri.rfind(kScheme, 0) != 0) continue;
      ++identities;
      const std::string rest = uri.substr(kScheme.size());
      const size_t slash = rest.find('/');
      const auto role = ParseRole(rest.substr(0, slash == std::string::npos ? 0 : slash));
      const std::string name = slash == std::string::npos ? "" : rest.substr(slash + 1);
      if (!role || !ValidCertificateName(name)) {
        identity_error = "its identity \"" + uri +
                         "\" is not benchlab://ROLE/NAME with ROLE coordinator, agent, operator "
                         "or viewer and NAME of [A-Za-z0-9._-]";
        continue;
      }
      info.role = *role;
      info.name = name;
    }
  }
  if (identity == Identity::kNone) {
    std::array<char, 256> cn{};
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert.get()), NID_commonName, cn.data(),
                                  static_cast<int>(cn.size())) > 0) {
      info.name = cn.data();
    }
    return info;
  }
  if (identities == 0) {
    return Status::InvalidArgument(where + " (" + info.subject +
                                   "): not a benchlab certificate: no benchlab://ROLE/NAME "
                                   "subject alternative name (issue one with `benchlab ca issue`)");
  }
  if (identities > 1) {
    return Status::InvalidArgument(where + " (" + info.subject + "): names " +
                                   std::to_string(identities) +
                                   " benchlab identities; a certificate speaks for one");
  }
  if (!identity_error.empty()) return Status::InvalidArgument(where + ": " + identity_error);
  return info;
}

Result<CertificateInfo> ReadCertificateFile(const std::string& path, Identity identity) {
  auto file = ReadPemFile(path);
  if (!file.ok()) return file.status();
  return ParseCertificatePem(file->text, path, identity);
}

bool ExpiresSoon(const CertificateInfo& info, std::chrono::system_clock::time_point now) {
  return info.not_after - now < kExpiryWarning;
}

std::string FormatUtc(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

}  // namespace benchlab
