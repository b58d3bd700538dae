#include "agent/proc.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <optional>
#include <set>
#include <unordered_map>

#include "agent/host_stat.h"
#include "common/parse.h"

namespace benchlab {
namespace {

std::vector<std::string_view> SplitFields(std::string_view s) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t')) ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\n' && s[i] != '\t') ++i;
    if (i > start) fields.push_back(s.substr(start, i - start));
  }
  return fields;
}

bool IsAllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Result<ProcStat> ParseProcStat(std::string_view text) {
  // comm is whatever the process named itself and may hold spaces and ')', so it runs from the
  // first '(' to the last ')'; everything after the last ')' is plain space-separated numbers.
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Status::InvalidArgument("proc stat: no \"(comm)\" field in \"" +
                                   std::string(text.substr(0, 80)) + "\"");
  }
  ProcStat st;
  std::string_view pid_text = text.substr(0, open);
  while (!pid_text.empty() && pid_text.back() == ' ') pid_text.remove_suffix(1);
  if (!ParseNumber(pid_text, st.pid) || st.pid <= 0) {
    return Status::InvalidArgument("proc stat: field 1 (pid) is not a pid: \"" +
                                   std::string(pid_text) + "\"");
  }
  st.comm = std::string(text.substr(open + 1, close - open - 1));

  // rest[0] is field 3 (state), so field n (1-based) is rest[n - 3].
  std::vector<std::string_view> rest = SplitFields(text.substr(close + 1));
  constexpr size_t kLastField = 24;  // rss
  if (rest.size() < kLastField - 2) {
    return Status::InvalidArgument("proc stat: expected at least " + std::to_string(kLastField) +
                                   " fields, got " + std::to_string(rest.size() + 2));
  }
  if (rest[0].size() != 1) {
    return Status::InvalidArgument("proc stat: field 3 (state) is not one letter: \"" +
                                   std::string(rest[0]) + "\"");
  }
  st.state = rest[0][0];
  Status bad;
  auto field = [&](int n, const char* name, auto& out) {
    if (!bad.ok()) return;
    std::string_view s = rest[n - 3];
    if (!ParseNumber(s, out)) {
      bad = Status::InvalidArgument("proc stat: field " + std::to_string(n) + " (" + name +
                                    ") is not a valid number: \"" + std::string(s) + "\"");
    }
  };
  field(4, "ppid", st.ppid);
  field(5, "pgrp", st.pgrp);
  field(14, "utime", st.utime);
  field(15, "stime", st.stime);
  field(16, "cutime", st.cutime);
  field(17, "cstime", st.cstime);
  field(20, "num_threads", st.num_threads);
  field(22, "starttime", st.starttime);
  field(24, "rss", st.rss_pages);
  if (!bad.ok()) return bad;
  return st;
}

Result<ProcStatus> ParseProcStatus(std::string_view text) {
  ProcStatus status;
  bool have_threads = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    auto parse = [&](auto& out) {
      std::vector<std::string_view> words = SplitFields(line.substr(colon + 1));
      // Memory lines carry a "kB" unit; the kernel never uses another one there.
      return !words.empty() && words.size() <= 2 && (words.size() == 1 || words[1] == "kB") &&
             ParseNumber(words[0], out);
    };
    bool ok = true;
    if (key == "VmRSS") {
      ok = parse(status.vm_rss_kb);
    } else if (key == "VmHWM") {
      ok = parse(status.vm_hwm_kb);
    } else if (key == "voluntary_ctxt_switches") {
      ok = parse(status.voluntary_ctxt_switches);
    } else if (key == "nonvoluntary_ctxt_switches") {
      ok = parse(status.nonvoluntary_ctxt_switches);
    } else if (key == "Threads") {
      ok = parse(status.threads);
      have_threads = true;
    }
    if (!ok) {
      return Status::InvalidArgument("proc status: bad value for " + std::string(key) + ": \"" +
                                     std::string(line.substr(colon + 1)) + "\"");
    }
  }
  // Every task has a Threads line, kernel threads and zombies included; without it the text is
  // not a status file (or was cut short).
  if (!have_threads) return Status::InvalidArgument("proc status: no Threads line");
  return status;
}

ProcTreeSampler::ProcTreeSampler(SysEnv& env, pid_t root) : env_(env), root_(root) {}

// The processes one sample read: each one's stat, each pid's children among them, and the
// members of the tree.
struct ProcTreeSampler::Snapshot {
  std::unordered_map<pid_t, ProcStat> all;
  std::unordered_map<pid_t, std::vector<pid_t>> children;
  std::set<pid_t> members;

