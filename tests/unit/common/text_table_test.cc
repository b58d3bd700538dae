#include "common/text_table.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace benchlab {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The column at which `needle` starts on `line` (code points), npos when absent.
size_t ColumnOf(const std::string& line, const std::string& needle) {
  const size_t at = line.find(needle);
  return at == std::string::npos ? at : TextColumns(line.substr(0, at));
}

TextTable People() {
  TextTable t;
  t.columns = {
      TableColumn("name").GivesWay(Shrink::kCutMiddle, 3, 10),
      TableColumn("req/s").Right(),
      TableColumn("spread").Right().GivesWay(Shrink::kDrop, 1),
      TableColumn("reason").GivesWay(Shrink::kCutEnd, 2, 8),
  };
  t.rows = {{"hello-server-variant-a", "118,835", "2.1%", "foreign_cpu: cc1plus at 40%"},
            {"hello-server-variant-b", "60,663", "12.5%", "-"}};
  return t;
}

TEST(FormatTableTest, AWideEnoughTableIsLaidOutWhole) {
  EXPECT_EQ(FormatTable(People(), 100),
            "name                      req/s  spread  reason\n"
            "hello-server-variant-a  118,835    2.1%  foreign_cpu: cc1plus at 40%\n"
            "hello-server-variant-b   60,663   12.5%  -\n");
}

TEST(FormatTableTest, ColumnsGiveWayInTheirOrderAndStayAligned) {
  // 68 columns whole. At 56 the spread (priority 1) is left out first (60), then the reason
  // (priority 2) is cut with "…" (56).
  const std::string at56 = FormatTable(People(), 56);
  EXPECT_EQ(at56,
            "name                      req/s  reason\n"
            "hello-server-variant-a  118,835  foreign_cpu: cc1plus a…\n"
            "hello-server-variant-b   60,663  -\n")
      << at56;
  // At 40 the reason stops at its minimum (8), and the names are cut in the middle, so that the
  // two variants stay apart.
  const std::string at40 = FormatTable(People(), 40);
  EXPECT_EQ(at40,
            "name                     req/s  reason\n"
            "hello-serv…-variant-a  118,835  foreign…\n"
            "hello-serv…-variant-b   60,663  -\n")
      << at40;
  for (const auto& [table, width] : {std::pair{at56, 56u}, std::pair{at40, 40u}}) {
    const std::vector<std::string> lines = Lines(table);
    for (const std::string& line : lines) EXPECT_LE(TextColumns(line), width) << line;
    // The header's "req/s" ends where the numbers end (right-aligned); "reason" starts where
    // the reasons start.
    EXPECT_EQ(ColumnOf(lines[0], "req/s") + 5, ColumnOf(lines[1], "118,835") + 7) << table;
    EXPECT_EQ(ColumnOf(lines[0], "reason"), ColumnOf(lines[1], "foreign")) << table;
  }
}

TEST(FormatTableTest, AShortFormReplacesTheLongOneOnlyWhenNeeded) {
  TextTable t;
  t.columns = {TableColumn("at").GivesWay(Shrink::kShorten, 1), TableColumn("who")};
  t.rows = {{TableCell("2026-12-01T10:00:00.123Z", "2026-12-01"), "alice"}};
  EXPECT_EQ(FormatTable(t, 100),
            "at                        who\n2026-12-01T10:00:00.123Z  alice\n");
  EXPECT_EQ(FormatTable(t, 20), "at          who\n2026-12-01  alice\n");
}

TEST(FormatTableTest, WhatCannotGiveWayIsCutAtTheWidth) {
  TextTable t;
  t.columns = {TableColumn("a"), TableColumn("b")};
  t.rows = {{std::string(30, 'x'), std::string(30, 'y')}};
  const std::vector<std::string> lines = Lines(FormatTable(t, 40));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "a" + std::string(31, ' ') + "b");
  EXPECT_EQ(lines[1], std::string(30, 'x') + "  " + std::string(7, 'y') + "…");
}

TEST(FormatTableTest, HeadersAreNeverCutAndCellsStayOnTheirLine) {
  TextTable t;
  t.indent = "  ";
  t.columns = {TableColumn("a long header").GivesWay(Shrink::kCutEnd, 1), TableColumn("x")};
  t.rows = {{"line\nbreak and more words than fit", "\x1b[2J"}};
  EXPECT_EQ(FormatTable(t, 24),
            "  a long header  x\n"
            "  line\\nbreak …  \\x1b[2J\n");
}

TEST(TextColumnsTest, CountsCodePointsAndCutsAtThem) {
  EXPECT_EQ(TextColumns("412 µs"), 6u);
  EXPECT_EQ(CutEnd("CPU µs/request", 8), "CPU µs/…");
  EXPECT_EQ(CutEnd("short", 8), "short");
  EXPECT_EQ(CutMiddle("hello-server-a", 9), "hell…er-a");
  EXPECT_EQ(CutMiddle("µµµµµµµµµµ", 5), "µµ…µµ");
}

TEST(WrapTextTest, WrapsAtSpacesWithinTheWidthAndIndentsTheRest) {
  const std::string text =
      "  between nightly-2026-11-30 and nightly-2026-12-01; versions 1.25.3 → 1.25.4; confirmed";
  const std::string wrapped = WrapText(text, 40, "    ");
  EXPECT_EQ(wrapped,
            "  between nightly-2026-11-30 and\n"
            "    nightly-2026-12-01; versions 1.25.3\n"
            "    → 1.25.4; confirmed\n");
  EXPECT_EQ(WrapText("short", 40), "short\n");
  // A word longer than a line is cut rather than overflowing it.
  EXPECT_EQ(WrapText(std::string(50, 'z'), 20), std::string(19, 'z') + "…\n");
}

}  // namespace
}  // namespace benchlab
