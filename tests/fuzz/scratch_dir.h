// A fuzz target's private directory: made under the temporary directory ($TMPDIR, else /tmp) as
// benchlab-fuzz-NAME-XXXXXX, and removed with everything in it when the process exits normally
// (libFuzzer's runs end with exit()); a crashed run leaves it for inspection.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_check.h"

namespace benchlab::fuzz {

inline std::filesystem::path MakeScratchDir(const std::string& name) {
  static std::mutex mu;
  static std::vector<std::filesystem::path>* made = nullptr;  // removed at exit
  std::string pattern =
      (std::filesystem::temp_directory_path() / ("benchlab-fuzz-" + name + "-XXXXXX")).string();
  FUZZ_CHECK(::mkdtemp(pattern.data()) != nullptr, "mkdtemp " + pattern);
  std::lock_guard lock(mu);
  if (made == nullptr) {
    made = new std::vector<std::filesystem::path>();
    std::atexit([] {
      std::error_code ec;
      for (const auto& dir : *made) std::filesystem::remove_all(dir, ec);
    });
  }
  made->push_back(pattern);
  return pattern;
}

}  // namespace benchlab::fuzz
