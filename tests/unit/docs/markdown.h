// Reading benchlab's own Markdown (README.md, docs/*.md) and sources for the tests that keep the
// docs true: inline code spans with their lines, fenced blocks, sections and key tables, and the
// identifiers the code holds.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace benchlab::docs {

// The repository's root (the source tree the test was built from).
inline std::filesystem::path SourceDir() { return BENCHLAB_SOURCE_DIR; }

// A file under the source tree; a missing file fails the test that reads it.
inline std::string ReadSource(const std::string& relative) {
  std::ifstream in(SourceDir() / relative, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << (SourceDir() / relative).string();
    return "";
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// README.md and every docs/*.md (not docs/results/, which records measurements), relative paths.
inline std::vector<std::string> DocFiles() {
  std::vector<std::string> files = {"README.md"};
  for (const auto& entry : std::filesystem::directory_iterator(SourceDir() / "docs")) {
    if (entry.is_regular_file() && entry.path().extension() == ".md") {
      files.push_back("docs/" + entry.path().filename().string());
    }
  }
  std::sort(files.begin() + 1, files.end());
  return files;
}

inline bool IsFence(const std::string& line) { return Trim(line).starts_with("```"); }

// A ``` block: its info string ("toml", "sh", "") and its lines, the first at `line` (1-based).
struct Fenced {
  std::string info;
  int line = 0;
  std::vector<std::string> lines;
  std::string Text() const {
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    return text;
  }
};

inline std::vector<Fenced> FencedBlocks(const std::vector<std::string>& lines) {
  std::vector<Fenced> blocks;
  Fenced* open = nullptr;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (IsFence(lines[i])) {
      if (open == nullptr) {
        blocks.push_back({Trim(Trim(lines[i]).substr(3)), static_cast<int>(i) + 2, {}});
        open = &blocks.back();
      } else {
        open = nullptr;
      }
    } else if (open != nullptr) {
      open->lines.push_back(lines[i]);
    }
  }
  return blocks;
}

// An inline code span and the line (1-based) where it starts.
struct Span {
  std::string text;
  int line = 0;
};

// The inline code spans outside fenced blocks, as CommonMark reads them: a run of n backticks
// opens a span that the next run of exactly n closes, within one paragraph (a span may cross a
// line break, which reads as a space).
inline std::vector<Span> InlineSpans(const std::vector<std::string>& lines) {
  std::vector<Span> spans;
  // The paragraph being read: its text (line breaks kept) and each character's line.
  std::string text;
  std::vector<int> line_of;
  auto flush = [&] {
    size_t i = 0;
    while (i < text.size()) {
      if (text[i] != '`') {
        ++i;
        continue;
      }
      size_t run = text.find_first_not_of('`', i) == std::string::npos
                       ? text.size() - i
                       : text.find_first_not_of('`', i) - i;
      size_t search = i + run;
      size_t close = std::string::npos;
      while (search < text.size()) {
        size_t at = text.find('`', search);
        if (at == std::string::npos) break;
        size_t end = text.find_first_not_of('`', at);
        size_t len = (end == std::string::npos ? text.size() : end) - at;
        if (len == run) {
          close = at;
          break;
        }
        search = at + len;
      }
      if (close == std::string::npos) {
        i += run;  // a literal run of backticks
        continue;
      }
      std::string content = text.substr(i + run, close - i - run);
      std::replace(content.begin(), content.end(), '\n', ' ');
      if (content.size() >= 2 && content.front() == ' ' && content.back() == ' ') {
        content = content.substr(1, content.size() - 2);
      }
      spans.push_back({content, line_of[i]});
      i = close + run;
    }
    text.clear();
    line_of.clear();
  };
  bool fenced = false;
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string& line = lines[n];
    if (IsFence(line)) {
      fenced = !fenced;
      flush();
      continue;
    }
    if (fenced) continue;
    if (Trim(line).empty()) {
      flush();
      continue;
    }
    for (char c : line) {
      text += c;
      line_of.push_back(static_cast<int>(n) + 1);
    }
    text += '\n';
    line_of.push_back(static_cast<int>(n) + 1);
  }
  flush();
  return spans;
}

// The cells of a Markdown table row ("| a | b |" gives {"a", "b"}); empty for other lines.
inline std::vector<std::string> TableCells(const std::string& line) {
  std::string t = Trim(line);
  if (t.size() < 2 || t.front() != '|') return {};
  std::vector<std::string> cells;
  std::string cell;
  bool code = false;
  for (size_t i = 1; i < t.size(); ++i) {
    if (t[i] == '`') code = !code;
    if (t[i] == '|' && !code && t[i - 1] != '\\') {
      cells.push_back(Trim(cell));
      cell.clear();
    } else {
      cell += t[i];
    }
  }
  return cells;
}

