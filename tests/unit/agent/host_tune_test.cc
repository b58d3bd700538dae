#include "agent/host_tune.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "tests/fakes/fake_proc.h"

namespace benchlab {
namespace {

const std::string kState = "/var/lib/benchlab/host-tune.json";
const std::string kCpu = "/sys/devices/system/cpu/";

// Every file the profile may write, with what a default kernel holds there.
std::map<std::string, std::string> DefaultHost() {
  std::map<std::string, std::string> files;
  for (int i = 0; i < 4; ++i) {
    const std::string dir = kCpu + "cpu" + std::to_string(i) + "/";
    files[dir + "cpufreq/scaling_governor"] = "powersave\n";
    files[dir + "cpufreq/scaling_available_governors"] = "performance powersave\n";
    files[dir + "cpuidle/state0/disable"] = "0\n";
    files[dir + "cpuidle/state1/disable"] = "0\n";
    files[dir + "cpuidle/state2/disable"] = "0\n";
    files[dir + "cpuidle/state3/disable"] = "0\n";
  }
  files[kCpu + "intel_pstate/no_turbo"] = "0\n";
  files["/proc/sys/kernel/randomize_va_space"] = "2\n";
  files["/sys/kernel/mm/transparent_hugepage/enabled"] = "[always] madvise never\n";
  files["/sys/kernel/mm/transparent_hugepage/defrag"] = "always defer [madvise] never\n";
  files["/proc/irq/default_smp_affinity"] = "f\n";
  files["/proc/irq/1/smp_affinity_list"] = "0-3\n";
  files["/proc/irq/2/smp_affinity_list"] = "0\n";
  files["/proc/irq/3/smp_affinity_list"] = "2\n";  // only on a tuned CPU: left alone
  files["/proc/sys/kernel/perf_event_max_sample_rate"] = "100000\n";
  return files;
}

std::string ReadBack(const FakeProcRoot& root, const std::string& path) {
  std::ifstream in(root.root() + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void PutAll(FakeProcRoot& root, const std::map<std::string, std::string>& files) {
  for (const auto& [path, content] : files) root.Write(path, content);
}

TEST(HostTuneTest, TuneThenResetRestoresEveryValue) {
  FakeProcRoot root;
  const auto files = DefaultHost();
  PutAll(root, files);
  RootedSysEnv env(root.root());

  auto tuned = Tune(env, {2, 3}, kState);
  ASSERT_TRUE(tuned.ok()) << tuned.status().ToString();
  EXPECT_TRUE(tuned->failed.empty());
  EXPECT_EQ(ReadBack(root, kCpu + "cpu2/cpufreq/scaling_governor"), "performance");
  EXPECT_EQ(ReadBack(root, kCpu + "cpu0/cpufreq/scaling_governor"), "powersave\n")
      << "CPUs not tuned are left alone";
  EXPECT_EQ(ReadBack(root, kCpu + "intel_pstate/no_turbo"), "1");
  EXPECT_EQ(ReadBack(root, "/proc/sys/kernel/randomize_va_space"), "0");
  EXPECT_EQ(ReadBack(root, "/sys/kernel/mm/transparent_hugepage/enabled"), "never");
  EXPECT_EQ(ReadBack(root, "/sys/kernel/mm/transparent_hugepage/defrag"), "never");
  EXPECT_EQ(ReadBack(root, "/proc/irq/default_smp_affinity"), "00000003");
  EXPECT_EQ(ReadBack(root, "/proc/irq/1/smp_affinity_list"), "0-1");
  EXPECT_EQ(ReadBack(root, "/proc/irq/2/smp_affinity_list"), "0\n");
  EXPECT_EQ(ReadBack(root, "/proc/irq/3/smp_affinity_list"), "2\n");
  EXPECT_EQ(ReadBack(root, kCpu + "cpu2/cpuidle/state1/disable"), "0\n");
  EXPECT_EQ(ReadBack(root, kCpu + "cpu2/cpuidle/state2/disable"), "1");
  EXPECT_EQ(ReadBack(root, kCpu + "cpu3/cpuidle/state3/disable"), "1");
  EXPECT_EQ(ReadBack(root, kCpu + "cpu0/cpuidle/state3/disable"), "0\n");
  EXPECT_EQ(ReadBack(root, "/proc/sys/kernel/perf_event_max_sample_rate"), "100000\n")
      << "sampling profilers keep their rate";
  ASSERT_EQ(tuned->skipped.size(), 1u);
  EXPECT_NE(tuned->skipped[0].find("/proc/irq/3/smp_affinity_list"), std::string::npos);

  struct stat st;
  ASSERT_EQ(stat((root.root() + kState).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  auto reset = Reset(env, kState);
  ASSERT_TRUE(reset.ok()) << reset.status().ToString();
  EXPECT_TRUE(reset->failures.empty());
  EXPECT_EQ(reset->restored, reset->total);
  EXPECT_EQ(reset->total, tuned->applied.size());
  EXPECT_TRUE(reset->state_removed);
  EXPECT_FALSE(std::filesystem::exists(root.root() + kState));
  for (const auto& [path, content] : files) {
    const std::string now = ReadBack(root, path);
    // Written back without the kernel's newline; a choice file as its selected word.
    std::string expected = content.substr(0, content.size() - 1);
    if (path.find("transparent_hugepage/enabled") != std::string::npos) expected = "always";
    if (path.find("transparent_hugepage/defrag") != std::string::npos) expected = "madvise";
    EXPECT_TRUE(now == content || now == expected) << path << " reads " << now;
  }
}

TEST(HostTuneTest, RefusesWhenAStateFileExists) {
  FakeProcRoot root;
  PutAll(root, DefaultHost());
  root.Write(kState, "{\"saved\": []}\n");
  RootedSysEnv env(root.root());
  auto tuned = Tune(env, {2}, kState);
  ASSERT_FALSE(tuned.ok());
  EXPECT_EQ(tuned.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(tuned.status().message().find("run benchlab host reset first"), std::string::npos);
  EXPECT_EQ(ReadBack(root, "/proc/sys/kernel/randomize_va_space"), "2\n") << "nothing written";
}

TEST(HostTuneTest, RefusesNoCpus) {
  FakeProcRoot root;
  RootedSysEnv env(root.root());
  EXPECT_EQ(Tune(env, {}, kState).status().code(), StatusCode::kInvalidArgument);
}

// Records, at the first write to the machine, what the state file held then.
class StateWatchingEnv : public RootedSysEnv {
 public:
  StateWatchingEnv(const std::string& root, std::string state)
      : RootedSysEnv(root), state_(std::move(state)) {}
  Status WriteFile(const std::string& path, const std::string& content) override {
    if (!first_write_state_) {
      auto text = ReadFile(state_);
      first_write_state_ = text.ok() ? *text : "(missing)";
    }
    return RootedSysEnv::WriteFile(path, content);
  }
  std::optional<std::string> first_write_state_;

 private:
  std::string state_;
};

TEST(HostTuneTest, StateIsSavedBeforeAnythingIsWritten) {
  FakeProcRoot root;
  PutAll(root, DefaultHost());
  StateWatchingEnv env(root.root(), kState);
  auto tuned = Tune(env, {2, 3}, kState);
  ASSERT_TRUE(tuned.ok()) << tuned.status().ToString();
  ASSERT_TRUE(env.first_write_state_.has_value());
  auto state = nlohmann::json::parse(*env.first_write_state_, nullptr, false);
  ASSERT_TRUE(state.is_object()) << *env.first_write_state_;
  EXPECT_EQ(state["cpus"], "2-3");
  ASSERT_EQ(state["saved"].size(), tuned->applied.size());
  bool aslr = false;
  for (const auto& entry : state["saved"]) {
    if (entry["path"] == "/proc/sys/kernel/randomize_va_space") {
      aslr = true;
      EXPECT_EQ(entry["value"], "2");
    }
    if (entry["path"] == "/sys/kernel/mm/transparent_hugepage/enabled") {
      EXPECT_EQ(entry["value"], "always") << "the selected word, which can be written back";
    }
  }
  EXPECT_TRUE(aslr);
}

TEST(HostTuneTest, ResetNamesWhatItCouldNotRestoreAndKeepsTheState) {
  FakeProcRoot root;
  PutAll(root, DefaultHost());
  RootedSysEnv env(root.root());
  ASSERT_TRUE(Tune(env, {2, 3}, kState).ok());
  // The IRQ went away (a device unplugged) and THP's directory with it.
  std::filesystem::remove_all(root.root() + "/proc/irq/1");
  std::filesystem::remove_all(root.root() + "/sys/kernel/mm/transparent_hugepage");
  auto reset = Reset(env, kState);
  ASSERT_TRUE(reset.ok()) << reset.status().ToString();
  EXPECT_EQ(reset->restored + 3, reset->total);
  ASSERT_EQ(reset->failures.size(), 3u);
  EXPECT_EQ(reset->failures[0].rfind("/sys/kernel/mm/transparent_hugepage/enabled: ", 0), 0u)
      << reset->failures[0];
  EXPECT_EQ(reset->failures[2].rfind("/proc/irq/1/smp_affinity_list: ", 0), 0u)
      << reset->failures[2];
  EXPECT_FALSE(reset->state_removed);
  EXPECT_TRUE(std::filesystem::exists(root.root() + kState)) << "kept for another try";
  EXPECT_EQ(ReadBack(root, "/proc/sys/kernel/randomize_va_space"), "2") << "the rest restored";
}

TEST(HostTuneTest, ResetWithoutStateOrWithABadOne) {
  FakeProcRoot root;
  RootedSysEnv env(root.root());
  EXPECT_EQ(Reset(env, kState).status().code(), StatusCode::kNotFound);
  root.Write(kState, "not json");
  auto bad = Reset(env, kState);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find(kState), std::string::npos);
}

TEST(HostTuneTest, ResetLeavesPathsOutsideProcAndSysAlone) {
  FakeProcRoot root;
  root.Write("/etc/passwd", "root:x:0:0\n");
  root.Write(kState, R"({"saved": [{"path": "/etc/passwd", "value": "x"}]})");
  RootedSysEnv env(root.root());
  auto reset = Reset(env, kState);
  ASSERT_TRUE(reset.ok());
  ASSERT_EQ(reset->failures.size(), 1u);
  EXPECT_NE(reset->failures[0].find("not under /proc or /sys"), std::string::npos);
  EXPECT_EQ(ReadBack(root, "/etc/passwd"), "root:x:0:0\n");
}

}  // namespace
}  // namespace benchlab
