// ConnectionCaps: how many connections an HTTP front (rpc/http_server.h) holds, in all and from
// each client address, so that one address, or many, cannot take every connection it will hold
// (HttpLimits::max_connections, max_connections_per_address). Owned by the front and used from
// its one network thread only.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>

namespace benchlab {

class ConnectionCaps {
 public:
  enum class Admission { kAdmitted, kTotalFull, kAddressFull };

  ConnectionCaps(size_t max_total, size_t max_per_address)
      : max_total_(max_total), max_per_address_(max_per_address) {}

  // Counts a new connection from `address` unless a cap is reached (then nothing is counted).
  Admission Admit(const std::string& address);
  // Uncounts a connection that Admit admitted.
  void Release(const std::string& address);

  size_t total() const { return total_; }
  size_t from(const std::string& address) const;

 private:
  const size_t max_total_;
  const size_t max_per_address_;
  size_t total_ = 0;
  std::unordered_map<std::string, size_t> by_address_;  // only addresses with connections
};

}  // namespace benchlab
