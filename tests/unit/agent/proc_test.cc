#include "agent/proc.h"

#include <gtest/gtest.h>

#include <map>

#include "common/sysenv.h"
#include "tests/fakes/fake_proc.h"

namespace benchlab {
namespace {

TEST(ParseProcStatTest, CommWithSpacesAndParentheses) {
  FakeProcess p;
  p.pid = 4242;
  p.ppid = 17;
  p.comm = "a b) c";
  p.state = 'R';
  p.utime = 11;
  p.stime = 22;
  p.cutime = 33;
  p.cstime = 44;
  p.threads = 5;
  p.starttime = 987654;
  p.rss_kb = 400;  // 100 pages of 4 KiB in the fake's format
  Result<ProcStat> st = ParseProcStat(FormatFakeStat(p));
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->pid, 4242);
  EXPECT_EQ(st->comm, "a b) c");
  EXPECT_EQ(st->state, 'R');
  EXPECT_EQ(st->ppid, 17);
  EXPECT_EQ(st->pgrp, 4242);
  EXPECT_EQ(st->utime, 11u);
  EXPECT_EQ(st->stime, 22u);
  EXPECT_EQ(st->cutime, 33u);
  EXPECT_EQ(st->cstime, 44u);
  EXPECT_EQ(st->num_threads, 5);
  EXPECT_EQ(st->starttime, 987654u);
  EXPECT_EQ(st->rss_pages, 100u);
}

TEST(ParseProcStatTest, RealKernelLine) {
  const char* line =
      "1 (systemd) S 0 1 1 0 -1 4194560 52138 1871093 120 1335 155 297 4127 2199 20 0 1 0 27 "
      "171941888 3023 18446744073709551615 1 1 0 0 0 0 671173123 4096 1260 0 0 0 17 1 0 0 0 0 "
      "0 0 0 0 0 0 0 0 0\n";
  Result<ProcStat> st = ParseProcStat(line);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->comm, "systemd");
  EXPECT_EQ(st->ppid, 0);
  EXPECT_EQ(st->utime, 155u);
  EXPECT_EQ(st->stime, 297u);
  EXPECT_EQ(st->cutime, 4127u);
  EXPECT_EQ(st->cstime, 2199u);
  EXPECT_EQ(st->num_threads, 1);
  EXPECT_EQ(st->starttime, 27u);
  EXPECT_EQ(st->rss_pages, 3023u);
}

TEST(ParseProcStatTest, MalformedInputsNameTheProblem) {
  Result<ProcStat> no_paren = ParseProcStat("12 comm S 1 2 3");
  ASSERT_FALSE(no_paren.ok());
  EXPECT_EQ(no_paren.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_paren.status().message().find("comm"), std::string::npos);

  Result<ProcStat> short_line = ParseProcStat("12 (x) S 1 2 3 4");
  ASSERT_FALSE(short_line.ok());
  EXPECT_NE(short_line.status().message().find("at least 24 fields"), std::string::npos);

  FakeProcess p;
  p.pid = 12;
  std::string text = FormatFakeStat(p);
  // Replace utime (field 14) with a word.
  Result<ProcStat> good = ParseProcStat(text);
  ASSERT_TRUE(good.ok());
  std::string after = text.substr(text.rfind(')') + 2);
  size_t pos = 0;
  for (int field = 3; field < 14; ++field) pos = after.find(' ', pos) + 1;
  after.replace(pos, after.find(' ', pos) - pos, "lots");
  Result<ProcStat> bad_utime = ParseProcStat(text.substr(0, text.rfind(')') + 2) + after);
  ASSERT_FALSE(bad_utime.ok());
  EXPECT_NE(bad_utime.status().message().find("field 14 (utime)"), std::string::npos)
      << bad_utime.status().message();

  EXPECT_FALSE(ParseProcStat("").ok());
  EXPECT_FALSE(ParseProcStat("abc (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 5 6 7").ok());
  EXPECT_FALSE(ParseProcStat("5 (x) SS 1 1 1 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 5 6 7").ok());
  EXPECT_TRUE(ParseProcStat("5 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 5 6 7").ok());
}

