// `benchlab report CAMPAIGN --db FILE | --coordinator HOST:PORT`: a campaign's results as
// Markdown, a JSON run of record or CSV (docs/report.md). Reads the database, or asks a running
// coordinator (GetReport), which makes the same text from its own; the formatting is
// analysis/report_format.h's either way.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "analysis/report_format.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/format_option.h"
#include "cli/report_fetch.h"
#include "cli/series_input.h"
#include "cli/tls_options.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

struct ReportArgs {
  std::string campaign;
  std::string db;
  std::string coordinator;
  TlsFiles tls;  // --tls-*: mutual TLS to the coordinator
  std::string format = "md";
  std::string output;
  std::string fail_on;  // "invalid": kExitInvalid when a window's newest attempt is invalid
};

// `no campaign "x" (campaigns: ...)` said where it was looked for: `no campaign "x" in a.db (...)`.
std::string SayWhere(const std::string& message, const std::string& campaign,
                     const std::string& where) {
  const std::string head = "no campaign \"" + campaign + "\"";
  if (message.compare(0, head.size(), head) != 0) return message;
  return head + " " + where + message.substr(head.size());
}

// The report's text, or the exit status and message of why there is none.
struct Made {
  std::string text;
  int code = kExitOk;
  std::string error;
};

Made FromDatabase(const ReportArgs& args) {
  // Store::Open would create a missing file: a typo must not leave an empty database behind.
  if (!std::filesystem::exists(args.db)) {
    return {"", kExitUsage, "--db: no database at " + args.db};
  }
  auto store = Store::Open(args.db);
  if (!store.ok()) return {"", kExitFailure, store.status().message()};
  auto input = LoadReportInput(**store, args.campaign);
  if (!input.ok()) {
    if (input.status().code() != StatusCode::kNotFound) {
      return {"", kExitFailure, input.status().message()};
    }
    return {"", kExitUsage, SayWhere(input.status().message(), args.campaign, "in " + args.db)};
  }
  auto text = FormatReport(*input, args.format);
  if (!text.ok()) return {"", kExitUsage, text.status().message()};
  return {std::move(*text), kExitOk, ""};
}

Made FromCoordinator(const ReportArgs& args) {
  auto text = FetchReport(args.coordinator, args.campaign, args.format, args.tls);
  if (text.ok()) return {std::move(*text), kExitOk, ""};
  // Unavailable (unreachable, no answer in time): kExitFailure, as from every command.
  const int code = ExitCodeOf(text.status());
  if (code != kExitUsage) return {"", code, text.status().message()};
  return {"", code, SayWhere(text.status().message(), args.campaign, "at " + args.coordinator)};
}

// --fail-on invalid, judged from the campaign's run of record as `run --fail-on invalid` judges
// (docs/cli.md, "Exit status"): kExitFailure with why when the campaign is not done or the newest
// attempt of a window was not measured (failed or skipped), kExitInvalid when one is invalid.
int FailOnInvalid(const std::string& run_of_record, std::string* why) {
  const nlohmann::json doc = nlohmann::json::parse(run_of_record, nullptr, false);
  if (!doc.is_object() || !doc.contains("windows")) {
    *why = "--fail-on invalid: the run of record could not be read";
    return kExitFailure;
  }
  const std::string state = doc["campaign"].value("state", "");
  if (state != "done") {
    *why = "--fail-on invalid: the campaign is " + state + ", not done";
    return kExitFailure;
  }
  int invalid = 0, unmeasured = 0;
  for (const auto& window : doc["windows"]) {
    for (const auto& attempt : window.value("attempts", nlohmann::json::array())) {
      if (!attempt.value("newest", false)) continue;
      const std::string verdict = attempt.value("verdict", "");
      invalid += verdict == "invalid";
      unmeasured += verdict != "valid" && verdict != "invalid";
    }
  }
  const std::string count = std::to_string(doc["windows"].size());
  if (unmeasured > 0) {
    *why = "--fail-on invalid: " + std::to_string(unmeasured) + " of " + count +
           " windows were not measured";
    return kExitFailure;
  }
  if (invalid > 0) {
    *why = "--fail-on invalid: the gates refused " + std::to_string(invalid) + " of " + count +
           " windows (their newest attempt is invalid)";
    return kExitInvalid;
  }
  return kExitOk;
}

int RunReport(const ReportArgs& args) {
  if (args.db.empty() == args.coordinator.empty()) {
    return CommandError("report", kExitUsage,
                        "give exactly one of --db FILE and --coordinator HOST:PORT");
  }
  Made made = args.db.empty() ? FromCoordinator(args) : FromDatabase(args);
  if (made.code != 0) return CommandError("report", made.code, made.error);
  if (int written = WriteCommandOutput("report", made.text, args.output); written != kExitOk) {
    return written;
  }
  if (args.fail_on.empty()) return kExitOk;
  // The verdicts come from the run of record, read as the report was.
  ReportArgs json_args = args;
  json_args.format = "json";
  Made record = made;
  if (args.format != "json") {
    record = args.db.empty() ? FromCoordinator(json_args) : FromDatabase(json_args);
    if (record.code != 0) return CommandError("report", record.code, record.error);
  }
  std::string why;
  const int status = FailOnInvalid(record.text, &why);
  return status == kExitOk ? kExitOk : CommandError("report", status, why);
}

}  // namespace

CommandRunner AddReportCommand(CLI::App& root) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = root.add_subcommand(
      "report", "A campaign's results: Markdown summary, JSON run of record or CSV of attempts.");
  cmd->add_option("campaign", args->campaign, "the campaign's name")->required();
  cmd->add_option("--db", args->db, "the SQLite database to read (never written)");
  cmd->add_option("--coordinator", args->coordinator,
                  "instead of --db: ask the coordinator at HOST:PORT, which reads its database");
  AddTlsOptions(cmd, &args->tls);
  AddFormatOption(cmd, &args->format, {"md", "json", "csv"},
                  "md (default; markdown is the same), json or csv");
  cmd->add_option("--output,-o", args->output, "write to this file instead of stdout");
  cmd->add_option("--fail-on", args->fail_on,
                  "invalid: after writing the report, exit 4 when the gates refused a window (its "
                  "newest attempt is invalid), 1 when the campaign is not done or a window was "
                  "not measured (docs/cli.md, \"Exit status\")")
      ->check(CLI::IsMember({"invalid"}));
  return [args] { return RunReport(*args); };
}

}  // namespace benchlab
