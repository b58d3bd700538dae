#include "coordinator/server/stream_slots.h"

namespace benchlab {

StreamSlots::Slot::~Slot() {
  if (slots_ != nullptr) slots_->Release(caller_);
}

Result<StreamSlots::Slot> StreamSlots::Take(const std::string& caller, const std::string& what) {
  std::lock_guard lock(mu_);
  if (running_ >= total_) {
    return Status::ResourceExhausted("the coordinator runs " + std::to_string(total_) + " " + what +
                                     " in all, its limit (kMaxWatchStreams); try again "
                                     "once one ends");
  }
  size_t& mine = by_caller_[caller];
  if (mine >= per_caller_) {
    return Status::ResourceExhausted(caller + " runs " + std::to_string(mine) + " " + what +
                                     ", the limit per caller (kMaxWatchStreamsPerCaller); end "
                                     "one first");
  }
  ++mine;
  ++running_;
  return Slot(this, caller);
}

size_t StreamSlots::running() const {
  std::lock_guard lock(mu_);
  return running_;
}

void StreamSlots::Release(const std::string& caller) {
  std::lock_guard lock(mu_);
  --running_;
  if (auto it = by_caller_.find(caller); it != by_caller_.end() && --it->second == 0) {
    by_caller_.erase(it);
  }
}

}  // namespace benchlab
