// Tables for people: rows of cells printed in columns, each as wide as its widest cell and two
// spaces apart, one line a row (`benchlab agents`, `audit`, `token list`). Pure formatting.
#pragma once

#include <string>
#include <vector>

namespace benchlab {

// Every row should have as many cells as the first (the header); the last column is not padded.
std::string FormatColumns(const std::vector<std::vector<std::string>>& rows);

}  // namespace benchlab