TEST(ParseProcStatusTest, ReadsTheFieldsItNeeds) {
  FakeProcess p;
  p.pid = 9;
  p.rss_kb = 5120;
  p.hwm_kb = 8192;
  p.threads = 7;
  p.voluntary_ctxt_switches = 123;
  p.nonvoluntary_ctxt_switches = 45;
  Result<ProcStatus> st = ParseProcStatus(FormatFakeStatus(p));
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->vm_rss_kb, 5120u);
  EXPECT_EQ(st->vm_hwm_kb, 8192u);
  EXPECT_EQ(st->threads, 7);
  EXPECT_EQ(st->voluntary_ctxt_switches, 123u);
  EXPECT_EQ(st->nonvoluntary_ctxt_switches, 45u);
}

TEST(ParseProcStatusTest, KernelThreadWithoutVmRssReadsZero) {
  FakeProcess p;
  p.pid = 2;
  p.omit_vm_rss = true;
  p.threads = 1;
  Result<ProcStatus> st = ParseProcStatus(FormatFakeStatus(p));
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->vm_rss_kb, 0u);
  EXPECT_EQ(st->threads, 1);
}

TEST(ParseProcStatusTest, Malformed) {
  Result<ProcStatus> bad = ParseProcStatus("Name:\tx\nVmRSS:\tmany kB\nThreads:\t1\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("VmRSS"), std::string::npos);
  EXPECT_FALSE(ParseProcStatus("").ok());
  EXPECT_FALSE(ParseProcStatus("Name:\tx\nThreads:\t\n").ok());
}

// A tree root(100) -> child(101) -> grandchild(102), and an unrelated process 200.
// Every test runs twice: with /proc/loadavg kept as the kernel keeps it (the last pid moves on
// each new process, so the sampler lists /proc only when one appeared), and without it (the
// sampler lists /proc every time). Both must give the same figures.
class ProcTreeSamplerTest : public ::testing::TestWithParam<bool> {
 protected:
  ProcTreeSamplerTest() : env_(fake_.root()) {
    if (GetParam()) fake_.PutLoadAvg(last_pid_);
    root_ = Proc(100, 1, 10, 5);
    child_ = Proc(101, 100, 20, 6);
    grandchild_ = Proc(102, 101, 30, 7);
    unrelated_ = Proc(200, 1, 1000, 1000);
    for (const FakeProcess* p : {&root_, &child_, &grandchild_, &unrelated_}) Put(*p);
    fake_.Write("/proc/self", "");  // non-numeric entries are ignored
  }

  static FakeProcess Proc(pid_t pid, pid_t ppid, uint64_t utime, uint64_t stime) {
    FakeProcess p;
    p.pid = pid;
    p.ppid = ppid;
    p.utime = utime;
    p.stime = stime;
    p.starttime = 5000 + pid;
    p.rss_kb = 1000 * static_cast<uint64_t>(pid);
    p.threads = 2;
    p.voluntary_ctxt_switches = 10;
    p.nonvoluntary_ctxt_switches = 1;
    return p;
  }

  // Creates or updates a process; a new one (pid or start time not seen before) moves the last
  // pid on, as fork does.
  void Put(const FakeProcess& p) {
    auto [it, inserted] = starttimes_.emplace(p.pid, p.starttime);
    if (inserted || it->second != p.starttime) {
      it->second = p.starttime;
      ++last_pid_;
      if (GetParam()) fake_.PutLoadAvg(last_pid_);
    }
    fake_.Put(p);
  }

  double Seconds(uint64_t ticks) {
    return static_cast<double>(ticks) / static_cast<double>(env_.ClockTicksPerSecond());
  }

  TreeSample MustSample(ProcTreeSampler& sampler) {
    Result<TreeSample> s = sampler.Sample();
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : TreeSample{};
  }

  FakeProcRoot fake_;
  RootedSysEnv env_;
  pid_t last_pid_ = 5000;
  std::map<pid_t, uint64_t> starttimes_;
  FakeProcess root_, child_, grandchild_, unrelated_;
};

INSTANTIATE_TEST_SUITE_P(LastPid, ProcTreeSamplerTest, ::testing::Bool(),
                         // Not `info`: INSTANTIATE_TEST_SUITE_P's own parameter has that name.
                         [](const ::testing::TestParamInfo<bool>& known) {
                           return known.param ? "Known" : "Unreadable";
                         });

TEST_P(ProcTreeSamplerTest, SumsOnlyTheTree) {
  ProcTreeSampler sampler(env_, 100);
  TreeSample s = MustSample(sampler);
  EXPECT_DOUBLE_EQ(s.cpu_user_s, Seconds(10 + 20 + 30));
  EXPECT_DOUBLE_EQ(s.cpu_sys_s, Seconds(5 + 6 + 7));
  EXPECT_EQ(s.processes, 3);
  EXPECT_EQ(s.rss_kb, 100000u + 101000u + 102000u);
  EXPECT_EQ(s.threads, 6);
  EXPECT_EQ(s.voluntary_ctxt_switches, 30u);
  EXPECT_EQ(s.nonvoluntary_ctxt_switches, 3u);
}

TEST_P(ProcTreeSamplerTest, SubtreeRootSeesOnlyItsDescendants) {
  ProcTreeSampler sampler(env_, 101);
  TreeSample s = MustSample(sampler);
  EXPECT_DOUBLE_EQ(s.cpu_user_s, Seconds(20 + 30));
  EXPECT_EQ(s.processes, 2);
}

TEST_P(ProcTreeSamplerTest, LaterGrandchildIsIncluded) {
  ProcTreeSampler sampler(env_, 100);
  MustSample(sampler);
  Put(Proc(103, 101, 40, 8));
  TreeSample s = MustSample(sampler);
  EXPECT_DOUBLE_EQ(s.cpu_user_s, Seconds(10 + 20 + 30 + 40));
  EXPECT_DOUBLE_EQ(s.cpu_sys_s, Seconds(5 + 6 + 7 + 8));
  EXPECT_EQ(s.processes, 4);
}

TEST_P(ProcTreeSamplerTest, ExitedChildKeepsItsCpuAndLeavesRss) {
  ProcTreeSampler sampler(env_, 100);
  TreeSample first = MustSample(sampler);
  // The grandchild runs a little more, is sampled, then exits and nobody in the tree reaps it
  // (its parent ignores SIGCHLD): its CPU stays in the total, its RSS leaves it.
  grandchild_.utime = 35;
  Put(grandchild_);
  TreeSample second = MustSample(sampler);
  EXPECT_GE(second.cpu_user_s, first.cpu_user_s);
  fake_.Remove(102);
  TreeSample third = MustSample(sampler);
  EXPECT_DOUBLE_EQ(third.cpu_user_s, Seconds(10 + 20 + 35));
  EXPECT_DOUBLE_EQ(third.cpu_sys_s, Seconds(5 + 6 + 7));
  EXPECT_EQ(third.processes, 2);
  EXPECT_EQ(third.rss_kb, 100000u + 101000u);
  TreeSample fourth = MustSample(sampler);
  EXPECT_DOUBLE_EQ(fourth.cpu_user_s, third.cpu_user_s);
}

TEST_P(ProcTreeSamplerTest, ReapedChildIsNotCountedTwice) {
  ProcTreeSampler sampler(env_, 100);
  MustSample(sampler);  // 60 user, 18 sys
  // The grandchild ran to 32/9 ticks after the sample, exited, and the child reaped it: its
  // final figures moved into the child's cutime/cstime.
  fake_.Remove(102);
  child_.cutime = 32;
  child_.cstime = 9;
  Put(child_);
  TreeSample s = MustSample(sampler);
  EXPECT_DOUBLE_EQ(s.cpu_user_s, Seconds(10 + 20 + 32));
  EXPECT_DOUBLE_EQ(s.cpu_sys_s, Seconds(5 + 6 + 9));
}

TEST_P(ProcTreeSamplerTest, CascadeReapedByRootIsNotCountedTwice) {
  ProcTreeSampler sampler(env_, 100);
  MustSample(sampler);
  // Child and grandchild both exit between samples; the child reaped the grandchild, the root
  // reaped the child, so the root's cutime holds both.
  fake_.Remove(102);
  fake_.Remove(101);
  root_.cutime = 20 + 30;
  root_.cstime = 6 + 7;
  Put(root_);
  TreeSample s = MustSample(sampler);
  EXPECT_DOUBLE_EQ(s.cpu_user_s, Seconds(10 + 50));
  EXPECT_DOUBLE_EQ(s.cpu_sys_s, Seconds(5 + 13));
  EXPECT_EQ(s.processes, 1);
}

TEST_P(ProcTreeSamplerTest, ReparentedGrandchildStaysInTheTree) {
  ProcTreeSampler sampler(env_, 100);
  MustSample(sampler);
  // The child dies unreaped by the tree; its orphan is reparented to a subreaper outside it.
  fake_.Remove(101);
  grandchild_.ppid = 1;
  Put(grandchild_);
  TreeSample s = MustSample(sampler);
  EXPECT_EQ(s.processes, 2);
  EXPECT_DOUBLE_EQ(s.cpu_user_s, Seconds(10 + 20 + 30));
  EXPECT_EQ(s.rss_kb, 100000u + 102000u);
}

TEST_P(ProcTreeSamplerTest, ReusedPidIsANewProcess) {
  ProcTreeSampler sampler(env_, 100);
  MustSample(sampler);
  // 102 exits (not reaped into any member's cutime) and its pid is reused by a new child of
  // 101 that has used 3 ticks so far.
  FakeProcess reused = Proc(102, 101, 3, 1);
  reused.starttime = 9999;
  Put(reused);
  TreeSample s = MustSample(sampler);
  EXPECT_DOUBLE_EQ(s.cpu_user_s, Seconds(10 + 20 + 30 + 3));
  EXPECT_DOUBLE_EQ(s.cpu_sys_s, Seconds(5 + 6 + 7 + 1));
  EXPECT_EQ(s.processes, 3);
}

TEST_P(ProcTreeSamplerTest, ReusedPidOutsideTheTreeIsNotAMember) {
  ProcTreeSampler sampler(env_, 100);
  MustSample(sampler);
  FakeProcess stranger = Proc(102, 1, 500, 500);
  stranger.starttime = 9999;
  Put(stranger);
  TreeSample s = MustSample(sampler);
  EXPECT_EQ(s.processes, 2);
  EXPECT_DOUBLE_EQ(s.cpu_user_s, Seconds(10 + 20 + 30));
}

TEST_P(ProcTreeSamplerTest, RootMissingIsNotFound) {
  ProcTreeSampler never(env_, 4321);
  EXPECT_EQ(never.Sample().status().code(), StatusCode::kNotFound);

  ProcTreeSampler sampler(env_, 100);
  MustSample(sampler);
  fake_.Remove(100);
  Result<TreeSample> gone = sampler.Sample();
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_NE(gone.status().message().find("100"), std::string::npos);

  // The root's pid taken by another process is not the root.
  FakeProcess impostor = Proc(100, 1, 0, 0);
  impostor.starttime = 77777;
  Put(impostor);
  EXPECT_EQ(sampler.Sample().status().code(), StatusCode::kNotFound);
}

TEST_P(ProcTreeSamplerTest, UnreadableStrangersAreSkipped) {
  fake_.Write("/proc/300/stat", "");                 // vanished mid-read
  fake_.Write("/proc/301/status", "Threads:\t1\n");  // no stat file: vanished after listing
  ProcTreeSampler sampler(env_, 100);
  TreeSample s = MustSample(sampler);
  EXPECT_EQ(s.processes, 3);
}

TEST_P(ProcTreeSamplerTest, MemberWithoutStatusCountsCpuButNoRss) {
  std::filesystem::remove(fake_.root() + "/proc/102/status");
  ProcTreeSampler sampler(env_, 100);
  TreeSample s = MustSample(sampler);
  EXPECT_EQ(s.processes, 3);
  EXPECT_DOUBLE_EQ(s.cpu_user_s, Seconds(60));
  EXPECT_EQ(s.rss_kb, 100000u + 101000u);
}

TEST_P(ProcTreeSamplerTest, NeverGoesBackwardsOverAChurningTree) {
  ProcTreeSampler sampler(env_, 100);
  double last_user = 0, last_sys = 0;
  uint64_t root_cutime = 0, root_cstime = 0;
  // Short-lived children come and go; some are reaped by the root, some are not.
  for (int step = 0; step < 20; ++step) {
    pid_t pid = 1000 + step;
    Put(Proc(pid, 100, 2 + step, 1));
    TreeSample s = MustSample(sampler);
    EXPECT_GE(s.cpu_user_s, last_user) << "step " << step;
    EXPECT_GE(s.cpu_sys_s, last_sys) << "step " << step;
    last_user = s.cpu_user_s;
    last_sys = s.cpu_sys_s;
    fake_.Remove(pid);
    if (step % 2 == 0) {
      root_cutime += 2 + step + 1;  // it ran one more tick before exiting
      root_cstime += 1;
      root_.cutime = root_cutime;
      root_.cstime = root_cstime;
      Put(root_);
    }
  }
  TreeSample end = MustSample(sampler);
  EXPECT_GE(end.cpu_user_s, last_user);
  // Reaped children count at their final figures, unreaped ones at their last-seen ones.
  uint64_t expected_user = 10 + 20 + 30;
  for (int step = 0; step < 20; ++step) expected_user += 2 + step + (step % 2 == 0 ? 1 : 0);
  EXPECT_DOUBLE_EQ(end.cpu_user_s, Seconds(expected_user));
  EXPECT_DOUBLE_EQ(end.cpu_sys_s, Seconds(5 + 6 + 7 + 20));
}

TEST_P(ProcTreeSamplerTest, ListsProcOnlyWhenAProcessMayHaveAppeared) {
  ProcTreeSampler sampler(env_, 100);
  MustSample(sampler);
  MustSample(sampler);
  grandchild_.utime = 31;  // an existing member runs: no new pid
  Put(grandchild_);
  TreeSample s = MustSample(sampler);
  EXPECT_DOUBLE_EQ(s.cpu_user_s, Seconds(10 + 20 + 31));
  fake_.Remove(102);  // a member exits: no new pid either
  s = MustSample(sampler);
  EXPECT_EQ(s.processes, 2);
  EXPECT_EQ(sampler.full_scans(), GetParam() ? 1 : 4);
  Put(Proc(104, 100, 4, 4));  // a fork: the next sample lists /proc and finds it
  s = MustSample(sampler);
  EXPECT_EQ(s.processes, 3);
  EXPECT_EQ(sampler.full_scans(), GetParam() ? 2 : 5);
}

TEST(ProcTreeSamplerLastPidTest, MalformedLoadAvgListsProcEveryTime) {
  FakeProcRoot fake;
  FakeProcess root;
  root.pid = 100;
  root.ppid = 1;
  root.starttime = 42;
  root.threads = 1;
  fake.Put(root);
  fake.Write("/proc/loadavg", "0.20 0.18 0.12 1/80\n");
  RootedSysEnv env(fake.root());
  ProcTreeSampler sampler(env, 100);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sampler.Sample().ok());
  EXPECT_EQ(sampler.full_scans(), 3);
}

}  // namespace
}  // namespace benchlab
