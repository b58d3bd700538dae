#include "agent/server/allowed_targets.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "common/config_toml.h"

namespace benchlab {
namespace {

struct Address {
  int family = 0;
  std::array<uint8_t, 16> bytes{};
};

// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the IPv4 address it maps, so that it meets
// the IPv4 entries and only those.
Address Unmapped(Address a) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (a.family == AF_INET6 && std::memcmp(a.bytes.data(), kMapped, 12) == 0) {
    Address v4;
    v4.family = AF_INET;
    std::memcpy(v4.bytes.data(), a.bytes.data() + 12, 4);
    return v4;
  }
  return a;
}

bool ParseAddress(const std::string& text, Address& out) {
  if (inet_pton(AF_INET, text.c_str(), out.bytes.data()) == 1) {
    out.family = AF_INET;
    return true;
  }
  if (inet_pton(AF_INET6, text.c_str(), out.bytes.data()) == 1) {
    out.family = AF_INET6;
    out = Unmapped(out);
    return true;
  }
  return false;
}

std::string Format(const Address& a) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(a.family, a.bytes.data(), text, sizeof(text));
  return text;
}

int Bits(int family) { return family == AF_INET ? 32 : 128; }

// Letters, digits, '-' and non-empty dot-separated labels, at most 253 characters.
bool IsHostName(std::string_view name) {
  if (name.empty() || name.size() > 253 || name.front() == '.' || name.back() == '.') return false;
  if (name.find("..") != std::string_view::npos) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
  });
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Result<std::vector<Address>> Lookup(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(name.c_str(), nullptr, &hints, &found); rc != 0) {
    return Status::Unavailable("resolve " + name + ": " + gai_strerror(rc));
  }
  std::vector<Address> addresses;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    Address a;
    a.family = ai->ai_family;
    if (ai->ai_family == AF_INET) {
      std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in*>(ai->ai_addr)->sin_addr, 4);
    } else if (ai->ai_family == AF_INET6) {
      std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in6*>(ai->ai_addr)->sin6_addr,
                  16);
    } else {
      continue;
    }
    addresses.push_back(Unmapped(a));
  }
  freeaddrinfo(found);
  if (addresses.empty()) return Status::Unavailable("resolve " + name + ": no IP address");
  return addresses;
}

}  // namespace

AllowedTargets AllowedTargets::Loopback() {
  AllowedTargets out;
  for (const char* entry : {"127.0.0.0/8", "::1/128", "localhost"}) (void)out.Add(entry);
  return out;
}

Status AllowedTargets::Add(std::string_view entry) {
  const std::string text(entry);
  const size_t slash = text.find('/');
  Address a;
  if (ParseAddress(text.substr(0, slash), a)) {
    Cidr cidr{a.family, a.bytes, Bits(a.family)};
    if (slash != std::string::npos) {
      const std::string prefix = text.substr(slash + 1);
      const bool digits = !prefix.empty() && prefix.size() <= 3 &&
                          std::all_of(prefix.begin(), prefix.end(), ::isdigit);
      if (!digits || std::stoi(prefix) > Bits(a.family)) {
        return Status::InvalidArgument("prefix length /" + prefix + ": expected 0 to " +
                                       std::to_string(Bits(a.family)));
      }
      cidr.prefix = std::stoi(prefix);
    }
    // The host bits of "10.1.2.3/8" are dropped: it means 10.0.0.0/8.
    for (int bit = cidr.prefix; bit < Bits(a.family); ++bit) {
      cidr.bytes[static_cast<size_t>(bit / 8)] &= static_cast<uint8_t>(~(0x80u >> (bit % 8)));
    }
    cidrs_.push_back(cidr);
  } else if (slash == std::string::npos && IsHostName(text)) {
    names_.push_back(Lower(text));
  } else {
    return Status::InvalidArgument(
        "expected a CIDR such as \"10.0.0.0/8\" or \"::1/128\", an address or a host name");
  }
  entries_.push_back(text);
  return Status::Ok();
}

bool AllowedTargets::Covers(int family, const uint8_t* bytes) const {
  for (const Cidr& cidr : cidrs_) {
    if (cidr.family != family) continue;
    bool inside = true;
    for (int bit = 0; bit < cidr.prefix && inside; ++bit) {
      const uint8_t mask = static_cast<uint8_t>(0x80u >> (bit % 8));
      const size_t byte = static_cast<size_t>(bit / 8);
      inside = (bytes[byte] & mask) == (cidr.bytes[byte] & mask);
    }
    if (inside) return true;
  }
  return false;
}

Status AllowedTargets::Refused(const std::string& host, const std::string& detail) const {
  std::string allowed;
  for (const auto& entry : entries_) allowed += (allowed.empty() ? "" : ", ") + entry;
  return Status::PermissionDenied("host " + host + detail + " is not in this agent's " +
                                  "allowed_targets (" + (allowed.empty() ? "empty" : allowed) +
                                  "): it sends requests nowhere else");
}

Result<CheckedTarget> AllowedTargets::Check(const std::string& host) const {
  std::string bare = host;
  if (bare.size() > 2 && bare.front() == '[' && bare.back() == ']') {
    bare = bare.substr(1, bare.size() - 2);
  }
  Address a;
  if (ParseAddress(bare, a)) {
    if (!Covers(a.family, a.bytes.data())) return Refused(Format(a), "");
    return CheckedTarget{Format(a), ""};
  }
  if (!IsHostName(bare)) {
    return Status::InvalidArgument("host " + config::Quote(host) +
                                   ": expected an IP address or a host name");
  }
  auto addresses = Lookup(bare);
  if (!addresses.ok()) return addresses.status();
  const bool listed = std::find(names_.begin(), names_.end(), Lower(bare)) != names_.end();
  if (!listed) {
    for (const Address& each : *addresses) {
      if (!Covers(each.family, each.bytes.data())) {
        return Refused(bare, " (it resolves to " + Format(each) + ")");
      }
    }
  }
  return CheckedTarget{Format(addresses->front()), bare};
}

}  // namespace benchlab
