// What `benchlab run`, `submit --wait` and `windows` print: one line per window as it finishes
// and a summary table per cell (median req/s and p99 over valid windows, valid n/N). Pure
// formatting of protocol messages; no I/O.
#pragma once

#include <string>
#include <vector>

#include "benchlab/v1/common.pb.h"

namespace benchlab {

// "[ 3/24] round 1  nginx  hello  c=16   52,341 req/s  p99 412us  valid"
std::string FormatWindowLine(const v1::Window& w);
// The header and one row per window, for `benchlab windows`.
std::string FormatWindowTable(const std::vector<v1::Window>& windows);
// `benchlab windows --format json`: an array of one object per attempt, every field of the table
// and more under the protocol's names (docs/cli.md, "windows"); numbers as JSON numbers.
std::string FormatWindowsJson(const std::vector<v1::Window>& windows);
// `--format csv`: a header row and one row per attempt with the same fields (RFC 4180 quoting;
// reasons joined with "; ").
std::string FormatWindowsCsv(const std::vector<v1::Window>& windows);
// Per scenario and load level, targets as rows.
std::string FormatSummary(const std::vector<v1::Window>& windows, const std::string& baseline);

// 1234567 -> "1,234,567"
std::string WithThousands(double value);
// 412 -> "412us", 1500 -> "1.50ms", 2500000 -> "2.50s"
std::string FormatMicros(double us);

}  // namespace benchlab
