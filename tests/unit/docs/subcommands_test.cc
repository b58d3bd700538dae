// docs/architecture.md lists the `benchlab` command's subcommands ("- **CLI** (...), N
// subcommands:" and one bullet each): the list, its count and each command's own subcommands are
// those the CLI registers (cli/commands.h, AddCommands, as cli/main.cc builds the command).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "tests/unit/docs/markdown.h"

namespace benchlab::docs {
namespace {

// The CLI's subcommands, by name, each with the names of its own subcommands.
std::map<std::string, std::set<std::string>> RegisteredCommands() {
  CLI::App app{"benchlab"};
  AddCommands(app);
  std::map<std::string, std::set<std::string>> commands;
  for (CLI::App* sub : app.get_subcommands({})) {
    std::set<std::string>& nested = commands[sub->get_name()];
    for (CLI::App* inner : sub->get_subcommands({})) nested.insert(inner->get_name());
  }
  return commands;
}

int NumberWord(const std::string& word) {
  static const std::vector<std::string> words = {
      "zero",        "one",        "two",      "three",      "four",       "five",
      "six",         "seven",      "eight",    "nine",       "ten",        "eleven",
      "twelve",      "thirteen",   "fourteen", "fifteen",    "sixteen",    "seventeen",
      "eighteen",    "nineteen",   "twenty",   "twenty-one", "twenty-two", "twenty-three",
      "twenty-four", "twenty-five"};
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == word) return static_cast<int>(i);
  }
  return -1;
}

// architecture.md's CLI bullet: the number it states and, for each nested bullet, the commands
// it names (the backticked words before its first ": ") with the bullet's whole text.
struct DocumentedCommands {
  int stated = -1;
  std::string stated_word;
  std::map<std::string, std::string> bullets;  // command -> its bullet's text
  int line = 0;
};

DocumentedCommands ReadArchitecture() {
  DocumentedCommands doc;
  const std::vector<std::string> lines = SplitLines(ReadSource("docs/architecture.md"));
  size_t i = 0;
  for (; i < lines.size(); ++i) {
    if (lines[i].starts_with("- **CLI**")) break;
  }
  if (i == lines.size()) return doc;
  doc.line = static_cast<int>(i) + 1;
  const std::string& head = lines[i];
  size_t at = head.find(" subcommands:");
  if (at != std::string::npos) {
    size_t start = head.rfind(' ', at - 1);
    doc.stated_word = head.substr(start + 1, at - start - 1);
    doc.stated = NumberWord(doc.stated_word);
  }
  std::vector<std::string> bullet_names;
  std::string bullet_text;
  auto close = [&] {
    for (const std::string& name : bullet_names) doc.bullets[name] = bullet_text;
    bullet_names.clear();
    bullet_text.clear();
  };
  for (++i; i < lines.size() && lines[i].starts_with("  "); ++i) {
    const std::string& line = lines[i];
    if (line.starts_with("  - ")) {
      close();
      const std::string item = line.substr(4);
      const size_t colon = item.find(": ");
      for (const std::string& name : Backticked(item.substr(0, colon))) {
        bullet_names.push_back(name);
      }
    }
    bullet_text += line + "\n";
  }
  close();
  return doc;
}

TEST(SubcommandsTest, ArchitectureListsExactlyTheRegisteredSubcommands) {
  const auto registered = RegisteredCommands();
  const DocumentedCommands doc = ReadArchitecture();
  ASSERT_GT(doc.line, 0) << "docs/architecture.md: no \"- **CLI**\" bullet listing subcommands";
  ASSERT_FALSE(registered.empty());

  std::string wrong;
  for (const auto& [name, nested] : registered) {
    if (doc.bullets.count(name) == 0) {
      wrong += "\n  `" + name + "` is registered (cli/commands.cc) but not listed";
    }
  }
  for (const auto& [name, text] : doc.bullets) {
    if (registered.count(name) == 0) {
      wrong += "\n  `" + name + "` is listed but no such subcommand is registered";
    }
  }
  EXPECT_TRUE(wrong.empty()) << "docs/architecture.md:" << doc.line << ": the CLI's subcommands"
                             << wrong;
  EXPECT_EQ(doc.stated, static_cast<int>(registered.size()))
      << "docs/architecture.md:" << doc.line << ": says \"" << doc.stated_word
      << " subcommands\"; cli/commands.cc registers " << registered.size();
}

TEST(SubcommandsTest, EachBulletNamesItsCommandsOwnSubcommands) {
  const DocumentedCommands doc = ReadArchitecture();
  for (const auto& [name, nested] : RegisteredCommands()) {
    auto bullet = doc.bullets.find(name);
    if (bullet == doc.bullets.end()) continue;  // reported by the test above
    const std::vector<std::string> named = Backticked(bullet->second);
    for (const std::string& inner : nested) {
      EXPECT_TRUE(std::find(named.begin(), named.end(), inner) != named.end())
          << "docs/architecture.md: the bullet of `" << name << "` does not name its subcommand `"
          << inner << "`:\n"
          << bullet->second;
    }
  }
}

// "one `cli/cmd_<name>.cc` each"
TEST(SubcommandsTest, EachSubcommandHasItsOwnSourceFile) {
  for (const auto& [name, nested] : RegisteredCommands()) {
    EXPECT_TRUE(std::filesystem::exists(SourceDir() / "cli" / ("cmd_" + name + ".cc")))
        << "docs/architecture.md says each subcommand lives in cli/cmd_<name>.cc; there is no "
        << "cli/cmd_" << name << ".cc";
  }
}

}  // namespace
}  // namespace benchlab::docs
