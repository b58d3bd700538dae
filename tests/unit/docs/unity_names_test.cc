// A function in a source's anonymous namespace has a name no other source or header of its part
// declares (docs/architecture.md, "Building"). Each part compiles as unity batches of several
// sources in one translation unit: two file-local functions of one name and different parameters
// are then overloads of each other, and a call meant for one may bind to the other without a word
// from the compiler (profile_report.cc's WindowName(const WindowRow&) once took the place of the
// report's, and the Markdown report named its invalid windows in the profile's words). Which
// sources share a batch changes as files are added, so the rule holds for the whole part.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/docs/markdown.h"

namespace benchlab::docs {
namespace {

// The parts, as CMakeLists.txt's benchlab_part calls name them: each directory alone.
constexpr const char* kPartDirs[] = {
    "common",   "loadgen", "agent", "agent/server", "tls", "coordinator", "coordinator/server",
    "analysis", "rpc",     "cli"};

struct Names {
  std::set<std::string> file_local;  // defined in `namespace {`
  std::set<std::string> other;       // declared or defined anywhere else in the file
};

// Function names at the start of a line (namespace scope, as .clang-format lays benchlab's code
// out), inside or outside an anonymous namespace.
Names FunctionNames(const std::string& text) {
  static const std::regex kFunction(
      R"(^(?:template <[^>]*>\s*)?(?:(?:inline|static|constexpr|const|auto)\s+|[\w:]+(?:<[^;{}()]*>)?[\s*&]+)+([A-Za-z_]\w*)\s*\()");
  static const std::set<std::string> kNotFunctions = {"if",     "for",  "while",  "switch",
                                                      "return", "TEST", "TEST_F", "static_assert"};
  Names names;
  bool anonymous = false;
  for (const std::string& line : SplitLines(text)) {
    if (line.starts_with("namespace {")) {
      anonymous = true;
      continue;
    }
    if (anonymous && line == "}  // namespace") {
      anonymous = false;
      continue;
    }
    std::smatch m;
    if (!std::regex_search(line, m, kFunction) || kNotFunctions.contains(m[1])) continue;
    (anonymous ? names.file_local : names.other).insert(m[1]);
  }
  return names;
}

std::vector<std::string> FilesOf(const std::string& dir, const std::string& extension) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(SourceDir() / dir)) {
    if (entry.path().extension() == extension) {
      files.push_back(std::filesystem::relative(entry.path(), SourceDir()).string());
    }
  }
  return files;
}

TEST(UnityNamesTest, TheScanFindsWhatItLooksFor) {
  const Names names = FunctionNames(
      "namespace benchlab {\nnamespace {\n\nstd::string Pct(double f) {\n  return Helper(f);\n}\n"
      "template <typename T>\nbool ParseNumber(std::string_view s, T& out) {\n"
      "const char* Words(ComparisonVerdict v) {\n}  // namespace\n\n"
      "Result<int> Store::Open(const std::string& path) {\nstatic_assert(kA == kB);\n"
      "std::string Describe(const Window& w) {\n");
  EXPECT_EQ(names.file_local, (std::set<std::string>{"Pct", "ParseNumber", "Words"}));
  // A member function cannot be taken for a free one, so Store::Open is not counted.
  EXPECT_EQ(names.other, (std::set<std::string>{"Describe"}));
}

TEST(UnityNamesTest, AFileLocalFunctionIsTheOnlyOneOfItsNameInItsPart) {
  for (const char* dir : kPartDirs) {
    std::map<std::string, Names> sources;
    for (const std::string& file : FilesOf(dir, ".cc"))
      sources[file] = FunctionNames(ReadSource(file));
    std::set<std::string> in_headers;
    for (const std::string& file : FilesOf(dir, ".h")) {
      const Names names = FunctionNames(ReadSource(file));
      in_headers.insert(names.file_local.begin(), names.file_local.end());
      in_headers.insert(names.other.begin(), names.other.end());
    }
    for (const auto& [file, names] : sources) {
      for (const std::string& name : names.file_local) {
        if (in_headers.contains(name)) {
          ADD_FAILURE() << file << ": " << name << " is also declared in a header of " << dir;
        }
        for (const auto& [other, other_names] : sources) {
          if (other != file &&
              (other_names.file_local.contains(name) || other_names.other.contains(name))) {
            ADD_FAILURE() << file << ": " << name << " is also a function of " << other
                          << ", a source of the same unity-built part";
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace benchlab::docs
