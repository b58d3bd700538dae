// Waiting on a condition instead of sleeping for a guessed time: a test that needs something to
// have happened (an agent registered, a process gone, a row stored) polls for it, so it goes on
// as soon as it holds and still passes on a machine many times slower. The limit is generous
// and grows under ThreadSanitizer (tests/sanitizer.h); only a test that fails ever waits it out.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "tests/sanitizer.h"

namespace benchlab {

// Polls `done` every `period` until it returns true (then true) or `limit` has passed (then
// false, after one last look).
template <typename F>
bool Eventually(F&& done, std::chrono::milliseconds limit = std::chrono::milliseconds(10000),
                std::chrono::milliseconds period = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit * kSanitizerTimeScale;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    std::this_thread::sleep_for(period);
  }
  return true;
}

// A condition to wait for: `pid` no longer runs (gone, or dead and waiting to be reaped).
inline bool ProcessEnded(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() || text[close + 2] == 'Z';
}

}  // namespace benchlab
