// host_watch_bench: measures what watching the machine costs and reads, on the real machine.
// A benchmark, not a test: it asserts nothing and prints figures with the conditions.
//
//   cost [SAMPLES=100] [FOREIGN_SCAN_EVERY=10]
//                          one HostWatch sample + one ProcTreeSampler sample (of this process)
//                          at a 10 Hz pace: thread CPU per sample and the cost at 10 Hz in %
//                          of one core.
//   watch [SECONDS=10] [OWN_PID...]
//                          a HostWatch window at 10 Hz with this process (and OWN_PIDs' trees)
//                          as own: busy, steal, own, foreign mean/max, top foreign users,
//                          thermal, frequency, swap.
//   selftest [CPU=last allowed] [RUNS=5]
//                          the default self-test pinned to CPU: wall and CPU ms per run.
//
// Build (after `ninja -C build-hw benchlab_agent benchlab_common`):
//   g++ -std=c++20 -O2 -I. bench/host_watch_bench.cc build-hw/libbenchlab_agent.a
//       build-hw/libbenchlab_common.a -lspdlog -lfmt -pthread -o /tmp/host_watch_bench
// (one command line, from the checkout's root).
// Foreign CPU with a pinned busy loop outside the own set:
//   taskset -c 1 sh -c 'while :; do :; done' & /tmp/host_watch_bench watch 10; kill %1
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "agent/host_watch.h"
#include "agent/proc.h"
#include "agent/selftest.h"
#include "common/sysenv.h"

