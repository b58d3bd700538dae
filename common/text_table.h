// Text for a terminal of a given width: tables whose columns give way in a stated order when the
// table is wider than the terminal (a column is shortened, cut with "…" or left out, never
// wrapped, so every line stays aligned), single lines cut to fit and prose wrapped at spaces.
// Widths are terminal columns, counted as code points (µ, Δ, –, … and box drawing take one).
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace benchlab {

// What the CLI's tables and progress lines fit when neither --width nor a wider terminal says
// otherwise (docs/cli.md, "Width"), and the narrowest --width accepts.
inline constexpr int kDefaultTextWidth = 100;
inline constexpr int kMinTextWidth = 40;
inline constexpr int kMaxTextWidth = 1000;

// How a column gives way when the table is too wide.
enum class Shrink {
  kNever,      // always shown whole
  kShorten,    // its header and cells switch to their short forms
  kCutEnd,     // cut to no less than min_width, "…" at the end (reasons, free text)
  kCutMiddle,  // cut to no less than min_width, "…" in the middle, so both ends of a name stay
  kDrop,       // left out
};

struct TableColumn {
  TableColumn(std::string title) : header(std::move(title)) {}  // NOLINT: implicit by design
  TableColumn(const char* title) : header(title) {}             // NOLINT: implicit by design
  TableColumn& Right() {
    right = true;
    return *this;
  }
  TableColumn& GivesWay(Shrink how, int rank, size_t least = 0) {
    shrink = how;
    priority = rank;
    min_width = least;
    return *this;
  }
  TableColumn& Short(std::string title) {
    short_header = std::move(title);
    return *this;
  }

  std::string header;
  bool right = false;  // aligned to the right (numbers)
  Shrink shrink = Shrink::kNever;
  // Columns give way in order of priority, lowest first (ties: the rightmost first), one step
  // each, until the table fits.
  int priority = 0;
  size_t min_width = 0;      // kCutEnd, kCutMiddle: never narrower (nor narrower than the header)
  std::string short_header;  // kShorten: "" keeps the header
};

// A cell, with the short form a kShorten column shows ("" for the same text).
struct TableCell {
  TableCell(std::string full) : text(std::move(full)) {}  // NOLINT: implicit by design
  TableCell(const char* full) : text(full) {}             // NOLINT: implicit by design
  TableCell(std::string full, std::string compact)
      : text(std::move(full)), short_text(std::move(compact)) {}
  std::string text;
  std::string short_text;
};

struct TextTable {
  std::vector<TableColumn> columns;
  std::vector<std::vector<TableCell>> rows;  // as many cells as columns (missing ones are empty)
  std::string indent;                        // before every line, counted in the width
  bool header = true;                        // false: rows only
};

// The header and the rows, each column as wide as its widest cell, two spaces apart, trailing
// spaces removed. Every cell is shown as PrintableText shows it (common/printable.h), so one
// cell is one line whatever it holds. When the lines would be wider than `width`, the columns
// give way (TableColumn::priority); if they still are, each line is cut at `width` with "…".
std::string FormatTable(const TextTable& table, int width);

// Terminal columns `text` takes (code points; a UTF-8 continuation byte takes none).
size_t TextColumns(std::string_view text);
// `text` cut to `width` columns with "…" as its last one; unchanged when it fits.
std::string CutEnd(std::string_view text, size_t width);
// `text` cut to `width` columns with "…" in its middle: "hello-server-a" to 9 is "hell…er-a".
std::string CutMiddle(std::string_view text, size_t width);
// Prose wrapped at spaces into lines of at most `width` columns, the first keeping the spaces
// `text` starts with, the lines after it starting with `indent`; a word longer than a line is cut
// (CutEnd). Each line ends with "\n".
std::string WrapText(std::string_view text, int width, std::string_view indent = "  ");

}  // namespace benchlab
