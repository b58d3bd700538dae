// `benchlab compare A B`: two campaigns or runs of record, cell by cell (docs/compare.md). This
// file finds and reads the two records (a .json file, a database, a coordinator); the comparison
// and its formats are analysis/compare.h's pure functions. Exit status (cli/commands.h): 0
// compared, 1 a source that could not be read (an unreachable coordinator, an unreadable
// database), 2 bad input, 3 a regression beyond --fail-on-regression.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "analysis/compare.h"
#include "analysis/report_format.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/format_option.h"
#include "cli/report_fetch.h"
#include "cli/text_width.h"
#include "cli/tls_options.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

struct CompareArgs {
  std::string a;
  std::string b;
  std::string db;
  std::string coordinator;
  TlsFiles tls;  // --tls-*: mutual TLS to the coordinator
  std::string format = "text";
  std::string fail_on_regression;    // PCT as typed; parsed by ParsePercent
  std::vector<std::string> figures;  // --figure (alias --metric), as typed
  std::string confidence;            // as typed; "" for B's record's
  std::string margin;                // as typed; "" for B's record's
  std::string basis = "auto";
};

struct Record {
  nlohmann::json json;
  std::string source;  // for the header: the file, the database, the coordinator
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<Record> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument(path + ": cannot read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::InvalidArgument(path + ": cannot read: " + std::strerror(errno));
  BENCHLAB_ASSIGN_OR_RETURN(nlohmann::json record, ParseRunOfRecord(text.str(), path));
  return Record{std::move(record), path};
}

// Reads campaigns from one database, opened once for A and B.
class DatabaseSource {
 public:
  explicit DatabaseSource(std::string path) : path_(std::move(path)) {}

  Result<Record> Read(const std::string& campaign) {
    if (!store_) {
      // Store::Open would create a missing file: a typo must not leave an empty database behind.
      if (!fs::exists(path_)) return Status::InvalidArgument("--db: no database at " + path_);
      auto store = Store::Open(path_);
      // A database that cannot be opened is a failure, as for `benchlab report`, not bad input.
      if (!store.ok()) return Status::IoError(path_ + ": " + store.status().message());
      store_ = std::move(*store);
    }
    auto input = LoadReportInput(*store_, campaign);
    if (!input.ok()) {
      // "no campaign "x" (campaigns: a, b)" gains the database's name.
      std::string message = input.status().message();
      if (input.status().code() == StatusCode::kNotFound) {
        const size_t at = message.find(" (campaigns:");
        if (at != std::string::npos) message.insert(at, " in " + path_);
      }
      return Status(input.status().code(), message);
    }
    BENCHLAB_ASSIGN_OR_RETURN(
        nlohmann::json record,
        ParseRunOfRecord(FormatReportJson(*input), "campaign \"" + campaign + "\""));
    return Record{std::move(record), path_};
  }

 private:
  std::string path_;
  std::unique_ptr<Store> store_;
};

Result<Record> ReadFromCoordinator(const std::string& address, const std::string& campaign,
                                   const TlsFiles& tls) {
  auto text = FetchReport(address, campaign, "json", tls);
  if (!text.ok()) {
    // Unavailable names the coordinator already (CallError); the rest keep their code (an unknown
    // campaign is bad input, an unreachable coordinator a failure: cli/commands.h).
    if (text.status().code() == StatusCode::kUnavailable) return text.status();
    return Status(text.status().code(), "coordinator " + address + ": " + text.status().message());
  }
  BENCHLAB_ASSIGN_OR_RETURN(nlohmann::json record,
                            ParseRunOfRecord(*text, "campaign \"" + campaign + "\" at " + address));
  return Record{std::move(record), "coordinator " + address};
}

// A names an existing .json file: a run of record; otherwise a campaign, from --db or
// --coordinator.
Result<Record> Read(const std::string& which, const std::string& arg, const CompareArgs& args,
                    DatabaseSource* db) {
  if (EndsWith(arg, ".json") && fs::is_regular_file(arg)) return ReadFile(arg);
  if (db != nullptr) return db->Read(arg);
  if (!args.coordinator.empty()) return ReadFromCoordinator(args.coordinator, arg, args.tls);
  if (EndsWith(arg, ".json")) return Status::InvalidArgument(which + ": no file " + arg);
  return Status::InvalidArgument(which + ": \"" + arg +
                                 "\" is no .json file, and without --db FILE or --coordinator "
                                 "HOST:PORT it cannot be a campaign");
}

// "5" or "5%" -> 5; nullopt for anything else, negative or not finite.
std::optional<double> ParsePercent(std::string text) {
  if (!text.empty() && text.back() == '%') text.pop_back();
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == nullptr || *end != '\0' || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

// A fraction within [lo, hi] ("0.95"); nullopt for anything else.
std::optional<double> ParseFraction(const std::string& text, double lo, double hi) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == nullptr || *end != '\0' || !(v >= lo && v <= hi)) return std::nullopt;
  return v;
}

// --confidence, --margin and --basis; an error message for a bad one.
Result<CompareRule> ParseRule(const CompareArgs& args) {
  CompareRule rule;
  if (!args.confidence.empty()) {
    rule.confidence = ParseFraction(args.confidence, 0.5, 0.999);
    if (!rule.confidence) {
      return Status::InvalidArgument("--confidence: expected a fraction from 0.5 to 0.999, got \"" +
                                     args.confidence + "\"");
    }
  }
  if (!args.margin.empty()) {
    rule.margin = ParseFraction(args.margin, 0, 0.5);
    if (!rule.margin) {
      return Status::InvalidArgument("--margin: expected a fraction from 0 to 0.5, got \"" +
                                     args.margin + "\"");
    }
  }
  rule.basis = ParseBasisChoice(args.basis).value_or(BasisChoice::kAuto);  // CLI11 checked it
  return rule;
}

