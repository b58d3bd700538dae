#include "agent/host_watch.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace benchlab {
namespace {

uint64_t Sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

bool ParsePid(const std::string& name, pid_t& pid) {
  if (name.empty() || name[0] < '1' || name[0] > '9') return false;
  auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  return ec == std::errc() && ptr == name.data() + name.size();
}

}  // namespace

HostWatch::HostWatch(SysEnv& env, HostWatchOptions options)
    : env_(env), options_(std::move(options)) {}

Status HostWatch::Begin() {
  begun_ = false;
  first_error_ = Status::Ok();
  procs_.clear();
  root_starttime_.assign(options_.own_roots.size(), std::nullopt);
  own_ticks_by_root_.assign(options_.own_roots.size(), 0);
  period_own_ticks_ = 0;
  foreign_ticks_by_comm_.clear();
  samples_.clear();
  sample_ticks_.clear();

  samples_taken_ = 0;
  BENCHLAB_RETURN_IF_ERROR(Snapshot(/*attribute=*/false, /*full=*/true));
  begin_stat_ = last_stat_;
  period_stat_ = last_stat_;

  sensors_ = HostSensors::Discover(
      env_, options_.pinned_cpus.empty() ? last_stat_.online : options_.pinned_cpus);
  throttle_begin_ = sensors_->ReadThrottle(env_);
  swap_begin_ = ReadSwap();
  begun_ = true;
  return Status::Ok();
}

Status HostWatch::Sample() {
  if (!begun_) return Status::FailedPrecondition("host watch: Sample() before Begin()");
  const int every = std::max(1, options_.foreign_scan_every);
  return TakeSample(++samples_taken_ % every == 0);
}

Status HostWatch::TakeSample(bool full) {
  Status st = Snapshot(/*attribute=*/true, full);
  if (!st.ok()) {
    if (first_error_.ok()) first_error_ = st;
    return st;
  }
  EmitSample();
  return Status::Ok();
}

