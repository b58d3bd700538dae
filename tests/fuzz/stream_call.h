// StreamCall: how a service fuzz target makes a server-streaming call (agent RunLoad, coordinator
// WatchCampaign). A grpc::ServerWriter cannot be made outside gRPC, so the call goes through an
// in-process channel to a forwarding service, whose handler runs on a gRPC thread and calls the
// current input's service object. That handler may start after the client gave up (its deadline
// passed first) and may run on after it: StreamCall ties each handler to the call that made it
// (by a call number in the metadata), refuses a handler whose call has ended, and lets the input
// end only once its handler returned, so no handler ever touches a service object that is gone.
// Thread-safe.
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace benchlab::fuzz {

template <typename Service>
class StreamCall {
 public:
  // Client side, before the call: the service its handler is to use. Tags ctx with the call.
  void Begin(Service* service, grpc::ClientContext& ctx) {
    std::lock_guard lock(mu_);
    current_ = service;
    ++call_;
    ctx.AddMetadata(kKey, std::to_string(call_));
  }

  // Client side, after the call finished: waits until its handler (if it started) returned,
  // calling wake() meanwhile (to end a wait inside the service); a later handler is refused.
  template <typename Wake>
  void End(Wake wake) {
    std::unique_lock lock(mu_);
    while (running_) {
      lock.unlock();
      wake();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      lock.lock();
    }
    current_ = nullptr;
  }

  // Handler side: fn(service) for the call still going on; CANCELLED for one that ended.
  template <typename Fn>
  grpc::Status Run(const grpc::ServerContext& ctx, Fn fn) {
    Service* service = nullptr;
    {
      std::lock_guard lock(mu_);
      auto it = ctx.client_metadata().find(kKey);
      const bool ours = it != ctx.client_metadata().end() &&
                        std::string(it->second.data(), it->second.size()) == std::to_string(call_);
      if (current_ == nullptr || !ours) return grpc::Status::CANCELLED;
      service = current_;
      running_ = true;
    }
    grpc::Status status = fn(*service);
    std::lock_guard lock(mu_);
    running_ = false;
    return status;
  }

 private:
  static constexpr const char* kKey = "benchlab-fuzz-call";
  std::mutex mu_;
  Service* current_ = nullptr;
  uint64_t call_ = 0;
  bool running_ = false;
};

}  // namespace benchlab::fuzz
