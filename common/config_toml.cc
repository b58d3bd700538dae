#include "common/config_toml.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>
#include <sstream>
#include <tuple>

namespace benchlab::config {
namespace {

// Long values are cut so that an error stays one readable line.
constexpr size_t kMaxDescribed = 60;

std::string Shorten(std::string text) {
  if (text.size() > kMaxDescribed) text = text.substr(0, kMaxDescribed - 3) + "...";
  return text;
}

// The value's own source text, when its region lies on the line toml11 recorded.
std::string SourceText(const Value& v) {
  const toml::source_location loc = v.location();
  const std::string& line = loc.line_str();
  if (loc.column() < 1 || loc.region() < 1) return "";
  size_t start = loc.column() - 1;
  if (start + loc.region() > line.size()) return "";
  return line.substr(start, loc.region());
}

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '.')) s.remove_suffix(1);
  return s;
}

// " 12 | text" -> 12; 0 for any other line.
uint32_t NumberedLine(std::string_view line) {
  line = TrimLeft(line);
  uint32_t n = 0;
  size_t i = 0;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) && i < 9) {
    n = n * 10 + static_cast<uint32_t>(line[i] - '0');
    ++i;
  }
  if (i == 0 || line.substr(i, 2) != " |") return 0;
  return n;
}

// "   |     ^--- comment" -> "comment"; empty for any other line.
std::string_view MarkerComment(std::string_view line) {
  line = TrimLeft(line);
  if (line.empty() || line.front() != '|') return "";
  line = TrimLeft(line.substr(1));
  if (line.empty() || (line.front() != '^' && line.front() != '~')) return "";
  while (!line.empty() && (line.front() == '^' || line.front() == '~' || line.front() == '-')) {
    line.remove_prefix(1);
  }
  return TrimLeft(line);
}

}  // namespace

std::string OneLineSyntaxError(std::string_view what, const std::string& source_name,
                               uint32_t fallback_line) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start <= what.size();) {
    size_t end = what.find('\n', start);
    if (end == std::string_view::npos) end = what.size();
    lines.push_back(what.substr(start, end - start));
    start = end + 1;
  }
  // toml11 opens with "[error] toml::parse_xxx: message"; the function name helps no user.
  std::string_view head = lines.empty() ? std::string_view() : lines[0];
  if (head.starts_with("[error] ")) head.remove_prefix(8);
  if (head.starts_with("toml::")) {
    size_t colon = head.find(": ");
    head = colon == std::string_view::npos ? std::string_view() : head.substr(colon + 2);
  }
  head = TrimRight(head);

  uint32_t line_number = 0;
  std::string_view comment;
  for (size_t i = 0; i < lines.size(); ++i) {
    uint32_t n = NumberedLine(lines[i]);
    if (n == 0) continue;
    line_number = n;
    comment = i + 1 < lines.size() ? TrimRight(MarkerComment(lines[i + 1])) : std::string_view();
  }
  if (line_number == 0) line_number = fallback_line;

  std::string message(head);
  if (!comment.empty() && comment != "here") {
    message = message.empty() ? std::string(comment) : message + " (" + std::string(comment) + ")";
  }
  if (message.empty()) message = "not valid TOML";
  return source_name + ":" + std::to_string(line_number) + ": syntax error: " + message;
}