Result<HostWindow> HostWatch::End() {
  if (!begun_) return Status::FailedPrecondition("host watch: End() before Begin()");
  Status last = TakeSample(/*full=*/true);
  begun_ = false;
  // A snapshot that failed half-way lost some processes' CPU: the figures would be wrong.
  if (!first_error_.ok()) return first_error_;
  if (!last.ok()) return last;

  const double hz = static_cast<double>(env_.ClockTicksPerSecond());
  const CpuTimes d = CpuDelta(last_stat_.total, begin_stat_.total);
  const int ncpus = last_stat_.online_cpus;
  if (hz <= 0 || d.Total() < static_cast<uint64_t>(ncpus)) {
    return Status::FailedPrecondition(
        "host watch: the interval lasted less than one clock tick per CPU");
  }
  // The interval is the wall clock's when known: CPU counters that missed ticks add up to less.
  const double unticked = std::max(0.0, UntickedTicks(last_stat_, begin_stat_, hz));
  const double per_cpu_ticks = (static_cast<double>(d.Total()) + unticked) / ncpus;
  auto pct = [&](double ticks) { return 100.0 * ticks / per_cpu_ticks; };

  uint64_t own_ticks = 0;
  for (uint64_t ticks : own_ticks_by_root_) own_ticks += ticks;
  uint64_t foreign_process_ticks = 0;
  for (const auto& [comm, ticks] : foreign_ticks_by_comm_) foreign_process_ticks += ticks;
  // Two lower bounds of the host's busy time: the kernel's busy counters, which sample at
  // timer ticks and miss some on a CPU that keeps going idle and busy (a load generator), and
  // the exact runtimes charged to every process, own and foreign, which miss interrupt time
  // the kernel charges to no process. The larger is the closer. The unticked wall time bounds
  // it from above: the counters missed no more than that, give or take a tick either side of
  // each CPU's reading at both ends.
  const double counted_busy = static_cast<double>(d.Busy());
  const double charged = static_cast<double>(own_ticks + foreign_process_ticks);
  const bool have_wall = last_stat_.uptime_s && begin_stat_.uptime_s;
  const double bound = counted_busy + unticked + 2.0 * ncpus;
  const double busy_ticks =
      std::min(std::max(counted_busy, have_wall ? std::min(charged, bound) : charged),
               per_cpu_ticks * ncpus);

  HostWindow w;
  w.interval_s = per_cpu_ticks / hz;
  w.cpus = ncpus;
  w.busy_pct = pct(busy_ticks);
  w.unticked_pct = pct(unticked);
  // The unticked time that was not busy was idle the counters missed too: with it, busy, idle,
  // iowait and steal add up to the whole interval.
  w.idle_pct =
      pct(std::max(0.0, static_cast<double>(d.idle) + unticked - (busy_ticks - counted_busy)));
  w.iowait_pct = pct(static_cast<double>(d.iowait));
  w.steal_pct = pct(static_cast<double>(d.steal));
  w.irq_pct = pct(static_cast<double>(d.irq + d.softirq));
  for (uint64_t ticks : own_ticks_by_root_) {
    w.own_pct_by_root.push_back(pct(static_cast<double>(ticks)));
  }
  w.own_pct = pct(static_cast<double>(own_ticks));
  // So foreign CPU is the larger of the counters' busy minus own, and what foreign processes
  // were charged.
  w.foreign_mean_pct = std::max(0.0, w.busy_pct - w.own_pct);

  std::vector<std::pair<std::string, uint64_t>> users(foreign_ticks_by_comm_.begin(),
                                                      foreign_ticks_by_comm_.end());
  std::sort(users.begin(), users.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  for (size_t i = 0; i < users.size() && i < 3 && users[i].second > 0; ++i) {
    w.top_foreign.push_back({users[i].first, pct(static_cast<double>(users[i].second))});
  }

  // Samples see foreign processes only at full scans, so theirs is the counters' lower bound;
  // a span is never below the whole interval's mean.
  w.foreign_max_pct = std::max(
      w.foreign_mean_pct, MaxForeignOverSpans(sample_ticks_, options_.foreign_max_span_s * hz));
  for (const HostSample& s : samples_) {
    if (s.max_temp_c && (!w.max_temp_c || *s.max_temp_c > *w.max_temp_c)) {
      w.max_temp_c = s.max_temp_c;
    }
    if (s.min_freq_ratio && (!w.min_freq_ratio || *s.min_freq_ratio < *w.min_freq_ratio)) {
      w.min_freq_ratio = s.min_freq_ratio;
    }
  }
  ThrottleIncrease throttle = sensors_->Increase(throttle_begin_, sensors_->ReadThrottle(env_));
  w.throttle_core_events = throttle.core_events;
  w.throttle_package_events = throttle.package_events;
  std::optional<SwapCounters> swap_end = ReadSwap();
  if (swap_begin_ && swap_end) {
    w.swap_in_pages = Sub(swap_end->pages_in, swap_begin_->pages_in);
    w.swap_out_pages = Sub(swap_end->pages_out, swap_begin_->pages_out);
  }
  w.samples = std::move(samples_);
  samples_.clear();
  return w;
}

void HostWatch::EmitSample() {
  const CpuTimes d = CpuDelta(last_stat_.total, period_stat_.total);
  const int ncpus = last_stat_.online_cpus;
  const double hz = static_cast<double>(env_.ClockTicksPerSecond());
  // Less than a tick per CPU says nothing about the split of time: merge into the next period.
  if (d.Total() < static_cast<uint64_t>(ncpus) || hz <= 0) return;
  // The period's length is the wall clock's when known (signed: summed over consecutive
  // periods it telescopes to the whole interval's, so a reading a tick early in one period and
  // late in the next does not add up). Busy is the counters' own figure: foreign processes are
  // read only at full scans, so a sample has no better bound (see End()).
  const double unticked = UntickedTicks(last_stat_, period_stat_, hz);
  const double per_cpu_ticks = std::max(1.0, (static_cast<double>(d.Total()) + unticked) / ncpus);
  const double busy_ticks = static_cast<double>(d.Busy());
  // The sample's own percentages never divide by less than its counters' length, so a reading
  // a tick late does not put a CPU above 100%; the spans keep the signed length above.
  const double shown_ticks = std::max(per_cpu_ticks, static_cast<double>(d.Total()) / ncpus);
  auto pct = [&](double ticks) { return 100.0 * ticks / shown_ticks; };

  HostSample s;
  s.period_s = shown_ticks / hz;
  s.t_s = last_stat_.uptime_s && begin_stat_.uptime_s
              ? *last_stat_.uptime_s - *begin_stat_.uptime_s
              : static_cast<double>(Sub(last_stat_.total.Total(), begin_stat_.total.Total())) /
                    ncpus / hz;
  s.busy_pct = pct(busy_ticks);
  s.idle_pct = pct(static_cast<double>(d.idle));
  s.iowait_pct = pct(static_cast<double>(d.iowait));
  s.steal_pct = pct(static_cast<double>(d.steal));
  s.own_pct = pct(static_cast<double>(period_own_ticks_));
  s.foreign_pct = std::max(0.0, s.busy_pct - s.own_pct);
  s.max_temp_c = sensors_->MaxTempC(env_);
  s.min_freq_ratio = sensors_->MinFreqRatio(env_);
  samples_.push_back(s);
  sample_ticks_.push_back({per_cpu_ticks, busy_ticks, period_own_ticks_});
  period_stat_ = last_stat_;
  period_own_ticks_ = 0;
}

std::optional<SwapCounters> HostWatch::ReadSwap() {
  Result<std::string> text = env_.ReadFile("/proc/vmstat");
  if (!text.ok()) return std::nullopt;
  Result<SwapCounters> swap = ParseVmStatSwap(*text);
  if (!swap.ok()) return std::nullopt;
  return *swap;
}

// ---- processes ----------------------------------------------------------------------------
//
// Each snapshot charges every process the CPU it used since the previous one: the growth of
// utime+stime, plus the growth of cutime+cstime (children it reaped) beyond what those children
// had already been charged when last seen. A process first seen now started since the previous
// snapshot, so all its CPU is new. This charges a child's CPU after its last sample (and that
// of children that lived and died between two snapshots) to the process that reaped it, once.

Status HostWatch::Snapshot(bool attribute, bool full) {
  Result<std::string> text = env_.ReadFile("/proc/stat");
  if (!text.ok()) return text.status();
  Result<SystemStat> stat = ParseSystemStat(*text);
  if (!stat.ok()) return stat.status();
  // Right after /proc/stat, for UntickedTicks; without it busy is the counters' figure alone.
  if (Result<std::string> uptime = env_.ReadFile("/proc/uptime"); uptime.ok()) {
    if (Result<double> seconds = ParseUptimeSeconds(*uptime); seconds.ok()) {
      stat->uptime_s = *seconds;
    }
  }

  ++generation_;
  reused_.clear();
  // The kernel's fork count ("processes") tells whether any process can be new since the
  // last snapshot; listing /proc is the most expensive step of a snapshot between full scans.
  const bool list = full || !stat->forks || !last_forks_ || *stat->forks != *last_forks_;
  BENCHLAB_RETURN_IF_ERROR(ReadProcesses(full, list));
  last_forks_ = stat->forks;
  if (!attribute) {
    for (size_t i = 0; i < options_.own_roots.size(); ++i) {
      auto it = procs_.find(options_.own_roots[i]);
      if (it != procs_.end()) root_starttime_[i] = it->second.starttime;
    }
  }
  for (auto& [pid, p] : procs_) {
    if (p.generation != generation_) ChargeVanished(p);
  }
  for (const Proc& p : reused_) ChargeVanished(p);
  std::erase_if(procs_, [&](const auto& kv) { return kv.second.generation != generation_; });

  for (auto& [pid, p] : procs_) {
    int owner = ResolveOwner(pid);
    if (!p.refreshed) continue;  // not read this time: its CPU and charges wait for the next
    uint64_t ticks = p.run + p.reaped;
    if (!p.fresh) {
      // A child reaped after this process's stat was read but before the child's was (pids
      // are listed in ascending order, parents mostly first) vanishes now and shows in the
      // reaped ticks only at the next read: its charge is kept for one more read.
      uint64_t reaped = Sub(p.reaped, p.prev_reaped);
      uint64_t after_carry = Sub(reaped, p.carry);
      p.carry = Sub(p.charged, after_carry);
      ticks = Sub(p.run, p.prev_run) + Sub(after_carry, p.charged);
    }
    p.charged = 0;
    if (!attribute || ticks == 0) continue;
    if (owner >= 0) {
      own_ticks_by_root_[owner] += ticks;
      period_own_ticks_ += ticks;
    } else {
      foreign_ticks_by_comm_[p.comm] += ticks;
    }
  }
  last_stat_ = std::move(*stat);
  return Status::Ok();
}

Status HostWatch::ReadProcesses(bool full, bool list) {
  if (!list) {
    // No fork since the last snapshot: no new process, so only the own ones need reading. A
    // foreign process that exited meanwhile is found gone at the next listing.
    own_pids_.clear();
    for (auto& [pid, p] : procs_) {
      if (p.owner >= 0) {
        own_pids_.push_back(pid);
      } else {
        MarkUnread(p);
      }
    }
    for (pid_t pid : own_pids_) BENCHLAB_RETURN_IF_ERROR(ReadOne(pid, std::to_string(pid)));
    return Status::Ok();
  }
  // Pids are handed out in increasing order, wrapping at pid_max: those given out since the
  // last listing lie between the previous and the current last pid (/proc/loadavg). A known
  // pid among them now names a new process and must be read even between full scans.
  std::optional<pid_t> prev = last_pid_;
  last_pid_.reset();
  if (Result<std::string> loadavg = env_.ReadFile("/proc/loadavg"); loadavg.ok()) {
    if (Result<pid_t> pid = ParseLoadAvgLastPid(*loadavg); pid.ok()) last_pid_ = *pid;
  }
  auto maybe_reused = [&](pid_t pid) {
    if (!prev || !last_pid_) return true;
    return *prev <= *last_pid_ ? pid > *prev && pid <= *last_pid_
                               : pid > *prev || pid <= *last_pid_;
  };
  Result<std::vector<std::string>> names = env_.ListDir("/proc");
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    pid_t pid = 0;
    if (!ParsePid(name, pid)) continue;
    auto known = procs_.find(pid);
    if (!full && known != procs_.end() && known->second.owner < 0 && !maybe_reused(pid)) {
      MarkUnread(known->second);  // a foreign process between full scans (see the header)
      continue;
    }
    BENCHLAB_RETURN_IF_ERROR(ReadOne(pid, name));
  }
  return Status::Ok();
}

