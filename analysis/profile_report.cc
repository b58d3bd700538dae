#include "analysis/profile_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "analysis/interval.h"
#include "common/parse.h"

namespace benchlab {
namespace {

// "+1.23" / "-0.40"; "n/a" for NaN.
std::string Signed(double v) { return std::isnan(v) ? "n/a" : StrFormat("%+.2f", v); }
std::string Plain(double v) { return std::isnan(v) ? "n/a" : StrFormat("%.2f", v); }
std::string SharePercent(double share) {
  return std::isnan(share) ? "n/a" : StrFormat("%.1f%%", share * 100);
}

std::string Interval(double low, double high) {
  if (std::isnan(low) || std::isnan(high)) return "n/a (one round)";
  return "[" + Signed(low) + ", " + Signed(high) + "]";
}

std::string ProfiledWindowName(const WindowRow& w) {
  return "window " + std::to_string(w.id) + " (" + w.target + " " + w.scenario + "/" +
         w.load_level + " round " + std::to_string(w.round) + ")";
}

bool Selected(const WindowRow& w, const ProfileSelection& s) {
  if (s.window_id && w.id != *s.window_id) return false;
  if (s.target && w.target != *s.target) return false;
  if (s.scenario && w.scenario != *s.scenario) return false;
  if (s.load_level && w.load_level != *s.load_level) return false;
  return true;
}

std::string Joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// What exists, for an error that says what to ask for instead.
std::string Available(const CampaignProfiles& profiles) {
  std::set<std::string> targets;
  std::set<std::string> cells;
  for (const auto& w : profiles.windows) {
    targets.insert(w.row.target);
    cells.insert(w.row.scenario + "/" + w.row.load_level);
  }
  return "profiled targets: " + Joined(targets) + "; cells: " + Joined(cells);
}

}  // namespace

Result<CampaignProfiles> LoadCampaignProfiles(Store& store, const std::string& campaign) {
  auto found = store.FindCampaign(campaign);
  if (!found.ok()) return found.status();
  if (!found->has_value()) return Status::NotFound("no campaign named \"" + campaign + "\"");
  CampaignProfiles out;
  out.campaign = **found;
  auto rows = store.ListProfiles(out.campaign.id);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) {
    return Status::FailedPrecondition(
        "campaign \"" + campaign +
        "\" has no profiled window: profiles are taken with [profile] enabled = true in the "
        "campaign file or `--profile` on run and submit (docs/profiles.md)");
  }
  std::map<int64_t, const ProfileRow*> by_window;
  for (const auto& p : *rows) by_window[p.window_id] = &p;
  auto services = store.SumServiceCpuByWindow(out.campaign.id);
  if (!services.ok()) return services.status();
  WindowFilter filter;
  filter.campaign = campaign;
  auto windows = store.ListWindows(filter);
  if (!windows.ok()) return windows.status();
  for (const WindowRow& w : *windows) {
    if (w.verdict != "valid") continue;
    const auto it = by_window.find(w.id);
    if (it == by_window.end()) continue;
    const ProfileRow& p = *it->second;
    if (!p.error.empty()) {
      out.unprofiled.push_back({w, p.error});
      continue;
    }
    auto profile = DecompressFolded(p.folded_z);
    if (!profile.ok()) {
      return Status::Internal(ProfiledWindowName(w) +
                              ": stored profile unreadable: " + profile.status().message());
    }
    ProfiledWindow pw;
    pw.row = w;
    pw.frequency_hz = p.frequency_hz;
    pw.round.profile = std::move(*profile);
    const auto service = services->find(w.id);
    pw.round.cpu_s = w.server_cpu_s + (service == services->end() ? 0 : service->second);
    pw.round.requests = static_cast<double>(w.requests);
    out.windows.push_back(std::move(pw));
  }
  return out;
}

Status ParseCell(const std::string& text, ProfileSelection& selection) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() ||
      text.find('/', slash + 1) != std::string::npos) {
    return Status::InvalidArgument("--cell: expected SCENARIO/LEVEL such as json/c64, got \"" +
                                   text + "\"");
  }
  selection.scenario = text.substr(0, slash);
  selection.load_level = text.substr(slash + 1);
  return Status::Ok();
}

