#include "cli/report_lines.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/text_table.h"

namespace benchlab {
namespace {

v1::Window MakeWindow(const std::string& target, int round, const std::string& verdict, double rps,
                      uint64_t p99, double cpu = 5.0) {
  v1::Window w;
  w.set_target(target);
  w.set_scenario("hello");
  w.set_connections(16);
  w.set_round(round);
  w.set_verdict(verdict);
  w.set_rps(rps);
  w.set_p99_us(p99);
  w.set_cpu_us_per_request(cpu);
  w.set_total_windows(24);
  return w;
}

TEST(ReportLinesTest, Numbers) {
  EXPECT_EQ(WithThousands(0), "0");
  EXPECT_EQ(WithThousands(999), "999");
  EXPECT_EQ(WithThousands(1000), "1,000");
  EXPECT_EQ(WithThousands(1234567.4), "1,234,567");
  EXPECT_EQ(FormatMicros(412), "412 µs");
  EXPECT_EQ(FormatMicros(1500), "1.50 ms");
  EXPECT_EQ(FormatMicros(2500000), "2.50 s");
  EXPECT_EQ(FormatMicros(NAN), "-");
}

TEST(ReportLinesTest, WindowLineShowsFiguresAndVerdict) {
  v1::Window w = MakeWindow("nginx", 1, "valid", 52341, 412);
  w.set_index(2);
  EXPECT_EQ(FormatWindowLine(w),
            "[  3/24] round 1  nginx        hello      c16           52,341 req/s  p99 412 µs    "
            "valid");
}

TEST(ReportLinesTest, WindowLineNamesPairNoiseOpenLoopAndAttempt) {
  v1::Window w = MakeWindow("nginx", 0, "valid", 52341, 412);
  w.set_index(2);
  w.set_noise(true);
  w.set_position(1);
  w.set_load_level("r5000");
  w.set_attempt(2);
  w.set_pair("srv2");
  EXPECT_EQ(FormatWindowLine(w, 120),
            "[  3/24] srv2 noise 2  nginx        hello      r5000   attempt 2       52,341 req/s  "
            "p99 412 µs    valid");
  // 104 columns padded: at 100 the padding goes, and every word stays.
  EXPECT_EQ(FormatWindowLine(w, 100),
            "[  3/24] srv2 noise 2  nginx hello r5000 attempt 2 52,341 req/s  p99 412 µs valid");
}

TEST(ReportLinesTest, WindowLineOfAFailureShowsReasonsNotFigures) {
  v1::Window w = MakeWindow("nginx", 2, "failed", 0, 0);
  w.add_reasons("start_target: not ready");
  w.add_reasons("second");
  std::string line = FormatWindowLine(w);
  EXPECT_EQ(line.find("req/s"), std::string::npos);
  EXPECT_NE(line.find("failed: start_target: not ready; second"), std::string::npos) << line;
}

TEST(ReportLinesTest, SummaryHasACellPerLoadLevelAndTool) {
  v1::Window closed = MakeWindow("nginx", 1, "valid", 100, 1000, 10);
  closed.set_load_level("c16");
  v1::Window by_wrk = MakeWindow("nginx", 1, "valid", 90, 1000, 10);
  by_wrk.set_load_level("c16@wrk");
  v1::Window open = MakeWindow("nginx", 1, "valid", 50, 1000, 10);
  open.set_load_level("r5000");
  const std::string summary = FormatSummary({closed, by_wrk, open}, "nginx");
  EXPECT_NE(summary.find("scenario hello, 16 connections\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("scenario hello, 16 connections, wrk\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("scenario hello, open loop at 5,000 req/s\n"), std::string::npos)
      << summary;
  // Each cell holds its own window only: three cells of 1/1, none of 3/3.
  EXPECT_EQ(summary.find("3/3"), std::string::npos) << summary;
  size_t cells = 0;
  for (size_t at = 0; (at = summary.find("1/1", at)) != std::string::npos; ++at) ++cells;
  EXPECT_EQ(cells, 3u) << summary;
}

TEST(ReportLinesTest, SummaryUsesMediansOfValidWindowsAndCountsThem) {
  std::vector<v1::Window> windows = {
      MakeWindow("nginx", 1, "valid", 100, 1000, 10), MakeWindow("hello", 1, "valid", 300, 900, 4),
      MakeWindow("nginx", 2, "valid", 200, 3000, 12), MakeWindow("hello", 2, "invalid", 9999, 1, 1),
      MakeWindow("nginx", 3, "valid", 300, 2000, 8),  MakeWindow("hello", 3, "valid", 500, 1100, 6),
  };
  std::string summary = FormatSummary(windows, "nginx");
  EXPECT_NE(summary.find("scenario hello, 16 connections"), std::string::npos) << summary;
  // nginx: median of 100, 200, 300; hello: median of 300 and 500 (the invalid window is left out).
  EXPECT_NE(summary.find("  nginx            200  2.00 ms        10.0     1.00×    3/3\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("  hello            400  1.00 ms         5.0     2.00×    2/3\n"),
            std::string::npos)
      << summary;
}

TEST(ReportLinesTest, TableListsReasonsUnderTheirWindow) {
  v1::Window w = MakeWindow("nginx", 1, "invalid", 10, 10);
  w.set_id(7);
  w.set_campaign("c");
  w.add_reasons("error_rate: 5.00% > 1.00% (5 errors of 100 attempts)");
  std::string table = FormatWindowTable({w});
  EXPECT_NE(table.find("\n 7  c "), std::string::npos) << table;
  EXPECT_NE(table.find("\n       error_rate: 5.00% > 1.00%"), std::string::npos) << table;
}

TEST(ReportLinesTest, AReasonQuotingATargetStaysOnItsWindowsLine) {
  v1::Window w = MakeWindow("nginx", 1, "failed", 0, 0);
  w.set_id(7);
  w.add_reasons("target_exited: it said \"bye\n[ 2/24] round 1  nginx  valid\x1b[2J\"");
  const std::string line = FormatWindowLine(w, kMaxTextWidth);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  EXPECT_NE(line.find("bye\\n[ 2/24] round 1  nginx  valid\\x1b[2J"), std::string::npos) << line;
  const std::string table = FormatWindowTable({w});
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 3) << "header, window, reason\n" << table;
  EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
}

std::vector<std::string> LinesOf(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    out.push_back(text.substr(start, end - start));
  }
  if (start < text.size()) out.push_back(text.substr(start));
  return out;
}

// The column where `text` starts on `line` (code points), npos when absent.
size_t ColumnOf(const std::string& line, const std::string& text) {
  const size_t at = line.find(text);
  return at == std::string::npos ? at : TextColumns(line.substr(0, at));
}

// A realistic wide input: long names, a long gate reason.
std::vector<v1::Window> WideWindows() {
  const std::string reason =
      "foreign_cpu: process \"cc1plus\" (pid 41234, /usr/lib/gcc/x86_64-linux-gnu/13/cc1plus) "
      "used 38.2% of CPU 3 (the target's) over the window, above the gate's 5.0%: another "
      "process competed with the target; stop it or move it off the lab's CPUs, then re-run";
  std::vector<v1::Window> out;
  for (const std::string& target : {std::string("actix-web-4.9-release-lto-codegen-units-1"),
                                    std::string("actix-web-4.9-release-lto-codegen-units-16")}) {
    v1::Window w = MakeWindow(target, 3, "invalid", 118835.4, 1523);
    w.set_id(123456);
    w.set_campaign("nightly-2026-12-04-frameworks-json-serialization");
    w.set_scenario("json-serialization-large-payload");
    w.set_connections(256);
    w.set_errors(12345);
    w.set_index(122);
    w.set_total_windows(480);
    w.add_reasons(reason);
    out.push_back(w);
  }
  return out;
}

TEST(ReportLinesTest, WindowLinesFitTheWidthAndCutTheReason) {
  for (int width : {100, 140}) {
    for (const v1::Window& w : WideWindows()) {
      const std::string line = FormatWindowLine(w, width);
      EXPECT_LE(TextColumns(line), size_t(width)) << line;
      EXPECT_NE(line.find("118,835 req/s  p99 1.52 ms"), std::string::npos) << line;
      // The names are cut in the middle to leave the reason room.
      EXPECT_NE(line.find("invalid: foreign_cpu: "), std::string::npos) << line;
      EXPECT_NE(line.find(width == 100 ? "actix-…" : "units-1"), std::string::npos) << line;
      EXPECT_EQ(line.substr(line.size() - 3), "…") << line;
    }
  }
  // Wide enough, the whole reason.
  const v1::Window w = WideWindows().front();
  EXPECT_NE(FormatWindowLine(w, 1000).find(w.reasons(0)), std::string::npos);
}

TEST(ReportLinesTest, WindowTableFitsTheWidthWithHeadersOverTheirColumns) {
  for (int width : {100, 120}) {
    const std::string table = FormatWindowTable(WideWindows(), width);
    const std::vector<std::string> lines = LinesOf(table);
    ASSERT_GE(lines.size(), 5u) << table;
    for (const std::string& line : lines) EXPECT_LE(TextColumns(line), size_t(width)) << line;
    // The two targets stay apart: cut in the middle, their ends kept.
    EXPECT_NE(lines[1].find("units-1 "), std::string::npos) << table;
    EXPECT_NE(table.find("units-16 "), std::string::npos) << table;
    // Right-aligned figures end under their header; the verdict starts under its header.
    const std::string& row = lines[1];
    EXPECT_EQ(ColumnOf(lines[0], "req/s") + 5, ColumnOf(row, "118,835") + 7) << table;
    EXPECT_EQ(ColumnOf(lines[0], "errors") + 6, ColumnOf(row, "12,345") + 6) << table;
    EXPECT_EQ(ColumnOf(lines[0], "verdict"), ColumnOf(row, "invalid")) << table;
    // The reason, wrapped below its window, whole.
    std::string reason;
    for (size_t i = 2; i < lines.size() && lines[i].rfind("       ", 0) == 0; ++i) {
      reason += lines[i];
    }
    EXPECT_NE(reason.find("then re-run"), std::string::npos) << table;
  }
}

TEST(ReportLinesTest, SummaryFitsTheWidthWithALongBaseline) {
  std::vector<v1::Window> windows = WideWindows();
  for (v1::Window& w : windows) w.set_verdict("valid");
  const std::string baseline = windows.front().target();
  const std::string summary = FormatSummary(windows, baseline, 100);
  for (const std::string& line : LinesOf(summary)) {
    EXPECT_LE(TextColumns(line), 100u) << line << "\n" << summary;
  }
  EXPECT_NE(summary.find("CPU µs/req"), std::string::npos) << summary;
  EXPECT_NE(summary.find("1.00×"), std::string::npos) << summary;
  EXPECT_NE(FormatSummary(windows, baseline, 200).find("vs " + baseline), std::string::npos);
}

TEST(WindowsFormatTest, CsvAndJsonCarryTheSameFieldsAndQuoteWhatNeedsIt) {
  v1::Window w;
  w.set_id(7);
  w.set_campaign("hello");
  w.set_target("nginx");
  w.set_scenario("json, small");  // a comma: quoted
  w.set_load_level("c8");
  w.set_round(2);
  w.set_attempt(1);
  w.set_verdict("invalid");
  w.add_reasons("foreign_cpu: \"cc1plus\" 40% > 25%");
  w.add_reasons("steal: 3%");
  w.set_rps(51234.5);
  w.set_p99_us(412);
  const std::string csv = FormatWindowsCsv({w});
  const size_t eol = csv.find("\r\n");
  ASSERT_NE(eol, std::string::npos);
  EXPECT_EQ(csv.substr(0, 40), "id,campaign,pair,target,scenario,load_le");
  const std::string row = csv.substr(eol + 2);
  EXPECT_EQ(row.rfind("7,hello,,nginx,\"json, small\",c8,", 0), 0u) << row;
  EXPECT_NE(row.find(",\"foreign_cpu: \"\"cc1plus\"\" 40% > 25%; steal: 3%\","), std::string::npos)
      << row;
  EXPECT_NE(row.find(",51234.5,"), std::string::npos) << row;
  const auto json = nlohmann::ordered_json::parse(FormatWindowsJson({w, w}));
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["scenario"], "json, small");
  EXPECT_EQ(json[0]["p99_us"], 412);
  EXPECT_EQ(json[0]["reasons"].size(), 2u);
  // The same columns, in the same order.
  std::string keys;
  for (const auto& field : json[0].items()) keys += (keys.empty() ? "" : ",") + field.key();
  EXPECT_EQ(csv.substr(0, eol), keys);
}

}  // namespace
}  // namespace benchlab