void HostWatch::MarkUnread(Proc& p) {
  p.generation = generation_;
  p.refreshed = false;
  p.fresh = false;
}

Status HostWatch::ReadOne(pid_t pid, const std::string& name) {
  path_.assign("/proc/");
  path_ += name;
  path_ += "/stat";
  Result<std::string> text = env_.ReadFile(path_);
  if (!text.ok()) {
    // Gone since the listing (or since the last snapshot): it counts as vanished.
    return text.status().code() == StatusCode::kNotFound ? Status::Ok() : text.status();
  }
  // A stat cut short by the process exiting mid-read is as good as gone.
  if (!ParseProcBrief(*text, scratch_).ok() || scratch_.pid != pid) return Status::Ok();

  auto [it, inserted] = procs_.try_emplace(pid);
  Proc* p = &it->second;
  if (!inserted && p->starttime != scratch_.starttime) {
    reused_.push_back(std::move(*p));  // the pid now names another process
    *p = Proc();
    inserted = true;
  }
  p->fresh = inserted;
  p->refreshed = true;
  p->prev_run = inserted ? 0 : p->run;
  p->prev_reaped = inserted ? 0 : p->reaped;
  p->starttime = scratch_.starttime;
  p->ppid = scratch_.ppid;
  p->run = scratch_.utime + scratch_.stime;
  p->reaped = scratch_.cutime + scratch_.cstime;
  p->generation = generation_;
  if (p->comm != scratch_.comm) p->comm = scratch_.comm;
  return Status::Ok();
}