Result<MergedProfile> MergeSelected(const CampaignProfiles& profiles,
                                    const ProfileSelection& selection) {
  MergedProfile merged;
  for (const auto& w : profiles.windows) {
    if (!Selected(w.row, selection)) continue;
    MergeProfile(merged.profile, w.round.profile);
    merged.cpu_s += w.round.cpu_s;
    merged.requests += w.round.requests;
    ++merged.windows;
    merged.frequency_hz = std::max(merged.frequency_hz, w.frequency_hz);
    if (std::find(merged.targets.begin(), merged.targets.end(), w.row.target) ==
        merged.targets.end()) {
      merged.targets.push_back(w.row.target);
    }
  }
  if (merged.windows == 0) {
    std::string why = "no valid profiled window matches";
    for (const auto& u : profiles.unprofiled) {
      if (Selected(u.row, selection)) {
        why += " (" + ProfiledWindowName(u.row) + " has no profile: " + u.error + ")";
        break;
      }
    }
    return Status::InvalidArgument(why + "; " + Available(profiles));
  }
  if (merged.targets.size() > 1) {
    std::set<std::string> names(merged.targets.begin(), merged.targets.end());
    return Status::InvalidArgument("the selection holds several targets (" + Joined(names) +
                                   "), whose code differs: give --target, or --diff BASE NEW");
  }
  return merged;
}

namespace {

struct FunctionRow {
  std::string function;
  FunctionSamples samples;
};

std::vector<FunctionRow> ByFunction(const MergedProfile& merged) {
  std::vector<FunctionRow> rows;
  for (const auto& [function, samples] : SamplesByFunction(merged.profile)) {
    rows.push_back({function, samples});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const FunctionRow& a, const FunctionRow& b) {
    return std::tie(a.samples.self, a.samples.total) > std::tie(b.samples.self, b.samples.total);
  });
  return rows;
}

ProfiledRound AsRound(const MergedProfile& merged) {
  ProfiledRound round;
  round.profile = merged.profile;
  round.cpu_s = merged.cpu_s;
  round.requests = merged.requests;
  return round;
}

}  // namespace

std::string FormatProfileText(const MergedProfile& merged, size_t top) {
  const uint64_t all = merged.profile.samples();
  const ProfiledRound round = AsRound(merged);
  std::string out = "target " + (merged.targets.empty() ? "" : merged.targets.front()) + ": " +
                    std::to_string(merged.windows) + " window(s), " + std::to_string(all) +
                    " samples, " +
                    Plain(merged.requests > 0 ? merged.cpu_s * 1e6 / merged.requests : kNaN) +
                    " CPU µs per request\n";
  if (merged.profile.truncated) {
    out += "(cut to the profile limits: rare stacks merged into [other stacks])\n";
  }
  out += "   self µs  total µs   self %  total %  function\n";
  const auto rows = ByFunction(merged);
  for (size_t i = 0; i < rows.size() && i < top; ++i) {
    const auto& r = rows[i];
    const double whole = static_cast<double>(all);
    const double self_share = all ? static_cast<double>(r.samples.self) / whole : kNaN;
    const double total_share = all ? static_cast<double>(r.samples.total) / whole : kNaN;
    char line[128];
    std::snprintf(line, sizeof line, "%10s %9s %8s %8s  ",
                  Plain(MicrosPerRequest(r.samples.self, round)).c_str(),
                  Plain(MicrosPerRequest(r.samples.total, round)).c_str(),
                  SharePercent(self_share).c_str(), SharePercent(total_share).c_str());
    out += line + r.function + "\n";
  }
  if (rows.size() > top) {
    out += "(" + std::to_string(rows.size() - top) + " more functions; --top N shows more)\n";
  }
  return out;
}

nlohmann::json ProfileJson(const MergedProfile& merged) {
  const ProfiledRound round = AsRound(merged);
  nlohmann::json functions = nlohmann::json::array();
  for (const auto& r : ByFunction(merged)) {
    functions.push_back({{"function", r.function},
                         {"self_samples", r.samples.self},
                         {"total_samples", r.samples.total},
                         {"self_us_per_request", MicrosPerRequest(r.samples.self, round)},
                         {"total_us_per_request", MicrosPerRequest(r.samples.total, round)}});
  }
  return {{"targets", merged.targets},
          {"windows", merged.windows},
          {"samples", merged.profile.samples()},
          {"truncated", merged.profile.truncated},
          {"cpu_us_per_request", merged.requests > 0
                                     ? nlohmann::json(merged.cpu_s * 1e6 / merged.requests)
                                     : nlohmann::json(nullptr)},
          {"functions", functions}};
}