  // Whether the process seen as `seen` in the last sample is still alive (not a reused pid).
  bool AliveAsSeen(pid_t pid, const Seen& seen) const {
    auto it = all.find(pid);
    return it != all.end() && it->second.starttime == seen.starttime;
  }
};

Result<TreeSample> ProcTreeSampler::Sample() {
  Result<std::vector<std::string>> names = PidsToRead();
  if (!names.ok()) return names.status();
  Snapshot now;
  if (Status st = ReadStats(*names, now); !st.ok()) return st;
  if (Status st = CheckRoot(now); !st.ok()) return st;
  FindMembers(now);
  ChargeVanished(now);
  return SumMembers(now);
}

std::string ProcTreeSampler::RootGone() const {
  return "target process " + std::to_string(root_) + " is gone";
}

Result<std::vector<std::string>> ProcTreeSampler::PidsToRead() {
  // The last pid is read before the members, so a fork during this sample shows next time.
  std::optional<pid_t> last_pid;
  if (Result<std::string> loadavg = env_.ReadFile("/proc/loadavg"); loadavg.ok()) {
    if (Result<pid_t> pid = ParseLoadAvgLastPid(*loadavg); pid.ok()) last_pid = *pid;
  }
  const bool full = !root_seen_ || !last_pid || !last_pid_ || *last_pid != *last_pid_;
  last_pid_ = last_pid;
  std::vector<std::string> names;
  if (full) {
    ++full_scans_;
    Result<std::vector<std::string>> listed = env_.ListDir("/proc");
    if (!listed.ok()) return listed.status();
    names = std::move(*listed);
  } else {
    names.push_back(std::to_string(root_));
    for (const auto& entry : live_) {
      if (entry.first != root_) names.push_back(std::to_string(entry.first));
    }
  }
  return names;
}

Status ProcTreeSampler::ReadStats(const std::vector<std::string>& names, Snapshot& now) {
  for (const std::string& name : names) {
    pid_t pid = 0;
    if (!IsAllDigits(name) || !ParseNumber(name, pid)) continue;
    Result<std::string> text = env_.ReadFile("/proc/" + name + "/stat");
    Result<ProcStat> st = text.ok() ? ParseProcStat(*text) : Result<ProcStat>(text.status());
    if (!st.ok()) {
      // Processes vanish between listing and reading (NotFound, or an empty read); others are
      // not ours to judge. Only the root's own stat must be readable.
      bool vanished = st.status().code() == StatusCode::kNotFound ||
                      st.status().code() == StatusCode::kInvalidArgument;
      if (pid == root_) {
        if (st.status().code() == StatusCode::kNotFound) return Status::NotFound(RootGone());
        return st.status();
      }
      if (vanished) continue;
      return st.status();
    }
    now.children[st->ppid].push_back(pid);
    now.all.emplace(pid, std::move(*st));
  }
  return Status::Ok();
}

Status ProcTreeSampler::CheckRoot(const Snapshot& now) {
  auto root_it = now.all.find(root_);
  if (root_it == now.all.end()) return Status::NotFound(RootGone());
  if (!root_seen_) {
    root_seen_ = true;
    root_starttime_ = root_it->second.starttime;
  } else if (root_it->second.starttime != root_starttime_) {
    return Status::NotFound(RootGone() + " (its pid now names another process)");
  }
  return Status::Ok();
}

void ProcTreeSampler::FindMembers(Snapshot& now) const {
  // Members: descendants of the root, plus earlier members still alive wherever they now hang.
  std::deque<pid_t> queue{root_};
  for (const auto& [pid, seen] : live_) {
    if (now.AliveAsSeen(pid, seen)) queue.push_back(pid);
  }
  while (!queue.empty()) {
    pid_t pid = queue.front();
    queue.pop_front();
    if (!now.members.insert(pid).second) continue;
    auto kids = now.children.find(pid);
    if (kids == now.children.end()) continue;
    for (pid_t kid : kids->second) queue.push_back(kid);
  }
}

