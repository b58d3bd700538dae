#include "agent/interval_sampler.h"

#include <algorithm>

namespace benchlab {

using Seconds = std::chrono::duration<double>;

IntervalSampler::IntervalSampler(SysEnv& env, pid_t root, std::chrono::milliseconds period,
                                 std::unique_ptr<HostWatch> host, WindowCgroup* cgroup)
    : period_(period),
      tree_(env, root),
      has_tree_(root != 0),
      host_(std::move(host)),
      cgroup_(cgroup) {}

IntervalSampler::~IntervalSampler() { StopThread(); }

Status IntervalSampler::Begin() {
  std::lock_guard lock(mu_);
  if (running_) return Status::FailedPrecondition("the measured interval has already begun");
  TreeSample first;
  if (has_tree_) {
    auto sampled = tree_.Sample();
    if (!sampled.ok()) return sampled.status();
    first = *sampled;
  }
  if (host_) host_status_ = host_->Begin();
  cg_ok_ = false;
  if (cgroup_ != nullptr) {
    auto cpu = cgroup_->ReadCpu();
    cg_ok_ = cpu.ok();
    if (cg_ok_) cg_first_ = cg_last_ = *cpu;
  }
  begin_time_ = last_time_ = std::chrono::steady_clock::now();
  first_ = last_ = first;
  auto* first_ptr = &first;
  samples_.clear();
  rss_sum_ = first_ptr->rss_kb;
  rss_count_ = 1;
  rss_peak_ = first_ptr->rss_kb;
  root_gone_ = false;
  running_ = true;
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void IntervalSampler::TakeSampleLocked(std::chrono::steady_clock::time_point now) {
  if (host_ && host_status_.ok()) host_status_ = host_->Sample();
  if (root_gone_ || !has_tree_) {
    last_time_ = now;
    return;
  }
  auto sample = tree_.Sample();
  if (!sample.ok()) {
    root_gone_ = true;
    return;
  }
  double period_s = Seconds(now - last_time_).count();
  double cpu_s = (sample->cpu_user_s + sample->cpu_sys_s) - (last_.cpu_user_s + last_.cpu_sys_s);
  if (cg_ok_) {
    auto cpu = cgroup_->ReadCpu();
    if (cpu.ok()) {
      cpu_s = static_cast<double>(cpu->usage_usec - cg_last_.usage_usec) / 1e6;
      cg_last_ = *cpu;
    } else {
      cg_ok_ = false;  // the cgroup went away: the interval's total falls back to /proc
    }
  }
  IntervalSample point;
  point.t_s = Seconds(now - begin_time_).count();
  point.cpu_pct = period_s > 0 ? 100.0 * cpu_s / period_s : 0;
  point.rss_kb = sample->rss_kb;
  samples_.push_back(point);
  rss_sum_ += sample->rss_kb;
  ++rss_count_;
  rss_peak_ = std::max(rss_peak_, sample->rss_kb);
  last_ = *sample;
  last_time_ = now;
}

void IntervalSampler::Loop() {
  std::unique_lock lock(mu_);
  auto next = begin_time_ + period_;
  while (running_) {
    if (cv_.wait_until(lock, next, [this] { return !running_; })) break;
    TakeSampleLocked(std::chrono::steady_clock::now());
    next += period_;
  }
}

void IntervalSampler::StopThread() {
  {
    std::lock_guard lock(mu_);
    running_ = false;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<IntervalFigures> IntervalSampler::End() {
  {
    std::lock_guard lock(mu_);
    if (!running_) return Status::FailedPrecondition("the measured interval has not begun");
  }
  StopThread();
  std::lock_guard lock(mu_);
  auto end_time = std::chrono::steady_clock::now();
  // The host's final snapshot is End()'s own; the periodic Sample() is not repeated for it.
  std::unique_ptr<HostWatch> host = std::move(host_);
  TakeSampleLocked(end_time);
  host_ = std::move(host);
  IntervalFigures figures;
  figures.interval_s = Seconds(end_time - begin_time_).count();
  figures.cpu_user_s = last_.cpu_user_s - first_.cpu_user_s;
  figures.cpu_sys_s = last_.cpu_sys_s - first_.cpu_sys_s;
  if (cg_ok_) {
    figures.cpu_user_s = static_cast<double>(cg_last_.user_usec - cg_first_.user_usec) / 1e6;
    figures.cpu_sys_s = static_cast<double>(cg_last_.system_usec - cg_first_.system_usec) / 1e6;
    figures.cpu_source = "cgroup";
  }
  figures.rss_mean_kb = rss_count_ ? rss_sum_ / rss_count_ : 0;
  figures.rss_peak_kb = rss_peak_;
  figures.target_alive = !root_gone_;
  figures.samples = std::move(samples_);
  samples_.clear();
  figures.threads = last_.threads;
  auto grew = [](uint64_t a, uint64_t b) { return b > a ? b - a : 0; };
  figures.voluntary_ctxt_switches =
      grew(first_.voluntary_ctxt_switches, last_.voluntary_ctxt_switches);
  figures.nonvoluntary_ctxt_switches =
      grew(first_.nonvoluntary_ctxt_switches, last_.nonvoluntary_ctxt_switches);
  if (host_) {
    if (host_status_.ok()) {
      auto window = host_->End();
      if (window.ok()) {
        figures.host = std::move(window).value();
      } else {
        figures.host_error = window.status().message();
      }
    } else {
      figures.host_error = host_status_.message();
    }
  }
  return figures;
}

}  // namespace benchlab
