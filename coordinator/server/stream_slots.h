// StreamSlots: how many long-lived calls (WatchCampaign streams) run at once, per caller and in
// all (docs/security.md, "Limits"). gRPC's synchronous server gives every running call a thread
// of its own, so a viewer opening thousands of streams on one channel made the coordinator run
// thousands of threads; a stream beyond a limit is refused with RESOURCE_EXHAUSTED naming it.
// A caller is its certificate's identity (benchlab://ROLE/NAME), or on a plaintext listener
// (loopback only) its connection's address. Thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "common/status.h"

namespace benchlab {

// The coordinator's WatchCampaign streams at once, per caller and in all.
inline constexpr size_t kMaxWatchStreamsPerCaller = 16;
inline constexpr size_t kMaxWatchStreams = 256;

class StreamSlots {
 public:
  StreamSlots(size_t per_caller, size_t total) : per_caller_(per_caller), total_(total) {}
  StreamSlots(const StreamSlots&) = delete;
  StreamSlots& operator=(const StreamSlots&) = delete;

  // One running stream; its slot is free again when the Slot is destroyed.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : slots_(other.slots_), caller_(std::move(other.caller_)) {
      other.slots_ = nullptr;
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot();

   private:
    friend class StreamSlots;
    Slot(StreamSlots* slots, std::string caller) : slots_(slots), caller_(std::move(caller)) {}
    StreamSlots* slots_;
    std::string caller_;
  };

  // A slot for `caller`, or ResourceExhausted naming the limit reached; `what` names the call
  // ("WatchCampaign streams").
  Result<Slot> Take(const std::string& caller, const std::string& what);

  size_t running() const;

 private:
  void Release(const std::string& caller);

  const size_t per_caller_;
  const size_t total_;
  mutable std::mutex mu_;
  std::map<std::string, size_t> by_caller_;  // under mu_; callers with a stream running
  size_t running_ = 0;                       // under mu_
};

}  // namespace benchlab