Status CheckTomlNesting(std::string_view text, const std::string& source_name, int max_depth) {
  // One pass over the text. `stack` holds the open arrays ('[') and inline tables ('{') of the
  // value being read; `keys` counts the parts of the dotted key being read (a key or a table
  // header), which nest as deeply as brackets do. Strings and comments are skipped whole.
  std::vector<char> stack;
  bool in_key = true;  // at a line start outside any value, or after '{' or ',' in a table
  bool in_header = false;
  int keys = 1;
  uint32_t line = 1;
  auto too_deep = [&](int depth) {
    return Status::InvalidArgument(
        source_name + ":" + std::to_string(line) + ": nesting deeper than " +
        std::to_string(max_depth) + " levels (arrays, inline tables and dotted keys; found " +
        std::to_string(depth) + "): a campaign or configuration needs a handful");
  };
  const size_t n = text.size();
  if (n > kMaxTomlBytes) {
    return Status::InvalidArgument(source_name + ": " + std::to_string(n) +
                                   " bytes, over the limit of " + std::to_string(kMaxTomlBytes) +
                                   " for a campaign or configuration");
  }
  for (size_t i = 0; i < n; ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      if (stack.empty()) {
        in_key = true;
        in_header = false;
        keys = 1;
      }
      continue;
    }
    if (c == '#') {
      while (i + 1 < n && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      const bool multi = i + 2 < n && text[i + 1] == c && text[i + 2] == c;
      const bool escapes = c == '"';
      size_t j = i + (multi ? 3 : 1);
      for (; j < n; ++j) {
        if (text[j] == '\n') {
          if (!multi) break;  // toml11 reports the unterminated string
          ++line;
        } else if (escapes && text[j] == '\\') {
          if (j + 1 < n && text[j + 1] == '\n') ++line;
          ++j;
        } else if (text[j] == c) {
          if (!multi) break;
          if (j + 2 < n && text[j + 1] == c && text[j + 2] == c) {
            // A closing delimiter may be followed by up to two quotes that belong to the string.
            while (j + 3 < n && text[j + 3] == c) ++j;
            j += 2;
            break;
          }
        }
      }
      // An unterminated one-line string stops before its newline, which the loop then counts.
      i = (j < n && text[j] == '\n') ? j - 1 : j;
      continue;
    }
    const int depth = static_cast<int>(stack.size());
    if (in_key || in_header) {
      if (c == '.') {
        if (++keys + depth > max_depth) return too_deep(keys + depth);
      } else if (c == '=' && in_key) {
        in_key = false;
        keys = 1;
      } else if (c == '[' && stack.empty() && !in_header) {
        in_header = true;  // [table] or [[array of tables]]
        in_key = false;
      } else if (c == ']' && in_header) {
        in_header = false;
      }
      continue;
    }
    if (c == '[' || c == '{') {
      stack.push_back(c);
      if (depth + 1 > max_depth) return too_deep(depth + 1);
      in_key = c == '{';
      keys = 1;
    } else if (c == ']' || c == '}') {
      if (!stack.empty()) stack.pop_back();
    } else if (c == ',') {
      in_key = !stack.empty() && stack.back() == '{';
      keys = 1;
    }
  }
  // Line lengths, after nesting: a deep document is one long line, and its nesting is the
  // better message.
  line = 1;
  for (size_t start = 0; start < n; ++line) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = n;
    if (end - start > kMaxTomlLineBytes) {
      return Status::InvalidArgument(source_name + ":" + std::to_string(line) + ": line of " +
                                     std::to_string(end - start) + " bytes, over the limit of " +
                                     std::to_string(kMaxTomlLineBytes) +
                                     ": split the value over several lines");
    }
    start = end + 1;
  }
  return Status::Ok();
}

// The offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or npos.
size_t InvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return i;
    uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (c & 0x3F);
    }
    const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += n;
  }
  return std::string_view::npos;
}

Result<Value> ParseToml(const std::string& text, const std::string& source_name) {
  if (size_t at = InvalidUtf8(text); at != std::string_view::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n');
    char byte[8];
    std::snprintf(byte, sizeof(byte), "0x%02x", static_cast<unsigned char>(text[at]));
    return Status::InvalidArgument(source_name + ":" + std::to_string(line) + ": not UTF-8 (byte " +
                                   byte + "); TOML files are UTF-8");
  }
  if (Status nested = CheckTomlNesting(text, source_name); !nested.ok()) return nested;
  std::istringstream in(text);
  // toml11 reports problems by throwing; they stop here and become values.
  try {
    return toml::parse(in, source_name);
  } catch (const toml::exception& e) {
    return Status::InvalidArgument(OneLineSyntaxError(e.what(), source_name, e.location().line()));
  } catch (const std::exception& e) {
    return Status::InvalidArgument(OneLineSyntaxError(e.what(), source_name, 1));
  }
}

std::string Quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string KeyForPath(std::string_view key) {
  bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  return bare ? std::string(key) : Quote(key);
}

const Value* NamedTable(const Value& doc, const char* array, const std::string& name) {
  if (!doc.is_table() || !doc.contains(array) || !doc.at(array).is_array()) return nullptr;
  for (const Value& t : doc.at(array).as_array()) {
    if (t.is_table() && t.contains("name") && t.at("name").is_string() &&
        t.at("name").as_string().str == name) {
      return &t;
    }
  }
  return nullptr;
}

