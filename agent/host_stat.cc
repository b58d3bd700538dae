#include "agent/host_stat.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "common/parse.h"

namespace benchlab {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Cuts the next whitespace-separated word off the front of `s`; empty when none is left.
std::string_view NextWord(std::string_view& s) {
  size_t i = 0;
  while (i < s.size() && IsSpace(s[i])) ++i;
  size_t start = i;
  while (i < s.size() && !IsSpace(s[i])) ++i;
  std::string_view word = s.substr(start, i - start);
  s.remove_prefix(i);
  return word;
}

std::string_view NextLine(std::string_view& text) {
  size_t end = text.find('\n');
  std::string_view line = text.substr(0, end);
  text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  return line;
}

Status ParseCpuLine(std::string_view label, std::string_view rest, CpuTimes& out) {
  uint64_t* fields[] = {&out.user, &out.nice,    &out.system, &out.idle,  &out.iowait,
                        &out.irq,  &out.softirq, &out.steal,  &out.guest, &out.guest_nice};
  int n = 0;
  for (std::string_view word = NextWord(rest); !word.empty(); word = NextWord(rest)) {
    if (n == 10) break;  // columns a future kernel may add
    if (!ParseNumber(word, *fields[n])) {
      return Status::InvalidArgument("/proc/stat: " + std::string(label) + " column " +
                                     std::to_string(n + 1) + " is not a number: \"" +
                                     std::string(word) + "\"");
    }
    ++n;
  }
  if (n < 4) {
    return Status::InvalidArgument("/proc/stat: " + std::string(label) + " has " +
                                   std::to_string(n) + " columns, expected at least 4");
  }
  return Status::Ok();
}

}  // namespace

CpuTimes CpuDelta(const CpuTimes& now, const CpuTimes& then) {
  auto sub = [](uint64_t a, uint64_t b) { return a > b ? a - b : 0; };
  CpuTimes d;
  d.user = sub(now.user, then.user);
  d.nice = sub(now.nice, then.nice);
  d.system = sub(now.system, then.system);
  d.idle = sub(now.idle, then.idle);
  d.iowait = sub(now.iowait, then.iowait);
  d.irq = sub(now.irq, then.irq);
  d.softirq = sub(now.softirq, then.softirq);
  d.steal = sub(now.steal, then.steal);
  d.guest = sub(now.guest, then.guest);
  d.guest_nice = sub(now.guest_nice, then.guest_nice);
  return d;
}

double MaxForeignOverSpans(const std::vector<PeriodTicks>& periods, double span_ticks) {
  double best = 0, ticks = 0, busy = 0;
  int64_t own = 0;
  size_t first = 0;
  auto consider = [&] {
    if (ticks <= 0) return;
    double foreign = std::max(0.0, busy - static_cast<double>(own));
    best = std::max(best, 100.0 * foreign / ticks);
  };
  // Two pointers: extend the run by one period, then drop its oldest periods while it stays at
  // least a span long without them.
  for (size_t last = 0; last < periods.size(); ++last) {
    ticks += periods[last].per_cpu;
    busy += periods[last].busy;
    own += static_cast<int64_t>(periods[last].own);
    while (first < last && ticks - periods[first].per_cpu >= span_ticks) {
      ticks -= periods[first].per_cpu;
      busy -= periods[first].busy;
      own -= static_cast<int64_t>(periods[first].own);
      ++first;
    }
    if (ticks >= span_ticks) consider();
  }
  if (ticks < span_ticks) consider();  // the whole series is shorter than a span
  return best;
}

Result<SystemStat> ParseSystemStat(std::string_view text) {
  SystemStat stat;
  bool have_total = false;
  while (!text.empty()) {
    std::string_view line = NextLine(text);
    if (line.substr(0, 10) == "processes ") {
      uint64_t forks = 0;
      std::string_view rest = line.substr(10);
      if (!ParseNumber(NextWord(rest), forks)) {
        return Status::InvalidArgument("/proc/stat: bad \"" + std::string(line) + "\"");
      }
      stat.forks = forks;
      continue;
    }
    if (line.size() < 3 || line.substr(0, 3) != "cpu") continue;
    std::string_view rest = line;
    std::string_view label = NextWord(rest);
    if (label == "cpu") {
      BENCHLAB_RETURN_IF_ERROR(ParseCpuLine(label, rest, stat.total));
      have_total = true;
      continue;
    }
    size_t index = 0;
    if (!ParseNumber(label.substr(3), index) || index > 65535) {
      return Status::InvalidArgument("/proc/stat: bad CPU label \"" + std::string(label) + "\"");
    }
    if (stat.cpus.size() <= index) stat.cpus.resize(index + 1);
    BENCHLAB_RETURN_IF_ERROR(ParseCpuLine(label, rest, stat.cpus[index]));
    stat.online.push_back(static_cast<int>(index));
    ++stat.online_cpus;
  }
  if (!have_total) return Status::InvalidArgument("/proc/stat: no \"cpu\" line");
  if (stat.online_cpus == 0) return Status::InvalidArgument("/proc/stat: no \"cpuN\" line");
  return stat;
}

