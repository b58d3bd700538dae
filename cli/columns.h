// Tables for people: rows of cells printed in columns, each as wide as its widest cell and two
// spaces apart, one line a row (`benchlab agents`, `audit`, `token list`). Pure formatting.
#pragma once

#include <string>
#include <vector>

namespace benchlab {

// Every row should have as many cells as the first (the header); the last column is not padded.
// Each cell is printed as PrintableText shows it (common/printable.h): control characters and
// bytes that are not UTF-8 escaped, so one cell is always one line. Widths count characters.
std::string FormatColumns(const std::vector<std::vector<std::string>>& rows);

}  // namespace benchlab