Result<std::vector<CellProfileDiff>> DiffTargets(const CampaignProfiles& profiles,
                                                 const std::string& base, const std::string& next,
                                                 const ProfileSelection& selection, double level) {
  if (base == next) return Status::InvalidArgument("--diff: BASE and NEW are the same target");
  // cell -> round -> the side's window (the last valid attempt of a round, by id).
  using Rounds = std::map<int, const ProfiledWindow*>;
  // (pair, scenario, load level): a fleet campaign's pairs are measured apart.
  using ProfileCell = std::tuple<std::string, std::string, std::string>;
  std::vector<ProfileCell> cells;
  std::map<ProfileCell, std::pair<Rounds, Rounds>> sides;
  bool base_seen = false;
  bool next_seen = false;
  for (const auto& w : profiles.windows) {
    if (w.row.noise != 0) continue;
    ProfileSelection cell = selection;
    cell.target.reset();
    if (!Selected(w.row, cell)) continue;
    base_seen = base_seen || w.row.target == base;
    next_seen = next_seen || w.row.target == next;
    if (w.row.target != base && w.row.target != next) continue;
    const ProfileCell key{w.row.pair, w.row.scenario, w.row.load_level};
    if (std::find(cells.begin(), cells.end(), key) == cells.end()) cells.push_back(key);
    auto& side = w.row.target == base ? sides[key].first : sides[key].second;
    side[w.row.round] = &w;
  }
  for (const auto& [name, seen] : {std::pair{base, base_seen}, std::pair{next, next_seen}}) {
    if (!seen) {
      return Status::InvalidArgument("--diff: no valid profiled window of target \"" + name +
                                     "\" in the selection; " + Available(profiles));
    }
  }
  std::vector<CellProfileDiff> out;
  for (const auto& key : cells) {
    const auto& [b, n] = sides[key];
    std::vector<ProfiledRound> base_rounds;
    std::vector<ProfiledRound> next_rounds;
    for (const auto& [round, window] : b) {
      const auto other = n.find(round);
      if (other == n.end()) continue;
      base_rounds.push_back(window->round);
      next_rounds.push_back(other->second->round);
    }
    if (base_rounds.empty()) continue;
    auto diff = DiffProfiles(base_rounds, next_rounds, level);
    if (!diff.ok()) continue;
    out.push_back(
        {std::get<1>(key), std::get<2>(key), base, next, std::move(*diff), std::get<0>(key)});
  }
  if (out.empty()) {
    return Status::InvalidArgument(
        "--diff: no round of any cell has a profiled valid window of "
        "both \"" +
        base + "\" and \"" + next + "\"");
  }
  return out;
}

namespace {

std::string WholeLine(const CellProfileDiff& c) {
  const ProfileDiff& d = c.diff;
  const double relative = d.base_us > 0 ? d.delta_us / d.base_us : kNaN;
  return "CPU per request: " + Plain(d.base_us) + " µs (" + c.base + ") → " + Plain(d.new_us) +
         " µs (" + c.next + "), " + Signed(d.delta_us) + " µs " + Interval(d.low, d.high) + " (" +
         (std::isnan(relative) ? "n/a" : StrFormat("%+.1f%%", relative * 100)) + ") over " +
         std::to_string(d.rounds) + " paired round(s)";
}

// The `top` largest differences, functions sampled on one side only included: a function that
// appeared is often the whole answer.
std::vector<const FunctionDiff*> Changed(const ProfileDiff& d, size_t top) {
  std::vector<const FunctionDiff*> out;
  for (const auto& f : d.functions) {
    if (out.size() == top) break;
    out.push_back(&f);
  }
  return out;
}

// " (only in NAME)" for a function one side never ran.
std::string OnlyIn(const FunctionDiff& f, const CellProfileDiff& c) {
  if (f.only_new) return " (only in " + c.next + ")";
  if (f.only_base) return " (only in " + c.base + ")";
  return "";
}

std::vector<const FunctionDiff*> OneSided(const ProfileDiff& d, bool base_side, size_t top) {
  std::vector<const FunctionDiff*> out;
  for (const auto& f : d.functions) {
    if (!(base_side ? f.only_base : f.only_new)) continue;
    if (out.size() == top) break;
    out.push_back(&f);
  }
  return out;
}

}  // namespace

std::string ProfileHeadline(const CellProfileDiff& c) {
  const ProfileDiff& d = c.diff;
  const double relative = d.base_us > 0 ? d.delta_us / d.base_us : kNaN;
  std::string out = "CPU per request " + Signed(d.delta_us) + " µs (" +
                    (std::isnan(relative) ? "n/a" : StrFormat("%+.1f%%", relative * 100)) + ") " +
                    Interval(d.low, d.high);
  int named = 0;
  for (const auto& f : d.functions) {
    if (named == 3) break;
    // Only what moved the same way as the whole explains it.
    if (std::isnan(f.delta_us) || f.delta_us * d.delta_us <= 0) continue;
    out += (named == 0 ? "; " : ", ") + Signed(f.delta_us) + " µs" + (named == 0 ? " of it" : "") +
           " in " + f.function;
    ++named;
  }
  return out;
}