Result<SwapCounters> ParseVmStatSwap(std::string_view text) {
  SwapCounters swap;
  bool have_in = false, have_out = false;
  while (!text.empty()) {
    std::string_view rest = NextLine(text);
    std::string_view key = NextWord(rest);
    if (key != "pswpin" && key != "pswpout") continue;
    std::string_view value = NextWord(rest);
    uint64_t& out = key == "pswpin" ? swap.pages_in : swap.pages_out;
    if (!ParseNumber(value, out)) {
      return Status::InvalidArgument("/proc/vmstat: " + std::string(key) + " is not a number: \"" +
                                     std::string(value) + "\"");
    }
    (key == "pswpin" ? have_in : have_out) = true;
  }
  if (!have_in || !have_out) {
    return Status::InvalidArgument("/proc/vmstat: no pswpin/pswpout lines");
  }
  return swap;
}

Result<double> ParseUptimeSeconds(std::string_view text) {
  std::string_view rest = text;
  const std::string word(NextWord(rest));
  char* end = nullptr;
  const double seconds = word.empty() ? -1 : std::strtod(word.c_str(), &end);
  if (word.empty() || end != word.c_str() + word.size() || !(seconds >= 0) ||
      !std::isfinite(seconds)) {
    return Status::InvalidArgument("/proc/uptime: first field is not seconds: \"" + word + "\"");
  }
  return seconds;
}

double UntickedTicks(const SystemStat& now, const SystemStat& then, double ticks_per_second) {
  if (!now.uptime_s || !then.uptime_s || ticks_per_second <= 0) return 0;
  const double wall = (*now.uptime_s - *then.uptime_s) * ticks_per_second;
  double unticked = 0;
  for (int cpu : now.online) {
    const auto n = static_cast<size_t>(cpu);
    if (std::find(then.online.begin(), then.online.end(), cpu) == then.online.end() ||
        n >= now.cpus.size() || n >= then.cpus.size()) {
      continue;  // came online in between: its counters say nothing about the interval
    }
    const uint64_t now_total = now.cpus[n].Total(), then_total = then.cpus[n].Total();
    if (now_total < then_total) continue;  // went offline and back: its counters restarted
    unticked += wall - static_cast<double>(now_total - then_total);
  }
  return unticked;
}

Result<pid_t> ParseLoadAvgLastPid(std::string_view text) {
  std::string_view last, word;
  for (std::string_view rest = text; !(word = NextWord(rest)).empty();) last = word;
  pid_t pid = 0;
  if (!ParseNumber(last, pid) || pid < 0) {
    return Status::InvalidArgument("/proc/loadavg: last field is not a pid: \"" +
                                   std::string(last) + "\"");
  }
  return pid;
}

Status ParseProcBrief(std::string_view text, ProcBrief& out) {
  // comm runs from the first '(' to the last ')', since a process may put either in its name.
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Status::InvalidArgument("proc stat: no \"(comm)\" field");
  }
  std::string_view pid_text = text.substr(0, open);
  while (!pid_text.empty() && IsSpace(pid_text.back())) pid_text.remove_suffix(1);
  if (!ParseNumber(pid_text, out.pid) || out.pid <= 0) {
    return Status::InvalidArgument("proc stat: field 1 (pid) is not a pid");
  }
  out.comm.assign(text.data() + open + 1, close - open - 1);
  out.policy = -1;

  std::string_view rest = text.substr(close + 1);
  // Field 3 (state) is the first word after the comm.
  for (int field = 3; field <= 41; ++field) {
    std::string_view word = NextWord(rest);
    if (word.empty()) {
      if (field > 24) return Status::Ok();  // an old kernel's short line: no policy
      return Status::InvalidArgument("proc stat: line ends at field " + std::to_string(field));
    }
    bool ok = true;
    switch (field) {
      case 4:
        ok = ParseNumber(word, out.ppid);
        break;
      case 14:
        ok = ParseNumber(word, out.utime);
        break;
      case 15:
        ok = ParseNumber(word, out.stime);
        break;
      case 16:
        ok = ParseNumber(word, out.cutime);
        break;
      case 17:
        ok = ParseNumber(word, out.cstime);
        break;
      case 19:
        ok = ParseNumber(word, out.nice);
        break;
      case 22:
        ok = ParseNumber(word, out.starttime);
        break;
      case 41:
        ok = ParseNumber(word, out.policy);
        break;
      default:
        break;
    }
    if (!ok) {
      return Status::InvalidArgument("proc stat: field " + std::to_string(field) +
                                     " is not a valid number: \"" + std::string(word) + "\"");
    }
  }
  return Status::Ok();
}

std::string SchedPolicyName(int64_t policy) {
  switch (policy) {
    case 0:
      return "SCHED_OTHER";
    case 1:
      return "SCHED_FIFO";
    case 2:
      return "SCHED_RR";
    case 3:
      return "SCHED_BATCH";
    case 5:
      return "SCHED_IDLE";
    case 6:
      return "SCHED_DEADLINE";
    default:
      return "policy " + std::to_string(policy);
  }
}

}  // namespace benchlab
