// Every class and struct benchlab's headers declare at namespace scope has one name in the whole
// program: two headers that define `benchlab::X` differently break the one-definition rule in any
// binary that links both (the linker keeps one copy of X's inline functions and template
// instances, such as std::vector<X>'s, whatever the other's layout). The `benchlab` binary links
// every library, so the rule spans them all.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "tests/unit/docs/markdown.h"

namespace benchlab::docs {
namespace {

// The libraries that make up the binary (CMakeLists.txt's benchlab_part calls).
constexpr const char* kLibraryDirs[] = {"agent",       "analysis", "cli", "common",
                                        "coordinator", "loadgen",  "rpc", "tls"};

// "struct Name {" or "class Name final : Base {" at the start of a line: namespace scope, as
// .clang-format lays benchlab's code out (namespaces are not indented).
std::map<std::string, std::vector<std::string>> DefinitionsIn(const std::string& text,
                                                              const std::string& file) {
  static const std::regex kDefinition(R"(^(?:struct|class)\s+([A-Za-z_]\w*)(?:\s+final)?\s*[:{])");
  std::map<std::string, std::vector<std::string>> out;
  const std::vector<std::string> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_search(lines[i], m, kDefinition)) {
      out[m[1]].push_back(file + ":" + std::to_string(i + 1));
    }
  }
  return out;
}

std::map<std::string, std::vector<std::string>> HeaderDefinitions() {
  std::map<std::string, std::vector<std::string>> all;
  for (const char* dir : kLibraryDirs) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(SourceDir() / dir)) {
      if (entry.path().extension() != ".h") continue;
      const std::string relative = std::filesystem::relative(entry.path(), SourceDir()).string();
      for (auto& [name, places] : DefinitionsIn(ReadSource(relative), relative)) {
        auto& into = all[name];
        into.insert(into.end(), places.begin(), places.end());
      }
    }
  }
  return all;
}

TEST(OneDefinitionTest, TheScanFindsWhatItLooksFor) {
  const auto found = DefinitionsIn(
      "struct Plain {\nclass Final final : public Base {\n  struct Nested {\nstruct Declared;\n",
      "x.h");
  EXPECT_EQ(found.count("Plain"), 1u);
  EXPECT_EQ(found.count("Final"), 1u);
  EXPECT_EQ(found.count("Nested"), 0u);    // a member type
  EXPECT_EQ(found.count("Declared"), 0u);  // a declaration defines nothing
  // benchlab's own headers hold hundreds: an empty scan would pass the test below vacuously.
  EXPECT_GT(HeaderDefinitions().size(), 100u);
}

TEST(OneDefinitionTest, NoTwoHeadersDefineAClassOfTheSameName) {
  for (const auto& [name, places] : HeaderDefinitions()) {
    if (places.size() < 2) continue;
    std::string where;
    for (const auto& p : places) where += "\n  " + p;
    ADD_FAILURE() << "benchlab::" << name << " is defined " << places.size()
                  << " times; give each its own name:" << where;
  }
}

}  // namespace
}  // namespace benchlab::docs
