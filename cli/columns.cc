#include "cli/columns.h"

namespace benchlab {

std::string FormatColumns(const std::vector<std::vector<std::string>>& rows, int width) {
  if (rows.empty()) return "";
  TextTable table;
  for (const std::string& header : rows.front()) {
    table.columns.push_back(TableColumn(header).GivesWay(Shrink::kCutEnd, 0, 8));
  }
  for (size_t r = 1; r < rows.size(); ++r) {
    table.rows.emplace_back(rows[r].begin(), rows[r].end());
  }
  return FormatTable(table, width);
}

}  // namespace benchlab
