// Dashboard tokens (docs/security.md, "The dashboard"): what a person or a script shows the
// coordinator's HTTP dashboard and API instead of a client certificate. `benchlab token create`
// prints a token once; the store keeps only its SHA-256 (a token is 256 random bits, so a fast
// hash is enough: nothing short enough to guess is ever hashed), with its name, role and expiry.
#pragma once

#include <chrono>
#include <string>

#include "common/status.h"

namespace benchlab {

class Store;
struct TokenRow;

inline constexpr const char* kDashboardTokenPrefix = "blt_";

// The roles a dashboard token can carry: reading everything, or reading and queuing re-runs.
bool IsDashboardRole(const std::string& role);

// A new token: "blt_" and 43 characters of base64url (32 bytes from OpenSSL's RAND_bytes).
// Internal when the random generator fails.
Result<std::string> NewDashboardToken();

// The hex SHA-256 of a token's text: what the store keeps and looks a token up by.
std::string DashboardTokenHash(const std::string& token);

// --expires: a whole number of hours or days from `now` ("12h", "30d") or a UTC date or time
// ("2027-01-31", "2027-01-31T12:00:00Z"); "" (no --expires) is "" (never). The result is an ISO
// 8601 UTC time as the store writes them. InvalidArgument, saying the expected forms, otherwise.
Result<std::string> ParseTokenExpiry(const std::string& text,
                                     std::chrono::system_clock::time_point now);

// Whether a token's expiry (if any) is at or before `now`; revocation aside.
bool TokenExpired(const TokenRow& row, std::chrono::system_clock::time_point now);

// Who a token is: its name and role.
struct DashboardIdentity {
  std::string name;
  std::string role;
};

// Checks a token against the store at `now`: Unauthenticated, with a reason that never repeats
// the token, when it is malformed, unknown, revoked or expired.
Result<DashboardIdentity> CheckDashboardToken(Store& store, const std::string& token,
                                              std::chrono::system_clock::time_point now);
// The same by the token's hash: how a dashboard session, which keeps only the hash, is checked
// again on every request, so a revoked token's sessions end at once.
Result<DashboardIdentity> CheckDashboardTokenHash(Store& store, const std::string& hash,
                                                  std::chrono::system_clock::time_point now);

}  // namespace benchlab
