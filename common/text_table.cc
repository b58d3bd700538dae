#include "common/text_table.h"

#include <algorithm>
#include <numeric>

#include "common/printable.h"

namespace benchlab {
namespace {

bool IsLeadByte(char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }

// The byte offset where code point `n` starts (text.size() when there are fewer).
size_t OffsetOfColumn(std::string_view text, size_t n) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (IsLeadByte(text[i]) && seen++ == n) return i;
  }
  return text.size();
}

std::string PadCell(const std::string& text, size_t width, bool right) {
  const size_t used = TextColumns(text);
  const std::string fill(width > used ? width - used : 0, ' ');
  return right ? fill + text : text + fill;
}

// One column as the table is drawn: its cells printable, in their full or short form.
struct Laid {
  const TableColumn* column;
  std::vector<std::string> full, compact;  // [0] is the header
  bool shortened = false;
  bool shown = true;
  size_t width = 0;  // the width it is drawn at

  const std::vector<std::string>& cells() const { return shortened ? compact : full; }
  size_t Natural() const {
    size_t w = 0;
    for (const std::string& c : cells()) w = std::max(w, TextColumns(c));
    return w;
  }
};

size_t TotalWidth(const std::vector<Laid>& laid, size_t indent) {
  size_t total = indent;
  size_t shown = 0;
  for (const Laid& l : laid) {
    if (!l.shown) continue;
    total += l.width;
    ++shown;
  }
  return shown > 1 ? total + 2 * (shown - 1) : total;
}

}  // namespace

size_t TextColumns(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), IsLeadByte));
}

std::string CutEnd(std::string_view text, size_t width) {
  if (TextColumns(text) <= width) return std::string(text);
  if (width == 0) return "";
  return std::string(text.substr(0, OffsetOfColumn(text, width - 1))) + "…";
}

std::string CutMiddle(std::string_view text, size_t width) {
  const size_t columns = TextColumns(text);
  if (columns <= width) return std::string(text);
  if (width < 3) return CutEnd(text, width);
  const size_t head = (width - 1 + 1) / 2;  // the start keeps the odd column
  const size_t tail = width - 1 - head;
  return std::string(text.substr(0, OffsetOfColumn(text, head))) + "…" +
         std::string(text.substr(OffsetOfColumn(text, columns - tail)));
}

std::string WrapText(std::string_view text, int width, std::string_view indent) {
  const size_t limit = static_cast<size_t>(std::max(width, 1));
  std::string out;
  size_t at = text.find_first_not_of(' ');  // the first line keeps its own indentation
  if (at == std::string_view::npos) at = text.size();
  std::string line(text.substr(0, at));
  size_t used = at;  // columns of `line`
  bool bare = true;  // no word on `line` yet
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;  // a run of spaces
    if (!bare && used + 1 + TextColumns(word) > limit) {
      out += line + "\n";
      line = std::string(indent);
      used = TextColumns(indent);
      bare = true;
    }
    if (!bare) {
      line += " ";
      ++used;
    }
    const std::string fitted = CutEnd(word, limit > used ? limit - used : 1);
    line += fitted;
    used += TextColumns(fitted);
    bare = false;
  }
  return out + line + "\n";
}

std::string FormatTable(const TextTable& table, int width) {
  const size_t limit = static_cast<size_t>(std::max(width, 1));
  const size_t n = table.columns.size();
  std::vector<Laid> laid(n);
  for (size_t c = 0; c < n; ++c) {
    Laid& l = laid[c];
    l.column = &table.columns[c];
    l.full.push_back(PrintableText(l.column->header));
    l.compact.push_back(
        PrintableText(l.column->short_header.empty() ? l.column->header : l.column->short_header));
    for (const auto& row : table.rows) {
      const TableCell* cell = c < row.size() ? &row[c] : nullptr;
      l.full.push_back(cell ? PrintableText(cell->text) : "");
      l.compact.push_back(
          cell ? PrintableText(cell->short_text.empty() ? cell->text : cell->short_text) : "");
    }
    if (!table.header) {
      l.full[0].clear();
      l.compact[0].clear();
    }
    l.width = l.Natural();
  }

  // The columns that may give way, lowest priority first; of equal ones the rightmost first.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (table.columns[x].priority != table.columns[y].priority) {
      return table.columns[x].priority < table.columns[y].priority;
    }
    return x > y;
  });
  const size_t indent = TextColumns(table.indent);
  for (size_t c : order) {
    const size_t total = TotalWidth(laid, indent);
    if (total <= limit) break;
    Laid& l = laid[c];
    switch (l.column->shrink) {
      case Shrink::kNever:
        break;
      case Shrink::kShorten:
        l.shortened = true;
        l.width = l.Natural();
        break;
      case Shrink::kCutEnd:
      case Shrink::kCutMiddle: {
        const size_t least = std::max(l.column->min_width, TextColumns(l.full[0]));
        const size_t excess = total - limit;
        l.width = std::max(least, l.width > excess ? l.width - excess : 0);
        l.width = std::min(l.width, l.Natural());
        break;
      }
      case Shrink::kDrop:
        l.shown = false;
        break;
    }
  }

  std::string out;
  const size_t first_row = table.header ? 0 : 1;
  for (size_t r = first_row; r <= table.rows.size(); ++r) {
    std::string line = table.indent;
    std::vector<size_t> shown;
    for (size_t c = 0; c < n; ++c) {
      if (laid[c].shown) shown.push_back(c);
    }
    for (size_t i = 0; i < shown.size(); ++i) {
      const Laid& l = laid[shown[i]];
      std::string cell = l.cells()[r];
      cell =
          l.column->shrink == Shrink::kCutMiddle ? CutMiddle(cell, l.width) : CutEnd(cell, l.width);
      line += PadCell(cell, l.width, l.column->right) + (i + 1 < shown.size() ? "  " : "");
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += CutEnd(line, limit) + "\n";
  }
  return out;
}

}  // namespace benchlab
