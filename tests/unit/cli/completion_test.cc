// `benchlab completion`: the bash script loaded in a real bash and asked to complete, as the shell
// asks it on Tab; fish's and zsh's scripts from the same definitions (cli/completion.h).
#include "cli/completion.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

// The benchlab command with every subcommand, as RunBenchlab builds it.
class CompletionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AddCommands(app_);
    app_.set_version_flag("--version", "benchlab test");
    app_.add_option("--log-format", log_format_, "text or json");
    dir_ = fs::path(::testing::TempDir()) / ("benchlab_completion_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    script_ = (dir_ / "benchlab.bash").string();
    std::ofstream(script_) << CompletionScript(app_, "bash");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // What bash offers for the command line `words` (the last word the one being completed).
  std::set<std::string> Complete(const std::vector<std::string>& words) {
    std::string array;
    for (const std::string& w : words) array += " '" + w + "'";
    const std::string out = (dir_ / "out").string();
    const std::string command = "bash --norc --noprofile -c 'source \"$0\"; COMP_WORDS=(benchlab" +
                                Escape(array) + "); COMP_CWORD=" + std::to_string(words.size()) +
                                "; _benchlab; printf \"%s\\n\" \"${COMPREPLY[@]}\"' " + script_ +
                                " > " + out + " 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    std::ifstream in(out);
    std::set<std::string> offered;
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) offered.insert(line);
    }
    return offered;
  }

  // `text` inside the single-quoted `bash -c` program: each ' closes, escapes and reopens.
  static std::string Escape(const std::string& text) {
    std::string out;
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out;
  }

  CLI::App app_{"benchlab"};
  std::string log_format_;
  fs::path dir_;
  std::string script_;
};

TEST_F(CompletionTest, BashCompletesSubcommandsFromTheirFirstLetters) {
  EXPECT_EQ(Complete({"re"}),
            (std::set<std::string>{"rerun", "report", "regressions", "remeasure"}));
  EXPECT_EQ(Complete({"ag"}), (std::set<std::string>{"agent", "agents"}));
  // A top-level option and its value come before the subcommand.
  EXPECT_EQ(Complete({"--log-format", "json", "comp"}),
            (std::set<std::string>{"compare", "completion"}));
}

TEST_F(CompletionTest, BashCompletesEachCommandsOwnOptionsAndSubcommands) {
  EXPECT_EQ(Complete({"run", "--resu"}), (std::set<std::string>{"--resume"}));
  const std::set<std::string> fail_on = Complete({"submit", "x.toml", "--fa"});
  EXPECT_EQ(fail_on, (std::set<std::string>{"--fail-on"}));
  // --db takes a value: the word after it is that value, and what follows is run's again.
  EXPECT_EQ(Complete({"run", "--db", "x.db", "--na"}), (std::set<std::string>{"--name"}));
  // A flag takes no value: the word after it is run's again.
  EXPECT_EQ(Complete({"run", "--resume", "--na"}), (std::set<std::string>{"--name"}));
  const std::string fish = CompletionScript(app_, "fish");
  EXPECT_NE(fish.find(" -l resume -d "), std::string::npos) << "fish: --resume takes no value";
  EXPECT_NE(fish.find(" -l db -r -d "), std::string::npos) << "fish: --db takes one";
  EXPECT_EQ(Complete({"ca", "i"}), (std::set<std::string>{"init", "issue"}));
  EXPECT_EQ(Complete({"host", ""}), (std::set<std::string>{"check", "tune", "reset"}));
  // An option's value is left to the shell's file completion: nothing from benchlab.
  EXPECT_TRUE(Complete({"run", "--db", ""}).empty());
}

TEST_F(CompletionTest, EveryOptionOfEverySubcommandIsInEachScript) {
  const std::string bash = CompletionScript(app_, "bash");
  const std::string zsh = CompletionScript(app_, "zsh");
  const std::string fish = CompletionScript(app_, "fish");
  EXPECT_EQ(zsh.rfind("#compdef benchlab\n", 0), 0u);
  EXPECT_NE(zsh.find("bashcompinit"), std::string::npos);
  size_t options = 0;
  for (const CLI::App* sub : app_.get_subcommands({})) {
    EXPECT_NE(fish.find("-a '" + sub->get_name() + "'"), std::string::npos) << sub->get_name();
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->get_group().empty()) continue;  // hidden (--parent-pid): not offered
      for (const std::string& l : opt->get_lnames()) {
        ++options;
        EXPECT_TRUE(bash.find(" --" + l) != std::string::npos ||
                    bash.find("'--" + l) != std::string::npos)
            << sub->get_name() << " --" << l;
        EXPECT_NE(fish.find(" -l " + l), std::string::npos) << sub->get_name() << " --" << l;
      }
    }
  }
  EXPECT_GT(options, 100u) << "the scan saw the subcommands' options";
}

}  // namespace
}  // namespace benchlab