// The text of each backticked span in `s`, on one line.
inline std::vector<std::string> Backticked(const std::string& s) {
  std::vector<std::string> out;
  for (const Span& span : InlineSpans({s})) out.push_back(span.text);
  return out;
}

inline bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
inline bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Identifiers of a source text, comments left out: // and /* */ for C-like sources (strings and
// C++ raw strings are kept, since names in them are names the code uses), # to the end of the
// line for shell, TOML, CMake, Make, Python and systemd units, none for JSON.
enum class CommentStyle { kSlash, kHash, kNone };

inline void AddIdentifiers(std::string_view text, std::set<std::string>& out) {
  for (size_t i = 0; i < text.size();) {
    if (IsIdentStart(text[i]) && (i == 0 || !IsIdentChar(text[i - 1]))) {
      size_t j = i;
      while (j < text.size() && IsIdentChar(text[j])) ++j;
      out.emplace(text.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
}

inline std::string WithoutComments(const std::string& text, CommentStyle style) {
  if (style == CommentStyle::kNone) return text;
  std::string code;
  code.reserve(text.size());
  size_t i = 0;
  const size_t n = text.size();
  if (style == CommentStyle::kHash) {
    char quote = 0;
    while (i < n) {
      char c = text[i];
      if (c == '\n') quote = 0;
      if (quote != 0) {
        if (c == '\\' && i + 1 < n)
          code += text[i++];
        else if (c == quote)
          quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(text[i - 1])))) {
        while (i < n && text[i] != '\n') ++i;
        continue;
      }
      code += text[i++];
    }
    return code;
  }
  while (i < n) {
    char c = text[i];
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? n : end + 2;
      code += ' ';
    } else if (c == 'R' && i + 1 < n && text[i + 1] == '"' &&
               (i == 0 || !IsIdentChar(text[i - 1]))) {
      size_t open = text.find('(', i + 2);
      if (open == std::string::npos) {
        code += text[i++];
        continue;
      }
      const std::string close = ")" + text.substr(i + 2, open - i - 2) + "\"";
      size_t end = text.find(close, open);
      end = end == std::string::npos ? n : end + close.size();
      code.append(text, i, end - i);
      i = end;
    } else if (c == '"' || c == '\'' || c == '`') {
      // A string (a JavaScript template literal may span lines; the others end at the line).
      size_t j = i + 1;
      while (j < n && text[j] != c && (c == '`' || text[j] != '\n')) j += text[j] == '\\' ? 2 : 1;
      j = std::min(n, j + 1);
      code.append(text, i, j - i);
      i = j;
    } else {
      code += c;
      ++i;
    }
  }
  return code;
}

// Which files count as benchlab's code, and how their comments are written.
inline bool CodeFile(const std::filesystem::path& path, CommentStyle& style) {
  const std::string name = path.filename().string();
  const std::string ext = path.extension().string();
  if (name == "package-lock.json") return false;  // npm's record of other projects' names
  static const std::set<std::string> slash = {".h", ".cc", ".proto", ".js", ".mjs"};
  static const std::set<std::string> hash = {".toml", ".sh", ".py", ".service", ".cmake"};
  if (slash.count(ext) != 0) {
    style = CommentStyle::kSlash;
  } else if (hash.count(ext) != 0 || name == "CMakeLists.txt" || name == "Makefile") {
    style = CommentStyle::kHash;
  } else if (ext == ".json") {
    style = CommentStyle::kNone;
  } else {
    return false;
  }
  return true;
}

// The repository as the docs may name it: the identifiers of each code file, comments left out,
// and the name of every file. Not searched: build trees (build*/ at the top), .git,
// node_modules and test artifacts.
struct Code {
  std::map<std::string, std::set<std::string>> identifiers;  // path -> identifiers
  std::set<std::string> file_names;                          // "lib.sh", "hello.toml"
};

inline Code ReadCode() {
  namespace fs = std::filesystem;
  Code code;
  const fs::path root = SourceDir();
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    if (it->is_directory()) {
      if (name == ".git" || name == "node_modules" || name == "test-artifacts" ||
          (it.depth() == 0 && name.starts_with("build"))) {
        it.disable_recursion_pending();
      }
      continue;
    }
    if (!it->is_regular_file()) continue;
    code.file_names.insert(name);
    CommentStyle style;
    if (!CodeFile(p, style)) continue;
    std::ifstream in(p, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    AddIdentifiers(WithoutComments(text.str(), style),
                   code.identifiers[fs::relative(p, root).generic_string()]);
  }
  return code;
}

}  // namespace benchlab::docs
