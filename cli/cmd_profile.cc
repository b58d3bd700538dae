// `benchlab profile CAMPAIGN --db FILE`: the CPU profiles of a campaign's valid windows, merged
// (by target, cell or window) into functions with their CPU µs per request, or as collapsed
// stacks for flame graph tools; with `--diff BASE NEW`, the functions whose µs per request changed
// most between two targets, with intervals over the paired rounds (docs/profiles.md).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "analysis/profile_export.h"
#include "analysis/profile_report.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/format_option.h"
#include "cli/series_input.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

struct ProfileArgs {
  std::string campaign;
  std::string db;
  std::string target;
  std::string cell;
  int64_t window = 0;
  std::vector<std::string> diff;  // BASE NEW
  std::string format = "text";
  size_t top = 25;
  std::string output;
};

int Fail(const Status& status) { return CommandError("profile", status); }

int RunProfile(const ProfileArgs& args) {
  const bool diff = !args.diff.empty();
  const std::vector<std::string> formats =
      diff ? std::vector<std::string>{"text", "md", "json"}
           : std::vector<std::string>{"text", "collapsed", "json", "pprof", "speedscope"};
  if (std::find(formats.begin(), formats.end(), args.format) == formats.end()) {
    std::string known;
    for (const auto& f : formats) known += (known.empty() ? "" : ", ") + f;
    return CommandError("profile", kExitUsage,
                        "--format: expected one of " + known + (diff ? " with --diff" : "") +
                            ", got \"" + args.format + "\"");
  }
  if (diff && (!args.target.empty() || args.window != 0)) {
    return CommandError("profile", kExitUsage,
                        "--diff compares two targets cell by cell: give --cell, "
                        "not --target or --window");
  }
  ProfileSelection selection;
  if (!args.cell.empty()) {
    if (Status st = ParseCell(args.cell, selection); !st.ok()) return Fail(st);
  }
  if (!args.target.empty()) selection.target = args.target;
  if (args.window != 0) selection.window_id = args.window;

  // Store::Open would create a missing file: a typo must not leave an empty database behind.
  if (!std::filesystem::exists(args.db)) {
    return CommandError("profile", kExitUsage, "--db: no database at " + args.db);
  }
  auto store = Store::Open(args.db);
  if (!store.ok()) return CommandError("profile", kExitFailure, store.status().message());
  auto profiles = LoadCampaignProfiles(**store, args.campaign);
  if (!profiles.ok()) return Fail(profiles.status());

  std::string text;
  if (diff) {
    auto cells = DiffTargets(*profiles, args.diff[0], args.diff[1], selection);
    if (!cells.ok()) return Fail(cells.status());
    if (args.format == "text") text = FormatProfileDiffText(*cells, args.top);
    if (args.format == "md") text = FormatProfileDiffMarkdown(*cells, args.top);
    if (args.format == "json") text = ProfileDiffJson(*cells).dump(2) + "\n";
  } else {
    auto merged = MergeSelected(*profiles, selection);
    if (!merged.ok()) return Fail(merged.status());
    if (args.format == "text") text = FormatProfileText(*merged, args.top);
    if (args.format == "collapsed") text = FormatFolded(merged->profile);
    if (args.format == "json") text = ProfileJson(*merged).dump(2) + "\n";
    const std::string name = args.campaign + " " + merged->targets.front() +
                             (args.cell.empty() ? "" : " " + args.cell) +
                             (args.window ? " window " + std::to_string(args.window) : "");
    if (args.format == "pprof") {
      PprofOptions options;
      options.period_ns = static_cast<uint64_t>(1e9 / std::max(merged->frequency_hz, 1));
      options.name = name;
      auto bytes = ToPprof(merged->profile, options);
      if (!bytes.ok()) return Fail(bytes.status());
      if (args.output.empty() || args.output == "-") {
        if (isatty(STDOUT_FILENO)) {
          return CommandError("profile", kExitUsage,
                              "--format pprof is binary: give -o FILE.pb.gz");
        }
      }
      text = std::move(*bytes);
    }
    if (args.format == "speedscope") {
      // Each sample weighs the CPU the lab measured per sample, so the weights add up to it.
      const uint64_t samples = merged->profile.samples();
      const double us = samples ? merged->cpu_s * 1e6 / static_cast<double>(samples) : 0;
      text = ToSpeedscope(merged->profile, name, us) + "\n";
    }
  }
  if (!profiles->unprofiled.empty()) {
    std::fprintf(
        stderr, "benchlab profile: %zu valid window(s) without a profile, e.g. window %lld: %s\n",
        profiles->unprofiled.size(), static_cast<long long>(profiles->unprofiled.front().row.id),
        profiles->unprofiled.front().error.c_str());
  }
  return WriteCommandOutput("profile", text, args.output);
}

}  // namespace

CommandRunner AddProfileCommand(CLI::App& root) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = root.add_subcommand(
      "profile",
      "A campaign's CPU profiles: functions in CPU µs per request, collapsed stacks, or the "
      "difference between two targets (docs/profiles.md).");
  cmd->add_option("campaign", args->campaign, "the campaign's name")->required();
  cmd->add_option("--db", args->db, "the SQLite database to read (never written)")->required();
  cmd->add_option("--target", args->target,
                  "only this target's windows (needed when several were profiled)");
  cmd->add_option("--cell", args->cell, "only this cell, as SCENARIO/LEVEL (json/c64)")
      ->type_name("SCENARIO/LEVEL");
  cmd->add_option("--window", args->window, "only this window (its id in `benchlab windows`)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--diff", args->diff,
                  "BASE NEW: the functions whose CPU µs per request changed most from target "
                  "BASE to target NEW, over the rounds both measured, cell by cell")
      ->expected(2)
      ->type_name("BASE NEW");
  AddFormatOption(cmd, &args->format, {},
                  "text (default), collapsed (flame graph tools' folded stacks), json, pprof "
                  "(gzipped profile.proto for `pprof`) or speedscope (speedscope's JSON); with "
                  "--diff: text, md (markdown is the same) or json");
  cmd->add_option("--top", args->top, "how many functions to list (default 25)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--output,-o", args->output, "write to this file instead of stdout");
  return [args] { return RunProfile(*args); };
}

}  // namespace benchlab
