// RssSampler: the test process's resident memory while something runs. It reads VmRSS from
// /proc/self/status at construction (the baseline) and every millisecond on its own thread until
// Stop(); the peak is the largest sample, or the kernel's VmHWM when it could be reset to the
// baseline first (writing "5" to /proc/self/clear_refs), whichever is larger. Bytes throughout.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>

namespace benchlab {

class RssSampler {
 public:
  RssSampler() {
    std::ofstream("/proc/self/clear_refs") << "5";
    baseline_ = Read("VmRSS:");
    peak_ = baseline_;
    hwm_reset_ = Read("VmHWM:") <= baseline_ + (1 << 20);
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        peak_ = std::max(peak_.load(), Read("VmRSS:"));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  ~RssSampler() { Stop(); }
  RssSampler(const RssSampler&) = delete;
  RssSampler& operator=(const RssSampler&) = delete;

  void Stop() {
    if (!thread_.joinable()) return;
    stop_.store(true);
    thread_.join();
    if (hwm_reset_) peak_ = std::max(peak_.load(), Read("VmHWM:"));
  }
  uint64_t baseline() const { return baseline_; }
  uint64_t peak() const { return peak_.load(); }  // after Stop()

 private:
  // A "Key:   123 kB" line of /proc/self/status, in bytes (0 when missing).
  static uint64_t Read(const std::string& key) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.compare(0, key.size(), key) == 0) {
        return std::stoull(line.substr(key.size())) * 1024;
      }
    }
    return 0;
  }

  uint64_t baseline_ = 0;
  bool hwm_reset_ = false;
  std::atomic<uint64_t> peak_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace benchlab
