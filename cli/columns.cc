#include "cli/columns.h"

#include <algorithm>

#include "common/printable.h"

namespace benchlab {
namespace {

// In characters, not bytes: "×500" or a UTF-8 host name takes as many columns as it shows.
size_t Width(const std::string& s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

std::string FormatColumns(const std::vector<std::vector<std::string>>& rows) {
  // Cells often hold what peers sent (a request's path, an agent's host name): each is made
  // printable, so that no cell can start a line of its own or move the cursor.
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> width;
  for (const auto& row : rows) {
    std::vector<std::string>& line = cells.emplace_back();
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) {
      line.push_back(PrintableText(row[c]));
      width[c] = std::max(width[c], Width(line.back()));
    }
  }
  std::string out;
  for (const auto& row : cells) {
    for (size_t c = 0; c < row.size(); ++c) {
      out += row[c];
      if (c + 1 < row.size()) out += std::string(width[c] - Width(row[c]) + 2, ' ');
    }
    out += "\n";
  }
  return out;
}

}  // namespace benchlab
