#include "rpc/connection_caps.h"

namespace benchlab {

ConnectionCaps::Admission ConnectionCaps::Admit(const std::string& address) {
  if (total_ >= max_total_) return Admission::kTotalFull;
  size_t& count = by_address_[address];
  if (count >= max_per_address_) {
    if (count == 0) by_address_.erase(address);  // a cap of 0 keeps no empty entry
    return Admission::kAddressFull;
  }
  ++count;
  ++total_;
  return Admission::kAdmitted;
}

void ConnectionCaps::Release(const std::string& address) {
  auto it = by_address_.find(address);
  if (it == by_address_.end()) return;
  --total_;
  if (--it->second == 0) by_address_.erase(it);
}

size_t ConnectionCaps::from(const std::string& address) const {
  auto it = by_address_.find(address);
  return it == by_address_.end() ? 0 : it->second;
}

}  // namespace benchlab
