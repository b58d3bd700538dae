#include "agent/spawn_thread.h"

#include <future>

namespace benchlab {

SpawnThread::SpawnThread() : thread_([this] { Loop(); }) {}

SpawnThread::~SpawnThread() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void SpawnThread::Run(const std::function<void()>& fn) {
  std::promise<void> done;
  {
    std::lock_guard lock(mu_);
    queue_.push_back([&] {
      fn();
      done.set_value();
    });
  }
  cv_.notify_all();
  done.get_future().wait();
}

void SpawnThread::Loop() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    auto task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace benchlab