namespace benchlab {
namespace {

double ThreadCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

void SleepMs(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty()      ? 0
         : v.size() % 2 ? v[v.size() / 2]
                        : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

int Processes(SysEnv& env) {
  auto names = env.ListDir("/proc");
  if (!names.ok()) return -1;
  return static_cast<int>(std::count_if(names->begin(), names->end(), [](const std::string& n) {
    return !n.empty() && n[0] >= '1' && n[0] <= '9';
  }));
}

// The real machine, counting the files read.
class CountingEnv : public RootedSysEnv {
 public:
  Result<std::string> ReadFile(const std::string& path) override {
    ++reads;
    return RootedSysEnv::ReadFile(path);
  }
  long reads = 0;
};

int Cost(int samples, int scan_every) {
  CountingEnv env;
  HostWatch watch(env,
                  {.own_roots = {getpid()}, .pinned_cpus = {}, .foreign_scan_every = scan_every});
  ProcTreeSampler tree(env, getpid());
  if (Status st = watch.Begin(); !st.ok()) {
    std::fprintf(stderr, "Begin: %s\n", st.ToString().c_str());
    return 1;
  }
  std::vector<double> host_us, tree_us;
  long host_reads = 0;
  for (int i = 0; i < samples; ++i) {
    SleepMs(100);
    long reads_before = env.reads;
    double t0 = ThreadCpuUs();
    Status st = watch.Sample();
    double t1 = ThreadCpuUs();
    host_reads += env.reads - reads_before;
    Result<TreeSample> ts = tree.Sample();
    double t2 = ThreadCpuUs();
    if (!st.ok() || !ts.ok()) {
      std::fprintf(stderr, "sample: %s %s\n", st.ToString().c_str(),
                   ts.status().ToString().c_str());
      return 1;
    }
    host_us.push_back(t1 - t0);
    tree_us.push_back(t2 - t1);
  }
  Result<HostWindow> w = watch.End();
  double host = Median(host_us), tr = Median(tree_us);
  double mean_host = 0, mean_tree = 0;
  for (double v : host_us) mean_host += v / samples;
  for (double v : tree_us) mean_tree += v / samples;
  std::printf("processes in /proc: %d; samples: %d at 10 Hz; foreign scan every %d samples\n",
              Processes(env), samples, scan_every);
  std::printf("files read per HostWatch sample: %.1f\n", static_cast<double>(host_reads) / samples);
  std::printf("HostWatch::Sample        median %7.1f us  mean %7.1f us\n", host, mean_host);
  std::printf("ProcTreeSampler::Sample  median %7.1f us  mean %7.1f us\n", tr, mean_tree);
  std::printf("both, at 10 Hz: %.3f%% of one core (median), %.3f%% (mean)\n",
              (host + tr) * 10 / 1e6 * 100, (mean_host + mean_tree) * 10 / 1e6 * 100);
  if (w.ok()) {
    std::printf("meanwhile: host busy %.1f%%, foreign mean %.1f%% (of one core)\n", w->busy_pct,
                w->foreign_mean_pct);
  }
  return 0;
}

std::string Opt(const std::optional<double>& v, const char* unit) {
  if (!v) return "unavailable";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3f%s", *v, unit);
  return buf;
}

std::string OptU(const std::optional<uint64_t>& v) {
  return v ? std::to_string(*v) : "unavailable";
}

int Watch(int seconds, const std::vector<pid_t>& extra) {
  HostWatchOptions options;
  options.own_roots.push_back(getpid());
  options.own_roots.insert(options.own_roots.end(), extra.begin(), extra.end());
  HostWatch watch(RealSysEnv(), options);
  if (Status st = watch.Begin(); !st.ok()) {
    std::fprintf(stderr, "Begin: %s\n", st.ToString().c_str());
    return 1;
  }
  for (int i = 0; i < seconds * 10; ++i) {
    SleepMs(100);
    if (Status st = watch.Sample(); !st.ok()) std::fprintf(stderr, "%s\n", st.ToString().c_str());
  }
  Result<HostWindow> w = watch.End();
  if (!w.ok()) {
    std::fprintf(stderr, "End: %s\n", w.status().ToString().c_str());
    return 1;
  }
  std::vector<double> per_sample;
  for (const HostSample& s : w->samples) per_sample.push_back(s.foreign_pct);
  std::printf("interval %.2f s on %d CPUs, %zu samples\n", w->interval_s, w->cpus,
              w->samples.size());
  std::printf("busy %.1f%%  idle %.1f%%  iowait %.1f%%  steal %.1f%%  irq+softirq %.1f%%\n",
              w->busy_pct, w->idle_pct, w->iowait_pct, w->steal_pct, w->irq_pct);
  std::printf("own %.2f%% (this bench: %.2f%%)\n", w->own_pct, w->own_pct_by_root.at(0));
  std::printf(
      "foreign mean %.1f%%  max over 1 s spans %.1f%%  single samples: median %.1f%% max %.1f%%\n",
      w->foreign_mean_pct, w->foreign_max_pct, Median(per_sample),
      per_sample.empty() ? 0 : *std::max_element(per_sample.begin(), per_sample.end()));
  for (const ForeignUser& u : w->top_foreign) {
    std::printf("  foreign: %-20s %.1f%%\n", u.comm.c_str(), u.cpu_pct);
  }
  std::printf("max temp %s; min freq ratio %s; throttle core %s package %s; swap in %s out %s\n",
              Opt(w->max_temp_c, " C").c_str(), Opt(w->min_freq_ratio, "").c_str(),
              OptU(w->throttle_core_events).c_str(), OptU(w->throttle_package_events).c_str(),
              OptU(w->swap_in_pages).c_str(), OptU(w->swap_out_pages).c_str());
  return 0;
}

int SelfTest(int cpu, int runs) {
  for (int i = 0; i < runs; ++i) {
    Result<SelfTestResult> r = RunSelfTest(RealSysEnv(), {cpu});
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
      return 1;
    }
    std::printf("cpu %d: wall %.2f ms, thread cpu %.2f ms, checksum %016llx\n", cpu, r->time_ms,
                r->cpu_ms, static_cast<unsigned long long>(r->checksum));
  }
  return 0;
}

}  // namespace
}  // namespace benchlab

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "cost";
  if (mode == "cost") {
    return benchlab::Cost(argc > 2 ? std::atoi(argv[2]) : 100, argc > 3 ? std::atoi(argv[3]) : 10);
  }
  if (mode == "watch") {
    std::vector<pid_t> extra;
    for (int i = 3; i < argc; ++i) extra.push_back(std::atoi(argv[i]));
    return benchlab::Watch(argc > 2 ? std::atoi(argv[2]) : 10, extra);
  }
  if (mode == "selftest") {
    auto cpus = benchlab::RealSysEnv().GetAffinity(0);
    int cpu = argc > 2 ? std::atoi(argv[2]) : (cpus.ok() && !cpus->empty() ? cpus->back() : 0);
    return benchlab::SelfTest(cpu, argc > 3 ? std::atoi(argv[3]) : 5);
  }
  std::fprintf(
      stderr,
      "usage: %s cost [SAMPLES] [SCAN_EVERY] | watch [SECONDS] [PID...] | selftest [CPU] [RUNS]\n",
      argv[0]);
  return 2;
}