int HostWatch::RootIndex(pid_t pid, const Proc& p) const {
  for (size_t i = 0; i < options_.own_roots.size(); ++i) {
    if (options_.own_roots[i] == pid && root_starttime_[i] == p.starttime) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// The nearest own root up the parent chain. A process once seen in an own tree stays in it
// while it lives, even reparented away (a daemonised server, an orphan adopted by init).
int HostWatch::ResolveOwner(pid_t pid) {
  chain_.clear();
  int owner = -1;
  for (pid_t up = pid; chain_.size() <= procs_.size();) {
    auto it = procs_.find(up);
    if (it == procs_.end()) break;
    Proc& p = it->second;
    if (p.resolved == generation_) {
      owner = p.owner;
      break;
    }
    if (int root = RootIndex(up, p); root >= 0) {
      p.owner = root;
      p.resolved = generation_;
      owner = root;
      break;
    }
    chain_.push_back(&p);
    up = p.ppid;
  }
  for (auto it = chain_.rbegin(); it != chain_.rend(); ++it) {
    Proc& p = **it;
    if (owner < 0 && !p.fresh && p.owner >= 0) owner = p.owner;
    p.owner = owner;
    p.resolved = generation_;
  }
  return procs_.at(pid).owner;
}

// A vanished process's last-seen CPU may reappear in the reaped ticks of its nearest ancestor
// still alive (its parent, or the subreaper that adopted it once the parent died): mark it as
// already charged there, so only what it used after its last sample is new.
void HostWatch::ChargeVanished(const Proc& gone) {
  pid_t up = gone.ppid;
  for (size_t steps = 0; steps <= procs_.size(); ++steps) {
    auto it = procs_.find(up);
    // An ancestor younger than the process is a reused pid, not its ancestor.
    if (it == procs_.end() || it->second.starttime > gone.starttime) return;
    Proc& ancestor = it->second;
    if (ancestor.generation == generation_) {
      if (!ancestor.fresh) ancestor.charged += gone.run + gone.reaped;
      return;
    }
    up = ancestor.ppid;
  }
}

}  // namespace benchlab