std::string Describe(const Value& v) {
  std::string source = SourceText(v);
  if (v.is_table()) return source.starts_with("{") ? Shorten(source) : "a table";
  if (v.is_array()) {
    const auto& items = v.as_array();
    bool all_tables = !items.empty() && std::all_of(items.begin(), items.end(),
                                                    [](const Value& e) { return e.is_table(); });
    if (all_tables && source.starts_with("[[")) return "an array of tables";
    if (source.starts_with("[")) return Shorten(source);
    // An array over several lines: rebuilt from its items, each as written.
    std::string out = "[";
    for (const auto& item : items) out += (out.size() > 1 ? ", " : "") + Describe(item);
    return Shorten(out + "]");
  }
  if (!source.empty()) return Shorten(source);
  if (v.is_string()) return Shorten(Quote(v.as_string().str));
  return Shorten(toml::format(v));
}

// A value's byte offset in its document: O(1), where its line number is a scan from the start.
size_t Offset(const Value& v) {
  const auto* region = dynamic_cast<const toml::detail::region*>(toml::detail::get_region(v));
  return region ? static_cast<size_t>(region->first() - region->begin()) : 0;
}

void Issues::Add(const Value& at, std::string text) {
  issues_.push_back({false, 0, 0, Offset(at), &at, std::move(text)});
}

void Issues::AddMissing(uint32_t line, uint32_t column, std::string text) {
  issues_.push_back({true, line, column, 0, nullptr, std::move(text)});
}

Status Issues::First() const {
  if (issues_.empty()) return Status::Ok();
  auto first = std::min_element(issues_.begin(), issues_.end(), [](const Issue& a, const Issue& b) {
    return std::tie(a.missing, a.offset, a.line, a.column) <
           std::tie(b.missing, b.offset, b.line, b.column);
  });
  const uint32_t line = first->at ? first->at->location().line() : first->line;
  return Status::InvalidArgument(source_name_ + ":" + std::to_string(line) + ": " + first->text);
}

std::vector<std::pair<std::string, const Value*>> EntriesInFileOrder(const Value& table) {
  std::vector<std::pair<std::string, const Value*>> entries;
  for (const auto& [key, value] : table.as_table()) entries.emplace_back(key, &value);
  // By byte offset in the document: O(1) per value, where its line number is a scan from the
  // start of the text (a comparison sort by line numbers was O(keys log keys x file size)).
  std::sort(entries.begin(), entries.end(), [&](const auto& a, const auto& b) {
    return std::make_pair(Offset(*a.second), a.first) < std::make_pair(Offset(*b.second), b.first);
  });
  return entries;
}

Table::Table(const Value& table, std::string label, std::initializer_list<std::string_view> known,
             Issues& issues)
    : Table(table, std::move(label), std::span<const std::string_view>(known.begin(), known.size()),
            issues) {}

Table::Table(const Value& table, std::string label, std::span<const std::string_view> known,
             Issues& issues)
    : table_(table), label_(std::move(label)), issues_(issues) {
  std::string known_list;
  for (std::string_view k : known) known_list += (known_list.empty() ? "" : ", ") + std::string(k);
  for (const auto& [key, value] : EntriesInFileOrder(table_)) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    issues_.Add(*value, Path(KeyForPath(key)) + ": unknown key (known: " + known_list + ")");
  }
}

const Value* Table::Get(std::string_view key) const {
  const auto& entries = table_.as_table();
  auto it = entries.find(std::string(key));
  return it == entries.end() ? nullptr : &it->second;
}

const Value* Table::Require(std::string_view key, std::string_view example) {
  const Value* v = Get(key);
  if (v == nullptr) {
    const toml::source_location loc = table_.location();
    issues_.AddMissing(loc.line(), loc.column(),
                       (label_.empty() ? "" : label_ + ": ") + "missing key " + Quote(key) + " (" +
                           std::string(example) + ")");
  }
  return v;
}

std::string Table::Path(std::string_view sub) const {
  return label_.empty() ? std::string(sub) : label_ + "." + std::string(sub);
}

void Table::Expect(const Value& v, std::string_view sub, std::string_view form) {
  issues_.Add(v, Path(sub) + ": expected " + std::string(form) + ", got " + Describe(v));
}

void Table::Fail(const Value& at, std::string_view sub, std::string_view text) {
  issues_.Add(at, Path(sub) + ": " + std::string(text));
}

uint32_t Table::line() const { return table_.location().line(); }

}  // namespace benchlab::config
