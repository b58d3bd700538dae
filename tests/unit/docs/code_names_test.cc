// Every name in backticks in README.md and docs/*.md that looks like code is found in the code:
// CamelCase (`SysEnv`, `kMaxTomlBytes`), snake_case (`foreign_cpu`, `PR_SET_PDEATHSIG`) and
// scoped names (`AgentDaemon::kMaxGrpcThreads`), alone in their span or as parts of a dotted key
// (`limits.max_body`), with or without a trailing "()"; a file's name (`lib_test.sh`) is found
// when the file exists. "The code" is every .h, .cc, .proto, .js, .mjs, .json, .toml, .sh, .py,
// .service, .cmake, CMakeLists.txt and Makefile of the repository, comments left out
// (markdown.h, ReadCode). Names that are not benchlab's code (another project's API, a kernel
// setting) are listed, each with its reason, in tests/unit/docs/not_code.txt.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/docs/markdown.h"

namespace benchlab::docs {
namespace {

const char kAllowList[] = "tests/unit/docs/not_code.txt";

// CamelCase with a hump (a lowercase letter or digit before an uppercase one, and an uppercase
// letter before a lowercase one), or an underscore between two letters or digits.
bool LooksLikeCode(const std::string& word) {
  static const std::regex camel_hump("[a-z0-9][A-Z]");
  static const std::regex camel_word("[A-Z][a-z]");
  static const std::regex snake("[A-Za-z0-9]_[A-Za-z0-9]");
  return std::regex_search(word, snake) ||
         (std::regex_search(word, camel_hump) && std::regex_search(word, camel_word));
}

// A name that may be checked: identifiers joined by "::" or ".", with an optional "()".
bool IsName(const std::string& span) {
  static const std::regex name(R"(^[A-Za-z_]\w*(?:(?:::|\.)~?[A-Za-z_]\w*)*(?:\(\))?$)");
  return std::regex_match(span, name);
}

std::vector<std::string> Split(const std::string& s, const std::string& sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = s.find(sep, start)) != std::string::npos; start = at + sep.size()) {
    parts.push_back(s.substr(start, at - start));
  }
  parts.push_back(s.substr(start));
  return parts;
}

// The words of a span that must be found, and how: a scoped name as a whole (all its parts in
// one file), else each part of a dotted key that looks like code. A file's name
// (`frameworks_contract_test.sh`) is found when a file of that name exists, else as the names
// its stem holds.
struct Wanted {
  std::string word;
  std::vector<std::string> parts;  // all in one file
  std::string file_name;           // or a file of this name
};

bool HasFileExtension(const std::string& span) {
  static const std::set<std::string> extensions = {
      "cc", "h",   "sh",   "py",    "js",    "mjs",     "json", "toml", "md", "txt",
      "in", "css", "html", "proto", "cmake", "service", "conf", "pem",  "db", "csv"};
  const size_t dot = span.rfind('.');
  return dot != std::string::npos && extensions.count(span.substr(dot + 1)) != 0;
}

std::vector<Wanted> WantedNames(std::string span) {
  std::vector<Wanted> wanted;
  if (!IsName(span)) return wanted;
  if (HasFileExtension(span) && span.find("::") == std::string::npos) {
    const std::string stem = span.substr(0, span.rfind('.'));
    for (const std::string& part : Split(stem, ".")) {
      if (LooksLikeCode(part)) wanted.push_back({part, {part}, span});
    }
    return wanted;
  }
  if (span.ends_with("()")) span.resize(span.size() - 2);
  if (span.find("::") != std::string::npos) {
    std::vector<std::string> parts = Split(span, "::");
    for (std::string& p : parts) {
      if (p.starts_with("~")) p.erase(0, 1);
    }
    wanted.push_back({span, parts, ""});
    return wanted;
  }
  for (const std::string& part : Split(span, ".")) {
    if (LooksLikeCode(part)) wanted.push_back({part, {part}, ""});
  }
  return wanted;
}

// not_code.txt: one word a line, then "#" and why it is not benchlab's code.
struct AllowList {
  std::map<std::string, int> words;  // word -> line
  std::vector<std::string> malformed;
};

AllowList ReadAllowList() {
  AllowList list;
  const std::vector<std::string> lines = SplitLines(ReadSource(kAllowList));
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string line = Trim(lines[i]);
    if (line.empty() || line.starts_with("#")) continue;
    const size_t hash = line.find('#');
    const std::string word = Trim(line.substr(0, hash));
    const std::string why = hash == std::string::npos ? "" : Trim(line.substr(hash + 1));
    const std::string where = std::string(kAllowList) + ":" + std::to_string(i + 1);
    if (word.empty() || word.find(' ') != std::string::npos || why.empty()) {
      list.malformed.push_back(where + ": expected \"WORD  # why it is not code\", got \"" + line +
                               "\"");
      continue;
    }
    list.words[word] = static_cast<int>(i) + 1;
  }
  return list;
}

struct Finding {
  std::string word;
  std::string where;  // file:line
};

