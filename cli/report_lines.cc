#include "cli/report_lines.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "analysis/report_detail.h"
#include "analysis/report_format.h"
#include "common/parse.h"
#include "common/printable.h"

namespace benchlab {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::string WithThousands(double value) { return std::isfinite(value) ? Thousands(value) : "-"; }

std::string FormatMicros(double us) {
  if (!std::isfinite(us)) return "-";
  if (us < 1000) return StrFormat("%.0fus", us);
  if (us < 1e6) return StrFormat("%.2fms", us / 1e3);
  return StrFormat("%.2fs", us / 1e6);
}

std::string FormatWindowLine(const v1::Window& w) {
  const std::string level =
      w.load_level().empty() ? "c" + std::to_string(w.connections()) : w.load_level();
  std::string line = StrFormat("[%3d/%d] ", w.index() + 1, w.total_windows());
  if (!w.pair().empty()) line += w.pair() + " ";
  line += w.noise() ? StrFormat("noise %d", w.position() + 1) : StrFormat("round %d", w.round());
  line += StrFormat("  %-12s %-10s %-7s", w.target().c_str(), w.scenario().c_str(), level.c_str());
  if (w.attempt() > 1) line += StrFormat(" attempt %d", w.attempt());
  if (w.verdict() == "valid" || w.verdict() == "invalid") {
    line += StrFormat(" %12s req/s  p99 %-9s", WithThousands(w.rps()).c_str(),
                      FormatMicros(static_cast<double>(w.p99_us())).c_str());
  }
  line += " " + w.verdict();
  // A reason may quote what an agent or a target said: printable, so a window is one line.
  for (int i = 0; i < w.reasons_size(); ++i) {
    line += (i == 0 ? ": " : "; ") + PrintableText(w.reasons(i));
  }
  return line;
}

std::string FormatWindowTable(const std::vector<v1::Window>& windows) {
  std::string out = StrFormat("%-6s %-16s %-12s %-10s %6s %5s %4s %-8s %12s %10s %10s %8s\n", "id",
                              "campaign", "target", "scenario", "conns", "round", "pos", "verdict",
                              "req/s", "p50", "p99", "errors");
  for (const auto& w : windows) {
    out += StrFormat("%-6lld %-16s %-12s %-10s %6d %5d %4d %-8s %12s %10s %10s %8llu\n",
                     static_cast<long long>(w.id()), w.campaign().c_str(), w.target().c_str(),
                     w.scenario().c_str(), w.connections(), w.round(), w.position(),
                     w.verdict().c_str(), WithThousands(w.rps()).c_str(),
                     FormatMicros(static_cast<double>(w.p50_us())).c_str(),
                     FormatMicros(static_cast<double>(w.p99_us())).c_str(),
                     static_cast<unsigned long long>(w.errors()));
    for (const auto& reason : w.reasons()) out += "       " + PrintableText(reason) + "\n";
  }
  return out;
}

std::string FormatSummary(const std::vector<v1::Window>& windows, const std::string& baseline) {
  struct Cell {
    std::vector<double> rps, p99, cpu;
    int valid = 0, total = 0;
  };
  // A cell: pair, scenario and load level ("c64", "r5000", "c64@wrk"); in the order cells first
  // appear, each with its targets in the order they first appear.
  using Group = std::tuple<std::string, std::string, std::string>;
  std::vector<Group> groups;
  std::map<Group, std::vector<std::string>> targets;
  std::map<std::pair<Group, std::string>, Cell> cells;
  for (const auto& w : windows) {
    const std::string level =
        w.load_level().empty() ? "c" + std::to_string(w.connections()) : w.load_level();
    const Group group{w.pair(), w.scenario(), level};
    if (!targets.count(group)) groups.push_back(group);
    auto& names = targets[group];
    if (std::find(names.begin(), names.end(), w.target()) == names.end()) {
      names.push_back(w.target());
    }
    Cell& cell = cells[{group, w.target()}];
    ++cell.total;
    if (w.verdict() == "valid") {
      ++cell.valid;
      cell.rps.push_back(w.rps());
      cell.p99.push_back(static_cast<double>(w.p99_us()));
      cell.cpu.push_back(w.cpu_us_per_request());
    }
  }
  std::string out;
  for (const auto& group : groups) {
    const auto& [pair, scenario, level] = group;
    out += "\n" + (pair.empty() ? "" : "pair " + pair + ", ") + "scenario " + scenario + ", " +
           report_detail::LevelWords(level) + "\n";
    std::string ratio_header = "vs " + baseline;
    out += StrFormat("  %-14s %14s %10s %12s %10s %7s\n", "target", "median req/s", "p99",
                     "CPU us/req", ratio_header.c_str(), "valid");
    double base = NAN;
    auto base_it = cells.find({group, baseline});
    if (base_it != cells.end()) base = Median(base_it->second.rps);
    for (const auto& target : targets[group]) {
      const Cell& cell = cells[{group, target}];
      double rps = Median(cell.rps);
      double cpu = Median(cell.cpu);
      std::string ratio = std::isfinite(rps) && std::isfinite(base) && base > 0
                              ? StrFormat("%.2fx", rps / base)
                              : "-";
      std::string cpu_text = std::isfinite(cpu) ? StrFormat("%.1f", cpu) : "-";
      std::string valid = StrFormat("%d/%d", cell.valid, cell.total);
      out += StrFormat("  %-14s %14s %10s %12s %10s %7s\n", target.c_str(),
                       WithThousands(rps).c_str(), FormatMicros(Median(cell.p99)).c_str(),
                       cpu_text.c_str(), ratio.c_str(), valid.c_str());
    }
  }
  return out;
}

namespace {

// The fields of `windows --format json|csv`, in the order CSV's columns take.
nlohmann::ordered_json WindowFields(const v1::Window& w) {
  nlohmann::ordered_json reasons = nlohmann::ordered_json::array();
  for (const std::string& r : w.reasons()) reasons.push_back(r);
  return {{"id", w.id()},
          {"campaign", w.campaign()},
          {"pair", w.pair()},
          {"target", w.target()},
          {"scenario", w.scenario()},
          {"load_level", w.load_level()},
          {"connections", w.connections()},
          {"round", w.round()},
          {"position", w.position()},
          {"noise", w.noise()},
          {"attempt", w.attempt()},
          {"verdict", w.verdict()},
          {"reasons", reasons},
          {"started_at", w.started_at()},
          {"ended_at", w.ended_at()},
          {"server_agent", w.server_agent()},
          {"load_agent", w.load_agent()},
          {"requests", w.requests()},
          {"rps", w.rps()},
          {"p50_us", w.p50_us()},
          {"p90_us", w.p90_us()},
          {"p99_us", w.p99_us()},
          {"p999_us", w.p999_us()},
          {"max_us", w.max_us()},
          {"errors", w.errors()},
          {"server_cpu_s", w.server_cpu_s()},
          {"cpu_us_per_request", w.cpu_us_per_request()},
          {"rss_peak_kb", w.rss_peak_kb()}};
}

}  // namespace

std::string FormatWindowsJson(const std::vector<v1::Window>& windows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const v1::Window& w : windows) out.push_back(WindowFields(w));
  return out.dump(2) + "\n";
}

std::string FormatWindowsCsv(const std::vector<v1::Window>& windows) {
  std::string out;
  const nlohmann::ordered_json columns = WindowFields(v1::Window());
  for (const auto& field : columns.items()) {
    out += (out.empty() ? "" : ",") + field.key();
  }
  out += "\r\n";
  for (const v1::Window& w : windows) {
    std::string row;
    bool first = true;
    const nlohmann::ordered_json fields = WindowFields(w);
    for (const auto& field : fields.items()) {
      const auto& value = field.value();
      std::string text;
      if (value.is_string()) {
        text = value.get<std::string>();
      } else if (value.is_array()) {
        for (const auto& r : value) text += (text.empty() ? "" : "; ") + r.get<std::string>();
      } else {
        text = value.dump();  // numbers as JSON writes them; true, false
      }
      row += (first ? "" : ",") + CsvField(text);
      first = false;
    }
    out += row + "\r\n";
  }
  return out;
}

}  // namespace benchlab
