// What `benchlab report` writes: a campaign's Markdown summary, its JSON run of record and its
// CSV of attempts (docs/report.md documents all three). Pure functions of stored rows: no I/O,
// no database; the statistics are analysis/stats.h's. Any thread may call them.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/profile_report.h"
#include "analysis/stats.h"
#include "coordinator/store.h"

namespace benchlab {

// A window's per-interval samples reduced to what a report shows (raw samples stay in the
// database). The figures are NaN / 0 when the window has no server sample.
struct SampleSummary {
  int count = 0;                      // samples of both sources
  int server_count = 0;               // of which from the server agent
  double server_cpu_pct_mean = kNaN;  // % of one core, the target's tree
  double server_cpu_pct_max = kNaN;
  uint64_t rss_max_kb = 0;  // largest server sample
};
SampleSummary SummariseSamples(const std::vector<SampleRow>& samples);

// Everything a report is made from.
struct ReportInput {
  CampaignRow campaign;
  std::vector<WindowRow> windows;            // every attempt of the campaign, by id
  std::map<int64_t, SampleSummary> samples;  // by window id; a missing id: no samples
  // The side services' CPU seconds together (user + system) by window id; a missing id: the
  // attempt ran without services (docs/services.md).
  std::map<int64_t, double> services_cpu_s;
  // Each agent's self-test calibration and the selftest_drift threshold it set (docs/gates.md).
  std::vector<SelftestCalibrationRow> calibrations;
  // A profiled campaign's CPU profiles (docs/profiles.md): every target against the baseline,
  // cell by cell, over their paired rounds; and the valid windows that have no profile, why.
  bool profiled = false;
  std::vector<CellProfileDiff> profile_diffs;
  std::vector<UnprofiledWindow> unprofiled;
  std::string generated_by = "benchlab";  // "benchlab 0.1.0", for the record
};

// Reads a campaign's row, every attempt and their samples summarised from the store. NotFound
// names the campaigns the store has.
Result<ReportInput> LoadReportInput(Store& store, const std::string& campaign);

// "md" (or "markdown"), "json" or "csv" to the format's text; InvalidArgument for any other
// format.
Result<std::string> FormatReport(const ReportInput& input, const std::string& format);

// The gate mode the campaign's windows were judged in, as the run of record's
// `campaign.gates_in_force` says it: "warn" or "enforce" from --gates's override, else from the
// stored file's [gates] mode; nullopt when neither is known (a stored file that no longer parses).
std::optional<std::string> CampaignGatesInForce(const CampaignRow& campaign);

// The statistics' view of a window attempt: valid = verdict "valid", noise = noise != 0; with
// its side services' CPU seconds when it ran with any.
Measurement ToMeasurement(const WindowRow& row,
                          std::optional<double> services_cpu_s = std::nullopt);
// The attempt's services' CPU seconds from input.services_cpu_s; nullopt without services.
std::optional<double> ServicesCpuOf(const ReportInput& input, int64_t id);
// The window figures its load generator could not measure (store column names, from the
// record's "unavailable"): empty for benchlab's own generator.
std::vector<std::string> UnavailableFigures(const WindowRow& w);
// "c64@wrk" -> "wrk"; "c64" -> "benchlab".
std::string LoadTool(const std::string& level);
// The campaign's target order: its spec's [[target]] order, then targets only the windows name.
std::vector<std::string> TargetOrder(const ReportInput& input);

// Per pair, scenario and load level a table with the targets as rows, then the noise floor,
// the targets' start-up and memory, the host facts, the method and every invalid attempt.
std::string FormatReportMarkdown(const ReportInput& input);
// {"format": "benchlab-run-of-record", "version": 1, ...}, pretty-printed, newline-terminated.
std::string FormatReportJson(const ReportInput& input);
// One attempt as the run of record's `windows[].attempts[]` holds it (docs/report.md); `samples`
// may be nullptr (no samples). With `services_cpu_s` (an attempt that ran with side services)
// it also has services_cpu_s, service_cpu_us_per_request and total_cpu_us_per_request.
nlohmann::ordered_json AttemptRecordJson(const WindowRow& w, bool newest,
                                         const SampleSummary* samples,
                                         std::optional<double> services_cpu_s = std::nullopt);
// A header row and one row per attempt, RFC 4180 (CRLF, fields quoted when needed).
std::string FormatReportCsv(const ReportInput& input);

// Helpers shared by the formats, exposed for tests.
std::string CsvField(const std::string& field);  // quoted when it holds , " CR or LF
// 12345.6 -> "12,346"; NaN -> "–"
std::string Thousands(double value);
// 412 -> "412 µs", 1500 -> "1.50 ms", 2500000 -> "2.50 s"; NaN -> "–"
std::string Micros(double us);

}  // namespace benchlab