void ProcTreeSampler::ChargeVanished(const Snapshot& now) {
  // Charge each vanished member to its nearest surviving ancestor (see the header).
  struct Charge {
    uint64_t user = 0, sys = 0;
  };
  std::map<pid_t, Charge> charged;
  for (const auto& [pid, seen] : live_) {
    if (now.AliveAsSeen(pid, seen)) continue;
    pid_t up = seen.ppid;
    // Each step moves to a distinct earlier member, so live_.size() steps bound the walk.
    for (size_t steps = 0; steps <= live_.size(); ++steps) {
      auto it = live_.find(up);
      if (it == live_.end() || now.AliveAsSeen(up, it->second)) break;
      up = it->second.ppid;
    }
    auto anc = live_.find(up);
    if (anc != live_.end() && now.AliveAsSeen(up, anc->second) && now.members.count(up)) {
      charged[up].user += seen.user_ticks;
      charged[up].sys += seen.sys_ticks;
    } else {
      exited_user_ticks_ += seen.user_ticks;
      exited_sys_ticks_ += seen.sys_ticks;
    }
  }
  for (const auto& [pid, charge] : charged) {
    const Seen& before = live_.at(pid);
    const ProcStat& stat = now.all.at(pid);
    uint64_t grew_user = stat.cutime > before.cutime ? stat.cutime - before.cutime : 0;
    uint64_t grew_sys = stat.cstime > before.cstime ? stat.cstime - before.cstime : 0;
    if (charge.user > grew_user) exited_user_ticks_ += charge.user - grew_user;
    if (charge.sys > grew_sys) exited_sys_ticks_ += charge.sys - grew_sys;
  }
}

Result<TreeSample> ProcTreeSampler::SumMembers(const Snapshot& now) {
  TreeSample sample;
  uint64_t user_ticks = exited_user_ticks_;
  uint64_t sys_ticks = exited_sys_ticks_;
  std::map<pid_t, Seen> next;
  for (pid_t pid : now.members) {
    const ProcStat& st = now.all.at(pid);
    Seen seen;
    seen.starttime = st.starttime;
    seen.ppid = st.ppid;
    seen.user_ticks = st.utime + st.cutime;
    seen.sys_ticks = st.stime + st.cstime;
    seen.cutime = st.cutime;
    seen.cstime = st.cstime;
    user_ticks += seen.user_ticks;
    sys_ticks += seen.sys_ticks;
    next.emplace(pid, seen);
    ++sample.processes;
    sample.pids.push_back(pid);
    if (Status added = AddStatus(pid, sample); !added.ok()) return added;
  }
  live_ = std::move(next);

  double ticks_per_s = static_cast<double>(env_.ClockTicksPerSecond());
  if (ticks_per_s <= 0) return Status::Internal("clock ticks per second is not positive");
  sample.cpu_user_s = static_cast<double>(user_ticks) / ticks_per_s;
  sample.cpu_sys_s = static_cast<double>(sys_ticks) / ticks_per_s;
  return sample;
}

Status ProcTreeSampler::AddStatus(pid_t pid, TreeSample& sample) {
  Result<std::string> text = env_.ReadFile("/proc/" + std::to_string(pid) + "/status");
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound)
      return Status::Ok();  // exited since its stat
    return text.status();
  }
  Result<ProcStatus> status = ParseProcStatus(*text);
  if (!status.ok()) return Status::Ok();  // cut short by the process exiting mid-read
  sample.rss_kb += status->vm_rss_kb;
  sample.threads += status->threads;
  sample.voluntary_ctxt_switches += status->voluntary_ctxt_switches;
  sample.nonvoluntary_ctxt_switches += status->nonvoluntary_ctxt_switches;
  return Status::Ok();
}

Status CheckThreadAffinity(SysEnv& env, const std::vector<pid_t>& pids,
                           const std::vector<int>& cpus) {
  for (pid_t pid : pids) {
    std::string dir = "/proc/" + std::to_string(pid);
    auto tasks = env.ListDir(dir + "/task");
    if (!tasks.ok()) {
      if (tasks.status().code() == StatusCode::kNotFound) continue;
      return tasks.status();
    }
    for (const auto& tid : *tasks) {
      auto text = env.ReadFile(dir + "/task/" + tid + "/status");
      if (!text.ok()) {
        if (text.status().code() == StatusCode::kNotFound) continue;
        return text.status();
      }
      std::string_view view(*text);
      size_t at = view.find("Cpus_allowed_list:");
      if (at == std::string_view::npos) continue;
      size_t begin = view.find_first_not_of(" \t", at + 18);
      size_t end = view.find('\n', begin);
      auto allowed = ParseCpuList(
          view.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
      if (!allowed.ok()) continue;
      bool inside = std::includes(cpus.begin(), cpus.end(), allowed->begin(), allowed->end());
      if (!inside) {
        std::string comm = "?";
        if (auto stat = env.ReadFile(dir + "/stat"); stat.ok()) {
          if (auto parsed = ParseProcStat(*stat); parsed.ok()) comm = parsed->comm;
        }
        return Status::FailedPrecondition("thread " + tid + " of pid " + std::to_string(pid) +
                                          " (" + comm + ") may run on CPUs " +
                                          FormatCpuList(*allowed) + ", not only on " +
                                          FormatCpuList(cpus));
      }
    }
  }
  return Status::Ok();
}

}  // namespace benchlab
