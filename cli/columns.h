// Tables for people: rows of cells printed in columns, each as wide as its widest cell and two
// spaces apart, one line a row, fitted to a width (`benchlab token list`, `host check`). Tables
// whose columns give way in an order of their own build a TextTable (common/text_table.h).
// Pure formatting.
#pragma once

#include <string>
#include <vector>

#include "common/text_table.h"

namespace benchlab {

// Every row should have as many cells as the first (the header); the last column is not padded.
// Each cell is printed as PrintableText shows it (common/printable.h): control characters and
// bytes that are not UTF-8 escaped, so one cell is always one line. Widths count characters.
// Wider than `width`, the columns are cut with "…" from the right, none below 8 columns (nor
// its header), and then each line is cut at `width`.
std::string FormatColumns(const std::vector<std::vector<std::string>>& rows,
                          int width = kDefaultTextWidth);

}  // namespace benchlab
