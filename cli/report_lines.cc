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
#include "common/text_table.h"

namespace benchlab {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// `text` followed by spaces up to `width` terminal columns (printf's %-9s counts bytes, and
// "µ" is two bytes in one column).
std::string PadToColumns(const std::string& text, size_t width) {
  const size_t used = TextColumns(text);
  return used >= width ? text : text + std::string(width - used, ' ');
}

}  // namespace

std::string WithThousands(double value) { return std::isfinite(value) ? Thousands(value) : "-"; }

std::string FormatMicros(double us) { return std::isfinite(us) ? Micros(us) : "-"; }

std::string FormatWindowLine(const v1::Window& w, int width) {
  const size_t limit = static_cast<size_t>(std::max(width, 1));
  const std::string level =
      w.load_level().empty() ? "c" + std::to_string(w.connections()) : w.load_level();
  std::string head = StrFormat("[%3d/%d] ", w.index() + 1, w.total_windows());
  if (!w.pair().empty()) head += w.pair() + " ";
  head += w.noise() ? StrFormat("noise %d", w.position() + 1) : StrFormat("round %d", w.round());
  const bool measured = w.verdict() == "valid" || w.verdict() == "invalid";
  const std::string rps = WithThousands(w.rps());
  const std::string p99 = FormatMicros(static_cast<double>(w.p99_us()));
  // Padded, the lines of a run stand in columns; a line too wide loses the padding, then the
  // target's and the scenario's names are cut in the middle (to 12 and 10 columns at least), so
  // that the verdict and the start of the first reason always show.
  auto build = [&](bool padded, const std::string& target, const std::string& scenario) {
    std::string line = head + "  " + (padded ? PadToColumns(target, 12) : target) + " " +
                       (padded ? PadToColumns(scenario, 10) : scenario) + " " +
                       (padded ? PadToColumns(level, 7) : level);
    if (w.attempt() > 1) line += StrFormat(" attempt %d", w.attempt());
    if (measured) {
      line += padded ? StrFormat(" %12s req/s  p99 ", rps.c_str()) + PadToColumns(p99, 9)
                     : " " + rps + " req/s  p99 " + p99;
    }
    return line + " " + w.verdict();
  };
  const size_t room = w.reasons_size() > 0 ? 24 : 0;  // kept for the reasons when names are cut
  std::string line = build(true, w.target(), w.scenario());
  if (TextColumns(line) > limit) line = build(false, w.target(), w.scenario());
  if (TextColumns(line) + room > limit) {
    size_t excess = TextColumns(line) + room - limit;
    const size_t target_columns = TextColumns(w.target());
    const size_t target_cut = std::min(excess, target_columns > 12 ? target_columns - 12 : 0);
    excess -= target_cut;
    const size_t scenario_columns = TextColumns(w.scenario());
    const size_t scenario_cut = std::min(excess, scenario_columns > 10 ? scenario_columns - 10 : 0);
    line = build(false, CutMiddle(w.target(), target_columns - target_cut),
                 CutMiddle(w.scenario(), scenario_columns - scenario_cut));
  }
  // A reason may quote what an agent or a target said: printable, so a window is one line. The
  // reasons are cut to the width with "…": `benchlab windows` and the report show them whole.
  for (int i = 0; i < w.reasons_size(); ++i) {
    line += (i == 0 ? ": " : "; ") + PrintableText(w.reasons(i));
  }
  return CutEnd(line, limit);
}

std::string FormatWindowTable(const std::vector<v1::Window>& windows, int width) {
  // Names give way first (cut in the middle, so that both ends stay), then the window's position
  // and its p50; figures and the verdict never.
  TextTable table;
  table.columns = {
      TableColumn("id").Right(),
      TableColumn("campaign").GivesWay(Shrink::kCutMiddle, 4, 12),
      TableColumn("target").GivesWay(Shrink::kCutMiddle, 5, 12),
      TableColumn("scenario").GivesWay(Shrink::kCutMiddle, 3, 10),
      TableColumn("conns").Right(),
      TableColumn("round").Right(),
      TableColumn("pos").Right().GivesWay(Shrink::kDrop, 1),
      TableColumn("verdict"),
      TableColumn("req/s").Right(),
      TableColumn("p50").Right().GivesWay(Shrink::kDrop, 2),
      TableColumn("p99").Right(),
      TableColumn("errors").Right(),
  };
  std::string out;
  // Each window's reasons follow its row, wrapped under it; so the rows are laid out together
  // (one column width for all) and the reasons put in between.
  for (const auto& w : windows) {
    table.rows.push_back({std::to_string(w.id()), w.campaign(), w.target(), w.scenario(),
                          std::to_string(w.connections()), std::to_string(w.round()),
                          std::to_string(w.position()), w.verdict(), WithThousands(w.rps()),
                          FormatMicros(static_cast<double>(w.p50_us())),
                          FormatMicros(static_cast<double>(w.p99_us())),
                          WithThousands(static_cast<double>(w.errors()))});
  }
  const std::string laid = FormatTable(table, width);
  size_t at = laid.find('\n') + 1;  // after the header
  out = laid.substr(0, at);
  for (const auto& w : windows) {
    const size_t end = laid.find('\n', at) + 1;
    out += laid.substr(at, end - at);
    at = end;
    for (const auto& reason : w.reasons()) {
      out += WrapText("       " + PrintableText(reason), width, "         ");
    }
  }
  return out;
}

std::string FormatSummary(const std::vector<v1::Window>& windows, const std::string& baseline,
                          int width) {
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
    out += "\n" +
           CutEnd(PrintableText((pair.empty() ? "" : "pair " + pair + ", ") + "scenario " +
                                scenario + ", " + report_detail::LevelWords(level)),
                  static_cast<size_t>(std::max(width, 1))) +
           "\n";
    TextTable table;
    table.indent = "  ";
    table.columns = {
        TableColumn("target").GivesWay(Shrink::kCutMiddle, 2, 12),
        TableColumn("median req/s").Right(),
        TableColumn("p99").Right(),
        TableColumn("CPU µs/req").Right(),
        // A long baseline's name would widen the column: "vs base" then.
        TableColumn("vs " + baseline).Right().GivesWay(Shrink::kShorten, 1).Short("vs base"),
        TableColumn("valid").Right(),
    };
    double base = NAN;
    auto base_it = cells.find({group, baseline});
    if (base_it != cells.end()) base = Median(base_it->second.rps);
    for (const auto& target : targets[group]) {
      const Cell& cell = cells[{group, target}];
      double rps = Median(cell.rps);
      double cpu = Median(cell.cpu);
      std::string ratio = std::isfinite(rps) && std::isfinite(base) && base > 0
                              ? StrFormat("%.2f×", rps / base)
                              : "-";
      std::string cpu_text = std::isfinite(cpu) ? StrFormat("%.1f", cpu) : "-";
      std::string valid = StrFormat("%d/%d", cell.valid, cell.total);
      table.rows.push_back(
          {target, WithThousands(rps), FormatMicros(Median(cell.p99)), cpu_text, ratio, valid});
    }
    out += FormatTable(table, width);
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
