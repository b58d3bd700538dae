#include "agent/window_profiler.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "tests/unit/support/eventually.h"

namespace benchlab {
namespace {

using std::chrono::milliseconds;

// The hot function the profile must find by name.
__attribute__((noinline)) uint64_t BurnInNamedFunction(uint64_t rounds) {
  volatile uint64_t x = 1;
  for (uint64_t i = 0; i < rounds; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

// A child that burns CPU in BurnInNamedFunction until killed.
pid_t StartBurner() {
  const pid_t pid = fork();
  if (pid == 0) {
    while (true) BurnInNamedFunction(1 << 20);
  }
  return pid;
}

class WindowProfilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (system("perf --version > /dev/null 2>&1") != 0)
      GTEST_SKIP() << "linux-perf is not installed";
    char pattern[] = "/tmp/window_profiler_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (burner_ > 0) {
      kill(burner_, SIGKILL);
      waitpid(burner_, nullptr, 0);
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  ProfileSpec Spec(pid_t pid) {
    ProfileSpec spec;
    spec.pids = {pid};
    spec.frequency_hz = 99;
    spec.scratch_dir = dir_ + "/profile";
    return spec;
  }
  std::string dir_;
  pid_t burner_ = -1;
};

TEST_F(WindowProfilerTest, FindsTheHotFunctionByNameOnlyBetweenEnableAndDisable) {
  burner_ = StartBurner();
  auto profiler = WindowProfiler::Start(RealSysEnv(), Spec(burner_), milliseconds(5000));
  ASSERT_TRUE(profiler.ok()) << profiler.status().message();
  std::this_thread::sleep_for(milliseconds(1500));  // burning, not sampled
  Status on = (*profiler)->Enable(milliseconds(5000));
  if (on.code() == StatusCode::kFailedPrecondition) GTEST_SKIP() << on.message();
  ASSERT_TRUE(on.ok()) << on.message();
  std::this_thread::sleep_for(milliseconds(300));
  auto folded = (*profiler)->Finish(milliseconds(20000));
  ASSERT_TRUE(folded.ok()) << folded.status().message();
  const uint64_t all = folded->samples();
  uint64_t hot = 0;
  for (const auto& [stack, count] : folded->stacks) {
    EXPECT_EQ(stack.find("0x"), std::string::npos) << "a raw address: " << stack;
    if (stack.find("BurnInNamedFunction") != std::string::npos) hot += count;
  }
  EXPECT_GT(all, 0u);
  // 0.3 s enabled at 99 Hz is at most about 30 samples; the 1.5 s before it, had it been
  // sampled, would have added up to 150 more.
  EXPECT_LE(all, 45u) << "samples from outside the enabled interval";
  EXPECT_GE(hot * 10, all * 8) << FormatFolded(*folded);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/profile/perf.data.old"));
}

// A child that waits for a byte on `go`, then loads a library the test binary does not link
// (as a runtime maps its JIT code or a server its plug-ins during warm-up) and burns CPU in it
// (lzma_crc64).
pid_t StartLateLoader(int go) {
  const pid_t pid = fork();
  if (pid == 0) {
    char byte = 0;
    if (read(go, &byte, 1) != 1) _exit(1);
    void* lib = dlopen("liblzma.so.5", RTLD_NOW);
    if (lib == nullptr) _exit(2);
    using Crc64 = uint64_t (*)(const uint8_t*, size_t, uint64_t);
    auto crc = reinterpret_cast<Crc64>(dlsym(lib, "lzma_crc64"));
    if (crc == nullptr) _exit(3);
    static uint8_t buffer[1 << 16];
    volatile uint64_t sum = 0;
    while (true) sum = sum + crc(buffer, sizeof buffer, sum);
  }
  return pid;
}

TEST_F(WindowProfilerTest, CodeMappedBeforeTheWindowIsNamed) {
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  burner_ = StartLateLoader(go[0]);
  close(go[0]);
  auto profiler = WindowProfiler::Start(RealSysEnv(), Spec(burner_), milliseconds(5000));
  if (profiler.status().code() == StatusCode::kFailedPrecondition) {
    GTEST_SKIP() << profiler.status().message();
  }
  ASSERT_TRUE(profiler.ok()) << profiler.status().message();
  // The library is mapped while sampling is off, before the window.
  ASSERT_EQ(write(go[1], "x", 1), 1);
  close(go[1]);
  ASSERT_TRUE(Eventually([&] {
    std::ifstream maps("/proc/" + std::to_string(burner_) + "/maps");
    const std::string text((std::istreambuf_iterator<char>(maps)),
                           std::istreambuf_iterator<char>());
    return text.find("liblzma.so") != std::string::npos;
  }));
  ASSERT_TRUE((*profiler)->Enable(milliseconds(5000)).ok());
  std::this_thread::sleep_for(milliseconds(500));  // the window: samples are taken
  auto folded = (*profiler)->Finish(milliseconds(20000));
  ASSERT_TRUE(folded.ok()) << folded.status().message();
  uint64_t named = 0;
  for (const auto& [stack, count] : folded->stacks) {
    // The CRC's code is liblzma's own (not exported), so its frame is the library's name.
    if (stack.find("[liblzma.so") != std::string::npos) named += count;
  }
  // Had perf missed the mapping, the library's frames would be [unknown].
  EXPECT_GE(named * 10, folded->samples() * 8) << FormatFolded(*folded);
}

TEST_F(WindowProfilerTest, AProcessThatIsGoneIsAnErrorInPerfsWords) {
  burner_ = StartBurner();
  const pid_t gone = burner_;
  kill(gone, SIGKILL);
  waitpid(gone, nullptr, 0);
  burner_ = -1;
  auto profiler = WindowProfiler::Start(RealSysEnv(), Spec(gone), milliseconds(5000));
  ASSERT_FALSE(profiler.ok());
  const Status on = profiler.status();
  EXPECT_EQ(on.code(), StatusCode::kFailedPrecondition) << on.message();
  EXPECT_NE(on.message().find("profile: perf record exit status"), std::string::npos)
      << on.message();
  EXPECT_NE(on.message().find("No such process"), std::string::npos)
      << "perf's own words: " << on.message();
}

// The PMU's cycles where the host has a core PMU, the software cpu-clock where it has none (a
// virtual machine such as this lab's) or where its PMUs are a hybrid's two.
TEST(SamplingEventTest, CyclesWithACorePmuCpuClockWithout) {
  char pattern[] = "/tmp/sampling_event_test.XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string root = pattern;
  RootedSysEnv env(root);
  const std::string devices = root + "/sys/bus/event_source/devices";
  std::filesystem::create_directories(devices + "/software");
  EXPECT_EQ(SamplingEvent(env), "cpu-clock");
  std::filesystem::create_directories(devices + "/cpu_core");
  std::filesystem::create_directories(devices + "/cpu_atom");
  EXPECT_EQ(SamplingEvent(env), "cpu-clock");
  std::filesystem::create_directories(devices + "/cpu");
  EXPECT_EQ(SamplingEvent(env), "cycles");
  std::filesystem::remove_all(root);
}

TEST_F(WindowProfilerTest, TheScratchDirectoryGoesWithTheProfiler) {
  burner_ = StartBurner();
  {
    auto profiler = WindowProfiler::Start(RealSysEnv(), Spec(burner_), milliseconds(5000));
    ASSERT_TRUE(profiler.ok());
    EXPECT_TRUE(std::filesystem::exists(dir_ + "/profile/control"));
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/profile"));
  ProfileSpec bad = Spec(burner_);
  bad.frequency_hz = 0;
  EXPECT_EQ(WindowProfiler::Start(RealSysEnv(), bad, milliseconds(5000)).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace benchlab
