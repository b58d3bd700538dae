// AllowedTargets: where a load agent may send requests (conformance checks, its own load
// generator, wrk and h2load), from the `allowed_targets` key of its configuration: a list of
// CIDRs ("10.0.0.0/8", "::1/128"), single addresses ("10.0.0.7") and host names ("db.lab").
// Default: loopback only (127.0.0.0/8, ::1, "localhost"). docs/agent.md, "What the agent
// refuses". Value type; thread-safe to share once built.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace benchlab {

// Where one request goes once the host it names was checked.
struct CheckedTarget {
  std::string address;  // a numeric IPv4 or IPv6 address (no brackets): connect there only
  // The host as the request named it when it was a name, for the Host header (the address
  // replaces the name, so no second lookup can answer differently); empty for an address.
  std::string name;
};

class AllowedTargets {
 public:
  // 127.0.0.0/8, ::1/128 and "localhost".
  static AllowedTargets Loopback();

  // Adds one entry; InvalidArgument saying the expected form when it is none of them.
  Status Add(std::string_view entry);

  // Checks a request's host (an IPv4 address, an IPv6 address with or without brackets, or a
  // name). An address must fall in a CIDR. A name listed here is trusted; any other name is
  // resolved once and every address it resolves to must fall in a CIDR. Either way the request
  // then goes to the first address found. PermissionDenied names the host, what it resolved to
  // and the key `allowed_targets`; Unavailable when a name does not resolve.
  Result<CheckedTarget> Check(const std::string& host) const;

  // The entries as given, in order (for messages and written configurations).
  const std::vector<std::string>& entries() const { return entries_; }
  bool operator==(const AllowedTargets& other) const { return entries_ == other.entries_; }

 private:
  struct Cidr {
    int family = 0;  // AF_INET or AF_INET6
    std::array<uint8_t, 16> bytes{};
    int prefix = 0;
  };
  bool Covers(int family, const uint8_t* bytes) const;
  Status Refused(const std::string& host, const std::string& detail) const;

  std::vector<Cidr> cidrs_;
  std::vector<std::string> names_;  // lowercase
  std::vector<std::string> entries_;
};

}  // namespace benchlab
