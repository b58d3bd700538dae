// EngineParamTest: runs a load-generator test suite once per I/O engine (docs/load.md,
// "Engines"), so every behaviour the suite checks holds for epoll and io_uring alike. A suite
// derives from it, sets `o.engine = GetParam()` where it builds its LoadOptions, and is
// instantiated with INSTANTIATE_TEST_SUITE_P(Engines, Suite, kEngines, EngineParamName). Where
// this kernel refuses io_uring, its half is skipped with the reason.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "loadgen/load.h"

namespace benchlab {

class EngineParamTest : public ::testing::TestWithParam<IoEngine> {
 protected:
  void SetUp() override {
    if (GetParam() == IoEngine::kIoUring) {
      const std::string why = IoUringUnavailableReason();
      if (!why.empty()) GTEST_SKIP() << "io_uring is not available here: " << why;
    }
  }
};

inline const auto kEngines = ::testing::Values(IoEngine::kEpoll, IoEngine::kIoUring);

inline std::string EngineParamName(const ::testing::TestParamInfo<IoEngine>& info) {
  return info.param == IoEngine::kEpoll ? "Epoll" : "IoUring";
}

}  // namespace benchlab
