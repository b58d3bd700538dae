// What the tests allow for when built with ThreadSanitizer (`make test-tsan`): it slows the code
// down several times over, counts its shadow memory in the process's RSS, and runs a background
// thread of its own from the first pthread_create on.
#pragma once

#include <thread>

namespace benchlab {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

// Bounds on elapsed time grow by this factor: TSan's slowdown is 5-15x (its documentation).
inline constexpr int kSanitizerTimeScale = kThreadSanitizer ? 10 : 1;

// Bounds on resident memory grow by this factor: TSan maps up to 4 shadow bytes per byte of the
// program's memory, plus its metadata, and they count in RSS.
inline constexpr int kSanitizerMemoryScale = kThreadSanitizer ? 5 : 1;

// Starts TSan's background thread (a no-op otherwise), so that counting the process's threads
// before and after a run counts only the run's own.
inline void StartSanitizerThread() {
  if constexpr (kThreadSanitizer) std::thread([] {}).join();
}

}  // namespace benchlab
