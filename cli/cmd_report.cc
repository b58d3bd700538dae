// `benchlab report CAMPAIGN --db FILE`: a campaign's results as Markdown, a JSON run of record or
// CSV (docs/report.md). Reads the database only; the formatting is cli/report_format.h's.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/commands.h"
#include "cli/report_format.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

struct ReportArgs {
  std::string campaign;
  std::string db;
  std::string format = "md";
  std::string output;
};

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "benchlab report: %s\n", message.c_str());
  return code;
}

int RunReport(const ReportArgs& args) {
  // Store::Open would create a missing file: a typo must not leave an empty database behind.
  if (!std::filesystem::exists(args.db)) return Fail(2, "--db: no database at " + args.db);
  auto store = Store::Open(args.db);
  if (!store.ok()) return Fail(1, store.status().message());
  auto campaign = (*store)->FindCampaign(args.campaign);
  if (!campaign.ok()) return Fail(1, campaign.status().message());
  if (!*campaign) {
    auto all = (*store)->ListCampaigns();
    if (!all.ok()) return Fail(1, all.status().message());
    std::string names;
    for (const CampaignRow& c : *all) names += (names.empty() ? "" : ", ") + c.name;
    return Fail(2, "no campaign \"" + args.campaign + "\" in " + args.db +
                       " (campaigns: " + (names.empty() ? "none" : names) + ")");
  }
  ReportInput input;
  input.campaign = **campaign;
  input.generated_by = std::string("benchlab ") + BENCHLAB_VERSION;
  WindowFilter filter;
  filter.campaign = args.campaign;
  auto windows = (*store)->ListWindows(filter);
  if (!windows.ok()) return Fail(1, windows.status().message());
  input.windows = std::move(*windows);
  for (const WindowRow& w : input.windows) {
    auto samples = (*store)->ListSamples(w.id);
    if (!samples.ok()) return Fail(1, samples.status().message());
    input.samples[w.id] = SummariseSamples(*samples);
  }

  const std::string text = args.format == "json"  ? FormatReportJson(input)
                           : args.format == "csv" ? FormatReportCsv(input)
                                                  : FormatReportMarkdown(input);
  if (args.output.empty() || args.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : Fail(1, "writing the report to stdout failed");
  }
  // Written beside the destination and renamed over it, so a reader never sees half a report.
  const std::string tmp = args.output + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Fail(2, "--output: cannot write " + args.output);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      std::filesystem::remove(tmp);
      return Fail(1, "writing " + args.output + " failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, args.output, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    return Fail(1, "writing " + args.output + ": " + ec.message());
  }
  return 0;
}

}  // namespace

CommandRunner AddReportCommand(CLI::App& root) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = root.add_subcommand(
      "report", "A campaign's results: Markdown summary, JSON run of record or CSV of attempts.");
  cmd->add_option("campaign", args->campaign, "the campaign's name")->required();
  cmd->add_option("--db", args->db, "the SQLite database to read (never written)")->required();
  cmd->add_option("--format", args->format, "md (default), json or csv")
      ->check(CLI::IsMember({"md", "json", "csv"}));
  cmd->add_option("--output,-o", args->output, "write to this file instead of stdout");
  return [args] { return RunReport(*args); };
}

}  // namespace benchlab
