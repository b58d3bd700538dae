// Shared by benchlab's TOML files (campaigns, agent configurations): reads a parsed TOML document
// key by key and collects every problem as a one-line "file:line: key: expected ..., got ..."
// message, so the schema code in campaign.cc reads as a list of keys and their forms. Not
// thread-safe; one instance per parse.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <toml.hpp>
#include <utility>
#include <vector>

#include "common/status.h"

namespace benchlab::config {

using Value = toml::value;

// Parses TOML text; a syntax error becomes InvalidArgument
// "file:line: syntax error: <what toml11 said>" on one line.
Result<Value> ParseToml(const std::string& text, const std::string& source_name);

// toml11's parser recurses once per level of nesting, so a deep enough document (20 KB of
// `[[[[...`) overflows the stack; and it scans back to the start of the line for every value,
// so one line of 100,000 numbers (689 KB) takes minutes. ParseToml therefore first scans the
// text, without recursion, and refuses it when it is longer than kMaxTomlBytes, when a line is
// longer than kMaxTomlLineBytes ("FILE:LINE: line of N bytes, over the limit of 16384"), or when
// any value nests deeper than kMaxTomlDepth levels, counting arrays, inline tables and each
// part of a dotted key or table header ("FILE:LINE: nesting deeper than 32 levels ..."). A
// campaign or agent configuration needs a few kilobytes and a handful of levels.
inline constexpr int kMaxTomlDepth = 32;
inline constexpr size_t kMaxTomlLineBytes = 16 * 1024;
inline constexpr size_t kMaxTomlBytes = 4 * 1024 * 1024;
Status CheckTomlNesting(std::string_view text, const std::string& source_name,
                        int max_depth = kMaxTomlDepth);

// Turns toml11's multi-line syntax error report into one line, citing the last source line the
// report shows (for "defined twice" that is the second definition); fallback_line when it shows
// none.
std::string OneLineSyntaxError(std::string_view what, const std::string& source_name,
                               uint32_t fallback_line);

// How a value reads after "got": the source text as written when it sits on one line (so
// 99999999999999999999 is shown as typed, not as toml11's saturated integer), else a short
// rendering ("a table", "[1, 2]").
std::string Describe(const Value& v);

// The table of the array of tables `array` (a [[target]], a [[scenario]]) whose `name` is
// `name`, or nullptr when `doc` has none.
const Value* NamedTable(const Value& doc, const char* array, const std::string& name);

// Problems found in one file. The earliest by position is reported, since that is the one a
// person reading top to bottom fixes first; a missing key only when nothing else is wrong, since
// a missing key is most often a misspelt one, reported as unknown where it stands.
class Issues {
 public:
  explicit Issues(std::string source_name) : source_name_(std::move(source_name)) {}

  // Records "file:line: text" at the value's line.
  void Add(const Value& at, std::string text);
  // Records a missing key of the table at line:column.
  void AddMissing(uint32_t line, uint32_t column, std::string text);
  bool empty() const { return issues_.empty(); }
  // InvalidArgument with the problem to report first; Ok when there is none.
  Status First() const;

 private:
  // A value's issue keeps the value and its byte offset: its line number, a scan from the start
  // of the text, is found only for the issue reported.
  struct Issue {
    bool missing;
    uint32_t line;  // missing keys: the table's line; values: 0 until reported
    uint32_t column;
    size_t offset;    // values: byte offset in the text
    const Value* at;  // values; nullptr for missing keys
    std::string text;
  };
  std::string source_name_;
  std::vector<Issue> issues_;
};

// One table of the file, known by its dotted label (empty for the root, "matrix",
// `target "nginx"`, `scenario "hello".expect`). Unknown keys are reported when it is built, so a
// misspelt key never passes silently.
class Table {
 public:
  Table(const Value& table, std::string label, std::initializer_list<std::string_view> known,
        Issues& issues);
  // As above, for a key list built at run time (the [gates] keys, coordinator/gate_table.h).
  Table(const Value& table, std::string label, std::span<const std::string_view> known,
        Issues& issues);

  // The value under key, or nullptr when absent.
  const Value* Get(std::string_view key) const;
  // As Get, but an absent key is reported as missing, citing the table's own line; `example`
  // shows what to write, e.g. "a name such as \"nginx\"".
  const Value* Require(std::string_view key, std::string_view example);

  // The dotted path of `sub` in this table; `sub` is a known key or one built from it, such as
  // "connections[1]" or "env." + KeyForPath(name), and is used as given.
  std::string Path(std::string_view sub) const;
  // Records "<path>: expected <form>, got <Describe(v)>".
  void Expect(const Value& v, std::string_view sub, std::string_view form);
  // Records "<path>: <text>".
  void Fail(const Value& at, std::string_view sub, std::string_view text);

  const Value& value() const { return table_; }
  const std::string& label() const { return label_; }
  uint32_t line() const;

 private:
  const Value& table_;
  std::string label_;
  Issues& issues_;
};

// The entries of a TOML table in the order the file writes them (toml11 keeps tables unordered).
std::vector<std::pair<std::string, const Value*>> EntriesInFileOrder(const Value& table);

// A key as it appears in a dotted path: bare when it can be, else quoted.
std::string KeyForPath(std::string_view key);

// `text` in double quotes, with quotes, backslashes and control characters escaped.
std::string Quote(std::string_view text);

}  // namespace benchlab::config
