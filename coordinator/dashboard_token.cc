#include "coordinator/dashboard_token.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <cmath>
#include <regex>

#include "common/clock.h"
#include "coordinator/store.h"

namespace benchlab {

bool IsDashboardRole(const std::string& role) { return role == "viewer" || role == "operator"; }

Result<std::string> NewDashboardToken() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    return Status::Internal("OpenSSL's random generator failed to make a token");
  }
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string token = kDashboardTokenPrefix;
  // base64url without padding: 6 bits at a time, 256 bits give 43 characters.
  uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char b : bytes) {
    buffer = (buffer << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      token += kAlphabet[(buffer >> bits) & 63];
    }
  }
  if (bits > 0) token += kAlphabet[(buffer << (6 - bits)) & 63];
  return token;
}

std::string DashboardTokenHash(const std::string& token) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_Digest(token.data(), token.size(), digest.data(), &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

Result<std::string> ParseTokenExpiry(const std::string& text,
                                     std::chrono::system_clock::time_point now) {
  if (text.empty()) return std::string();
  static const std::regex kAfter(R"((\d{1,5})([hd]))");
  if (std::smatch m; std::regex_match(text, m, kAfter)) {
    const auto hours = std::chrono::hours(std::stoi(m[1].str()) * (m[2].str() == "d" ? 24 : 1));
    if (hours.count() > 0) return FormatIsoTime(now + hours);
  }
  static const std::regex kDate(R"(\d{4}-\d{2}-\d{2})");
  std::string iso = text;
  if (std::regex_match(text, kDate)) iso += "T00:00:00Z";
  if (iso.size() == 16) iso += ":00Z";  // 2027-01-31T12:00
  const double seconds = ParseIsoSeconds(iso);
  if (!std::isnan(seconds)) {
    const auto at = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(seconds)));
    if (at <= now) {
      return Status::InvalidArgument("--expires: " + text + " is already past");
    }
    return FormatIsoTime(at);
  }
  return Status::InvalidArgument(
      "--expires: expected hours or days from now such as 12h or 30d, or a UTC date or time "
      "such as 2027-01-31 or 2027-01-31T12:00:00Z, got \"" +
      text + "\"");
}

bool TokenExpired(const TokenRow& row, std::chrono::system_clock::time_point now) {
  return !row.expires_at.empty() &&
         ParseIsoSeconds(row.expires_at) <=
             std::chrono::duration<double>(now.time_since_epoch()).count();
}

Result<DashboardIdentity> CheckDashboardToken(Store& store, const std::string& token,
                                              std::chrono::system_clock::time_point now) {
  static const std::regex kShape("blt_[A-Za-z0-9_-]{43}");
  if (!std::regex_match(token, kShape)) {
    return Status::Unauthenticated(
        "not a benchlab dashboard token (expected blt_ and 43 characters)");
  }
  return CheckDashboardTokenHash(store, DashboardTokenHash(token), now);
}

Result<DashboardIdentity> CheckDashboardTokenHash(Store& store, const std::string& hash,
                                                  std::chrono::system_clock::time_point now) {
  auto row = store.FindToken(hash);
  if (!row.ok()) {
    if (row.status().code() == StatusCode::kNotFound) {
      return Status::Unauthenticated("unknown token");
    }
    return row.status();
  }
  if (!row->revoked_at.empty()) {
    return Status::Unauthenticated("token " + row->name + " was revoked at " + row->revoked_at);
  }
  if (TokenExpired(*row, now)) {
    return Status::Unauthenticated("token " + row->name + " expired at " + row->expires_at);
  }
  return DashboardIdentity{row->name, row->role};
}

}  // namespace benchlab
