// What `benchlab run`, `submit --wait` and `windows` print: one line per window as it finishes
// and a summary table per cell (median req/s and p99 over valid windows, valid n/N). Pure
// formatting of protocol messages; no I/O.
#pragma once

#include <string>
#include <vector>

#include "benchlab/v1/common.pb.h"
#include "common/text_table.h"

namespace benchlab {

// "[ 3/24] round 1  nginx  hello  c16       52,341 req/s  p99 412 µs    valid", its reasons after
// the verdict, the whole cut to `width` columns with "…". A line too wide loses its padding, then
// long target and scenario names are cut in the middle: the verdict always shows.
std::string FormatWindowLine(const v1::Window& w, int width = kDefaultTextWidth);
// The header and one row per window, for `benchlab windows`, each window's reasons wrapped below
// its row; fitted to `width` (names cut in the middle first, then the position and p50 left out).
std::string FormatWindowTable(const std::vector<v1::Window>& windows,
                              int width = kDefaultTextWidth);
// `benchlab windows --format json`: an array of one object per attempt, every field of the table
// and more under the protocol's names (docs/cli.md, "windows"); numbers as JSON numbers.
std::string FormatWindowsJson(const std::vector<v1::Window>& windows);
// `--format csv`: a header row and one row per attempt with the same fields (RFC 4180 quoting;
// reasons joined with "; ").
std::string FormatWindowsCsv(const std::vector<v1::Window>& windows);
// Per scenario and load level, targets as rows, fitted to `width`.
std::string FormatSummary(const std::vector<v1::Window>& windows, const std::string& baseline,
                          int width = kDefaultTextWidth);

// 1234567 -> "1,234,567"
std::string WithThousands(double value);
// 412 -> "412 µs", 1500 -> "1.50 ms", 2500000 -> "2.50 s" (the report's Micros); NaN -> "-"
std::string FormatMicros(double us);

}  // namespace benchlab
