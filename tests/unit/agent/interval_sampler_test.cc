#include "agent/interval_sampler.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_proc.h"

namespace benchlab {
namespace {

// The sampling period is long so only the exact Begin and End samples are taken: the interval's
// figures then depend on the canned files alone.
TEST(IntervalSamplerTest, CpuIsTheTreeDeltaBetweenBeginAndEnd) {
  FakeProcRoot root;
  RootedSysEnv env(root.root());
  const uint64_t hz = static_cast<uint64_t>(env.ClockTicksPerSecond());
  root.Put({.pid = 100, .ppid = 1, .utime = 50, .stime = 10, .rss_kb = 1000});
  root.Put({.pid = 101, .ppid = 100, .utime = 5, .stime = 5, .rss_kb = 500});
  IntervalSampler sampler(env, 100, std::chrono::hours(1));
  ASSERT_TRUE(sampler.Begin().ok());
  root.Put({.pid = 100, .ppid = 1, .utime = 50 + hz, .stime = 10 + hz / 2, .rss_kb = 3000});
  root.Put({.pid = 101, .ppid = 100, .utime = 5 + hz, .stime = 5, .rss_kb = 1000});
  // A grandchild started mid-interval counts too.
  root.Put({.pid = 102, .ppid = 101, .utime = hz, .stime = 0, .starttime = 2000, .rss_kb = 1000});
  auto figures = sampler.End();
  ASSERT_TRUE(figures.ok()) << figures.status().ToString();
  EXPECT_NEAR(figures->cpu_user_s, 3.0, 1e-9);
  EXPECT_NEAR(figures->cpu_sys_s, 0.5, 1e-9);
  EXPECT_EQ(figures->rss_peak_kb, 5000u);
  EXPECT_EQ(figures->rss_mean_kb, (1500u + 5000u) / 2);
  EXPECT_TRUE(figures->target_alive);
  ASSERT_EQ(figures->samples.size(), 1u);
  EXPECT_EQ(figures->samples[0].rss_kb, 5000u);
}

TEST(IntervalSamplerTest, RootGoneAtEndIsReportedNotInvented) {
  FakeProcRoot root;
  RootedSysEnv env(root.root());
  root.Put({.pid = 200, .ppid = 1, .utime = 10, .rss_kb = 100});
  IntervalSampler sampler(env, 200, std::chrono::hours(1));
  ASSERT_TRUE(sampler.Begin().ok());
  root.Remove(200);
  auto figures = sampler.End();
  ASSERT_TRUE(figures.ok());
  EXPECT_FALSE(figures->target_alive);
  EXPECT_DOUBLE_EQ(figures->cpu_user_s, 0.0);
}

TEST(IntervalSamplerTest, BeginOnAMissingRootFailsAndEndWithoutBeginIsAnError) {
  FakeProcRoot root;
  RootedSysEnv env(root.root());
  IntervalSampler sampler(env, 300, std::chrono::hours(1));
  EXPECT_EQ(sampler.Begin().code(), StatusCode::kNotFound);
  EXPECT_EQ(sampler.End().status().code(), StatusCode::kFailedPrecondition);
}

TEST(IntervalSamplerTest, PeriodicSamplesFormASeries) {
  FakeProcRoot root;
  RootedSysEnv env(root.root());
  root.Put({.pid = 400, .ppid = 1, .utime = 10, .rss_kb = 100});
  IntervalSampler sampler(env, 400, std::chrono::milliseconds(5));
  ASSERT_TRUE(sampler.Begin().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  auto figures = sampler.End();
  ASSERT_TRUE(figures.ok());
  ASSERT_GE(figures->samples.size(), 2u);
  for (size_t i = 1; i < figures->samples.size(); ++i) {
    EXPECT_GT(figures->samples[i].t_s, figures->samples[i - 1].t_s);
  }
}

}  // namespace
}  // namespace benchlab
