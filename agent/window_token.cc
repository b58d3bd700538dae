#include "agent/window_token.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace benchlab {

bool IsWindowToken(std::string_view token) {
  if (token.size() < kMinWindowToken || token.size() > kMaxWindowToken) return false;
  for (char c : token) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status CheckWindowToken(std::string_view field, std::string_view token) {
  if (IsWindowToken(token)) return Status::Ok();
  return Status::InvalidArgument(
      std::string(field) + ": expected a window token of " + std::to_string(kMinWindowToken) +
      " to " + std::to_string(kMaxWindowToken) + " characters of [A-Za-z0-9._:-], got " +
      (token.empty() ? std::string("none") : std::to_string(token.size()) + " characters"));
}

bool TokensEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

Result<std::string> RandomHex(size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  size_t done = 0;
  while (done < raw.size()) {
    ssize_t n = getrandom(raw.data() + done, raw.size() - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Internal(std::string("getrandom: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char c : raw) {
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  }
  return out;
}

}  // namespace benchlab
