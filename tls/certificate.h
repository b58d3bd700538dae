// Who a benchlab certificate speaks for (docs/security.md, "Certificates and roles"). Every
// certificate benchlab's CA issues names one identity in a subject alternative name URI,
// benchlab://ROLE/NAME, and may list the DNS names and IP addresses its daemon answers at. The
// role is read from the certificate, never from a message: a peer is what its certificate says.
#pragma once

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace benchlab {

// What a certificate allows its holder (docs/security.md):
//   coordinator  calls agents
//   agent        registers and heartbeats with the coordinator under its own name
//   operator     submits, re-runs and cancels campaigns, and reads everything
//   viewer       reads campaigns, windows, reports and the fleet
enum class Role { kCoordinator, kAgent, kOperator, kViewer };

std::string_view RoleName(Role role);
// The roles a call accepts, for a refusal: "an operator", "an operator or viewer" (enum order).
std::string RolesWithArticle(const std::set<Role>& roles);
// "coordinator", "agent", "operator" or "viewer"; nullopt for anything else.
std::optional<Role> ParseRole(std::string_view text);

// A name for a certificate (and the files it is kept in): 1 to 64 of [A-Za-z0-9._-], not
// starting with '.' or '-'. Agents' names follow the same rule.
bool ValidCertificateName(std::string_view name);

// The identity URI of a certificate: "benchlab://" + role + "/" + name.
std::string IdentityUri(Role role, std::string_view name);

struct CertificateInfo {
  std::string name;                // from benchlab://ROLE/NAME
  Role role = Role::kViewer;       // from benchlab://ROLE/NAME
  std::vector<std::string> hosts;  // DNS and IP subject alternative names, in order
  std::string serial;              // upper-case hexadecimal, as in the CRL
  std::string subject;             // one line, RFC 2253, for people
  std::string issuer;              // one line, RFC 2253, for people
  std::chrono::system_clock::time_point not_before;
  std::chrono::system_clock::time_point not_after;
};

// Whether a certificate must name a benchlab identity: every issued one does, a CA does not.
enum class Identity { kRequired, kNone };

// Reads the first certificate of a PEM text. InvalidArgument, naming `source`, when there is no
// certificate, or (kRequired) when it carries no benchlab identity or more than one (a URI SAN
// benchlab://ROLE/NAME with a known role and a valid name). With kNone, name is the subject's
// common name and role is meaningless.
Result<CertificateInfo> ParseCertificatePem(std::string_view pem, std::string_view source,
                                            Identity identity = Identity::kRequired);
Result<CertificateInfo> ReadCertificateFile(const std::string& path,
                                            Identity identity = Identity::kRequired);

// "2027-12-01T10:00:00Z"
std::string FormatUtc(std::chrono::system_clock::time_point t);

// How long before its end a certificate is warned about: by the daemon holding it at start and
// on reload, by the coordinator when an agent registers with it, and by `benchlab agents`.
inline constexpr std::chrono::hours kExpiryWarning{14 * 24};

// Whether `info` ends within kExpiryWarning of `now` (or has ended).
bool ExpiresSoon(const CertificateInfo& info,
                 std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

}  // namespace benchlab