std::string FormatProfileDiffText(const std::vector<CellProfileDiff>& cells, size_t top) {
  std::string out;
  for (const auto& c : cells) {
    if (!out.empty()) out += "\n";
    out += (c.pair.empty() ? "" : "pair " + c.pair + " · ") + c.scenario + "/" + c.load_level +
           ": " + c.next + " against " + c.base + "\n";
    out += WholeLine(c) + "\n";
    out += "   Δ self µs/req  95% interval        share  base self  new self  Δ total  function\n";
    for (const FunctionDiff* f : Changed(c.diff, top)) {
      char line[200];
      std::snprintf(line, sizeof line, "%16s  %-18s %6s %10s %9s %8s  ",
                    Signed(f->delta_us).c_str(), Interval(f->low, f->high).c_str(),
                    SharePercent(f->share).c_str(), Plain(f->base_us).c_str(),
                    Plain(f->new_us).c_str(), Signed(f->total_delta_us).c_str());
      out += line + f->function + OnlyIn(*f, c) + "\n";
    }
    for (bool base_side : {false, true}) {
      const auto only = OneSided(c.diff, base_side, top);
      if (only.empty()) continue;
      out += std::string("only in ") + (base_side ? c.base : c.next) + ":\n";
      for (const FunctionDiff* f : only) {
        out += "  " + Plain(base_side ? f->base_total_us : f->new_total_us) + " µs/req  " +
               f->function + "\n";
      }
    }
  }
  return out;
}

std::string FormatProfileDiffMarkdown(const std::vector<CellProfileDiff>& cells, size_t top) {
  auto cell = [](std::string text) {
    std::string out;
    for (char ch : text) {
      if (ch == '|' || ch == '`' || ch == '*' || ch == '_' || ch == '<' || ch == '>') out += '\\';
      out += ch;
    }
    return out;
  };
  std::string out;
  for (const auto& c : cells) {
    out +=
        "### " +
        cell((c.pair.empty() ? "" : "Pair " + c.pair + " · ") + c.scenario + "/" + c.load_level) +
        ": " + cell(c.next) + " against " + cell(c.base) + "\n\n" + cell(WholeLine(c)) + "\n\n";
    out += "| function | Δ self µs/request | 95% interval | share of Δ | " + cell(c.base) +
           " self µs | " + cell(c.next) + " self µs | Δ total µs |\n" +
           "| --- | ---: | --- | ---: | ---: | ---: | ---: |\n";
    for (const FunctionDiff* f : Changed(c.diff, top)) {
      out += "| " + cell(f->function + OnlyIn(*f, c)) + " | " + Signed(f->delta_us) + " | " +
             Interval(f->low, f->high) + " | " + SharePercent(f->share) + " | " +
             Plain(f->base_us) + " | " + Plain(f->new_us) + " | " + Signed(f->total_delta_us) +
             " |\n";
    }
    for (bool base_side : {false, true}) {
      const auto only = OneSided(c.diff, base_side, top);
      if (only.empty()) continue;
      out += "\nOnly in " + cell(base_side ? c.base : c.next) + ": ";
      for (size_t i = 0; i < only.size(); ++i) {
        out += (i ? ", " : "") + cell(only[i]->function) + " (" +
               Plain(base_side ? only[i]->base_total_us : only[i]->new_total_us) + " µs)";
      }
      out += "\n";
    }
    out += "\n";
  }
  return out;
}

nlohmann::json ProfileDiffJson(const std::vector<CellProfileDiff>& cells) {
  auto number = [](double v) {
    return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v);
  };
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : cells) {
    nlohmann::json functions = nlohmann::json::array();
    for (const auto& f : c.diff.functions) {
      functions.push_back({{"function", f.function},
                           {"base_self_us_per_request", number(f.base_us)},
                           {"new_self_us_per_request", number(f.new_us)},
                           {"self_delta_us", number(f.delta_us)},
                           {"low", number(f.low)},
                           {"high", number(f.high)},
                           {"share", number(f.share)},
                           {"base_total_us_per_request", number(f.base_total_us)},
                           {"new_total_us_per_request", number(f.new_total_us)},
                           {"total_delta_us", number(f.total_delta_us)},
                           {"only_base", f.only_base},
                           {"only_new", f.only_new}});
    }
    out.push_back({{"pair", c.pair},
                   {"scenario", c.scenario},
                   {"load_level", c.load_level},
                   {"base", c.base},
                   {"new", c.next},
                   {"rounds", c.diff.rounds},
                   {"base_us_per_request", number(c.diff.base_us)},
                   {"new_us_per_request", number(c.diff.new_us)},
                   {"delta_us", number(c.diff.delta_us)},
                   {"low", number(c.diff.low)},
                   {"high", number(c.diff.high)},
                   {"functions", functions}});
  }
  return out;
}

}  // namespace benchlab