int RunCompare(const CompareArgs& args) {
  if (!args.db.empty() && !args.coordinator.empty()) {
    return CommandError("compare", kExitUsage,
                        "give at most one of --db FILE and --coordinator HOST:PORT");
  }
  CompareOptions options;
  options.width = OutputWidth();
  if (!args.figures.empty()) {
    options.metrics.clear();
    for (const std::string& flag : args.figures) {
      auto m = ParseFigure(flag);
      if (!m || !IsCompared(*m)) {
        return CommandError("compare", kExitUsage,
                            "--figure: expected rps, cpu or p99, got \"" + flag + "\"");
      }
      if (std::find(options.metrics.begin(), options.metrics.end(), *m) == options.metrics.end()) {
        options.metrics.push_back(*m);
      }
    }
  }
  if (!args.fail_on_regression.empty()) {
    options.fail_on_regression_pct = ParsePercent(args.fail_on_regression);
    if (!options.fail_on_regression_pct) {
      return CommandError("compare", kExitUsage,
                          "--fail-on-regression: expected a percentage of 0 or more, got \"" +
                              args.fail_on_regression + "\"");
    }
    if (GatedMetrics(options.metrics).empty()) {
      return CommandError("compare", kExitUsage,
                          "--fail-on-regression judges rps and cpu, and --figure selected neither");
    }
  }

  auto rule = ParseRule(args);
  if (!rule.ok()) return CommandError("compare", rule.status());

  std::unique_ptr<DatabaseSource> db;
  if (!args.db.empty()) db = std::make_unique<DatabaseSource>(args.db);
  auto a = Read("A", args.a, args, db.get());
  if (!a.ok()) return CommandError("compare", a.status());
  auto b = Read("B", args.b, args, db.get());
  if (!b.ok()) return CommandError("compare", b.status());

  if (rule->basis == BasisChoice::kBaseline && SharedBaseline(a->json, b->json).empty()) {
    return CommandError(
        "compare", kExitUsage,
        "--basis baseline: A and B must name the same baseline (campaign.baseline)");
  }
  const RecordComparison comparison = CompareRecords(a->json, b->json, a->source, b->source, *rule);
  const std::string text = args.format == "json" ? FormatCompareJson(comparison, options)
                           : args.format == "md" ? FormatCompareMarkdown(comparison, options)
                                                 : FormatCompareText(comparison, options);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0) {
    return CommandError("compare", kExitFailure, "writing to stdout failed");
  }

  if (!options.fail_on_regression_pct) return kExitOk;
  const auto regressions =
      FindRegressions(comparison, options.metrics, *options.fail_on_regression_pct);
  if (regressions.empty()) return kExitOk;
  std::fprintf(stderr, "benchlab compare: %zu regression(s) worse than A by more than %g%%\n",
               regressions.size(), *options.fail_on_regression_pct);
  return kExitRegression;
}

}  // namespace

CommandRunner AddCompareCommand(CLI::App& root) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = root.add_subcommand(
      "compare",
      "Two campaigns or runs of record, cell by cell: B against A with an unpaired confidence "
      "interval and a verdict against a margin (docs/compare.md).");
  cmd->add_option("A", args->a, "the reference: a run-of-record .json file or a campaign's name")
      ->required();
  cmd->add_option("B", args->b, "the one judged against A: a .json file or a campaign's name")
      ->required();
  cmd->add_option("--db", args->db, "read campaigns from this SQLite database (never written)");
  cmd->add_option("--coordinator", args->coordinator, "read campaigns from this coordinator");
  AddTlsOptions(cmd, &args->tls);
  AddFormatOption(cmd, &args->format, {"text", "md", "json"},
                  "text (default), md (markdown is the same) or json");
  AddWidthOption(cmd);
  cmd->add_option("--fail-on-regression", args->fail_on_regression,
                  "exit 3 when a cell's req/s or CPU µs/req has the verdict worse and its "
                  "estimate is worse than A by more than PCT percent")
      ->type_name("PCT");
  cmd->add_option("--confidence", args->confidence,
                  "two-sided confidence of the intervals, 0.5 to 0.999 (default: B's [stats] "
                  "confidence, else 0.95)")
      ->type_name("LEVEL");
  cmd->add_option("--margin", args->margin,
                  "the smallest difference worth reporting, a fraction from 0 to 0.5 (default: "
                  "B's [stats] margin, else 0.02)")
      ->type_name("FRACTION");
  cmd->add_option("--basis", args->basis,
                  "what the interval is on: auto (default: the ratio to the baseline when A and "
                  "B share one), absolute or baseline")
      ->check(CLI::IsMember({"auto", "absolute", "baseline"}));
  cmd->add_option("--figure,--metric", args->figures,
                  "compare only these figures: rps, cpu, p99 (or their full names, "
                  "cpu_us_per_request, p99_us; default all); repeat it or use commas. --metric is "
                  "an alias")
      ->type_name("rps|cpu|p99")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->take_all();
  return [args] { return RunCompare(*args); };
}

}  // namespace benchlab