// Every wanted name of the docs, with where it stands.
std::vector<Finding> DocumentedNames(std::vector<Wanted>* wanted_out = nullptr) {
  std::vector<Finding> found;
  for (const std::string& file : DocFiles()) {
    for (const Span& span : InlineSpans(SplitLines(ReadSource(file)))) {
      for (Wanted& w : WantedNames(span.text)) {
        found.push_back({w.word, file + ":" + std::to_string(span.line)});
        if (wanted_out != nullptr) wanted_out->push_back(std::move(w));
      }
    }
  }
  return found;
}

bool InCode(const Wanted& w, const Code& code) {
  if (!w.file_name.empty() && code.file_names.count(w.file_name) != 0) return true;
  for (const auto& [file, identifiers] : code.identifiers) {
    bool all = true;
    for (const std::string& part : w.parts) all = all && identifiers.count(part) != 0;
    if (all) return true;
  }
  return false;
}

TEST(CodeNamesTest, EveryCodeNameInTheDocsIsInTheCode) {
  const Code code = ReadCode();
  ASSERT_GT(code.identifiers.size(), 100u) << "found few code files under " << SourceDir().string();
  const AllowList allow = ReadAllowList();
  std::vector<Wanted> wanted;
  const std::vector<Finding> names = DocumentedNames(&wanted);
  ASSERT_FALSE(names.empty());
  std::string missing;
  for (size_t i = 0; i < names.size(); ++i) {
    if (allow.words.count(names[i].word) != 0 || InCode(wanted[i], code)) continue;
    missing += "\n  " + names[i].where + ": `" + names[i].word + "`";
  }
  EXPECT_TRUE(missing.empty())
      << "names in backticks that no code file holds (fix the doc when the name is stale; list "
      << "it in " << kAllowList
      << " with the reason only when it is not benchlab's code):" << missing;
}

// The allow-list stays short and honest: each entry has its reason, is still used by a doc, and
// is not in fact in the code.
TEST(CodeNamesTest, TheAllowListHoldsOnlyUsedWordsThatAreNotCode) {
  const AllowList allow = ReadAllowList();
  for (const std::string& bad : allow.malformed) ADD_FAILURE() << bad;
  std::vector<Wanted> wanted;
  const std::vector<Finding> names = DocumentedNames(&wanted);
  const Code code = ReadCode();
  for (const auto& [word, line] : allow.words) {
    const std::string where = std::string(kAllowList) + ":" + std::to_string(line);
    bool used = false;
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i].word != word) continue;
      used = true;
      EXPECT_FALSE(InCode(wanted[i], code))
          << where << ": `" << word << "` is in the code after all: remove it from the list";
    }
    EXPECT_TRUE(used) << where << ": no doc names `" << word << "` any more: remove it";
  }
}

// The checker itself: spans that are names and spans that are not.
TEST(CodeNamesTest, WhatCountsAsACodeName) {
  auto words = [](const std::string& span) {
    std::vector<std::string> out;
    for (const Wanted& w : WantedNames(span)) out.push_back(w.word);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(words("SysEnv"), V{"SysEnv"});
  EXPECT_EQ(words("kMaxTomlBytes"), V{"kMaxTomlBytes"});
  EXPECT_EQ(words("foreign_cpu"), V{"foreign_cpu"});
  EXPECT_EQ(words("PR_SET_PDEATHSIG"), V{"PR_SET_PDEATHSIG"});
  EXPECT_EQ(words("limits.max_body"), V{"max_body"});
  EXPECT_EQ(words("set_max_body()"), V{"set_max_body"});
  EXPECT_EQ(words("AgentDaemon::kMaxGrpcThreads"), V{"AgentDaemon::kMaxGrpcThreads"});
  EXPECT_EQ(words("valid"), V{});
  EXPECT_EQ(words("Node"), V{});
  EXPECT_EQ(words("GET"), V{});
  EXPECT_EQ(words("foreign_cpu: server host 212% > 25%"), V{});
  EXPECT_EQ(words("coordinator/server/window_runner.cc"), V{});
  EXPECT_EQ(words("frameworks_contract_test.sh"), V{"frameworks_contract_test"});
  EXPECT_EQ(WantedNames("frameworks_contract_test.sh")[0].file_name, "frameworks_contract_test.sh");

  const std::vector<Span> spans =
      InlineSpans({"a `one` and `two", "lines` then ``x ` y``", "", "`open", "", "`three`"});
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0].text, "one");
  EXPECT_EQ(spans[1].text, "two lines");
  EXPECT_EQ(spans[1].line, 1);
  EXPECT_EQ(spans[2].text, "x ` y");
  EXPECT_EQ(spans[3].text, "three");
  EXPECT_EQ(spans[3].line, 6);

  std::set<std::string> ids;
  AddIdentifiers(WithoutComments("int a; // Stale\nauto s = \"// kept\"; /* Gone */ R\"x(b \" "
                                 "// raw)x\" c",
                                 CommentStyle::kSlash),
                 ids);
  EXPECT_EQ(ids,
            (std::set<std::string>{"int", "a", "auto", "s", "kept", "R", "x", "b", "raw", "c"}));
  ids.clear();
  AddIdentifiers(WithoutComments("key = \"a#b\" # Stale\n# Gone\nx=$#", CommentStyle::kHash), ids);
  EXPECT_EQ(ids, (std::set<std::string>{"key", "a", "b", "x"}));
}

}  // namespace
}  // namespace benchlab::docs
