// `benchlab man`: every subcommand's page from the command's own definitions (cli/manpage.h), with
// its sections and every option of the command and of its own subcommands; groff reads each
// without a warning and lexgrog finds its whatis entry; benchlab(1) names every page.
#include "cli/manpage.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

// An option's long name as a page writes it: --db is \fB\-\-db\fR.
std::string BoldOption(const std::string& long_name) {
  std::string out = "\\fB\\-\\-";
  for (char c : long_name) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out + "\\fR";
}

class ManPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AddCommands(app_);
    app_.add_option("--log-format", log_format_, "text or json");
  }

  CLI::App app_{"benchlab"};
  std::string log_format_;
  const ManPageHeader header_{"2026-12-02", "benchlab test"};
};

TEST_F(ManPageTest, EverySubcommandHasAPageWithItsSectionsAndEveryOption) {
  const std::vector<const CLI::App*> commands = ManPageCommands(app_);
  ASSERT_GT(commands.size(), 15u);
  size_t options = 0;
  for (const CLI::App* cmd : commands) {
    const std::string name = cmd->get_name();
    const std::string page = ManPage(*cmd, header_);
    EXPECT_EQ(ManPageFileName(*cmd), "benchlab-" + name + ".1");
    EXPECT_EQ(page.rfind(".TH \"BENCHLAB", 0), 0u) << name;
    for (const char* section : {"\n.SH NAME\n", "\n.SH SYNOPSIS\n", "\n.SH DESCRIPTION\n",
                                "\n.SH OPTIONS\n", "\n.SH SEE ALSO\n.BR benchlab (1)"}) {
      EXPECT_NE(page.find(section), std::string::npos) << name << " lacks " << section;
    }
    // NAME: "benchlab\-run \- run a campaign ...", whatis's form.
    std::string escaped_name = "benchlab\\-";
    for (char c : name) escaped_name += c == '-' ? std::string("\\-") : std::string(1, c);
    EXPECT_NE(page.find(".SH NAME\n" + escaped_name + " \\- "), std::string::npos) << name;
    EXPECT_NE(page.find("\\fBbenchlab " + name + "\\fR"), std::string::npos)
        << name << ": the synopsis";
    // Every option the command (and each of its own subcommands) shows in --help.
    std::vector<const CLI::App*> apps = {cmd};
    for (const CLI::App* sub : cmd->get_subcommands({})) apps.push_back(sub);
    for (const CLI::App* app : apps) {
      if (app != cmd) {
        EXPECT_NE(page.find(".SS \"benchlab " + name + " " + app->get_name() + "\""),
                  std::string::npos)
            << name << " lacks its subcommand " << app->get_name();
      }
      for (const CLI::Option* opt : app->get_options()) {
        if (opt->get_group().empty()) continue;  // hidden: not in --help either
        if (!opt->nonpositional()) {
          EXPECT_NE(page.find("\\fI" + opt->get_name(true) + "\\fR"), std::string::npos)
              << name << ": argument " << opt->get_name(true);
          continue;
        }
        for (const std::string& l : opt->get_lnames()) {
          ++options;
          EXPECT_NE(page.find(BoldOption(l)), std::string::npos) << name << " --" << l;
        }
      }
    }
  }
  EXPECT_GT(options, 100u) << "the scan saw the subcommands' options";
}

TEST_F(ManPageTest, APageCarriesHelpTextDefaultsAndEnvironment) {
  const CLI::App* run = app_.get_subcommand("run");
  const std::string page = ManPage(*run, header_);
  EXPECT_NE(page.find(".TH \"BENCHLAB\\-RUN\" 1 \"2026\\-12\\-02\" \"benchlab test\""),
            std::string::npos)
      << page.substr(0, 200);
  EXPECT_NE(page.find("benchlab\\-run \\- run a campaign on the embedded lab\n"),
            std::string::npos);
  // --progress: its value, help text and default; the campaign file is a required argument.
  EXPECT_NE(page.find(".TP\n\\fB\\-\\-progress\\fR \\fITEXT:{auto,tty,plain,off}\\fR\n"
                      "progress on stdout: tty"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("default: auto"), std::string::npos);
  // A flag takes no value; an option that takes several says so.
  EXPECT_NE(page.find(".TP\n\\fB\\-\\-resume\\fR\n"), std::string::npos) << page;
  EXPECT_NE(page.find(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\n"), std::string::npos) << page;
  EXPECT_NE(page.find("\\fB\\-\\-label\\fR \\fITARGET=VALUE ...\\fR\n"), std::string::npos) << page;
  EXPECT_NE(page.find("\\fBbenchlab run\\fR [\\fIoptions\\fR] \\fIcampaign\\fR\n"),
            std::string::npos);
  // A group of its own (Mutual TLS) is a subsection of OPTIONS, after the default group.
  const std::string submit = ManPage(*app_.get_subcommand("submit"), header_);
  const size_t tls = submit.find(".SS \"Mutual TLS\"\n.TP\n\\fB\\-\\-tls\\-ca\\fR");
  EXPECT_NE(tls, std::string::npos) << submit;
  EXPECT_LT(submit.find("\\fB\\-\\-coordinator\\fR"), tls);
  // A command with subcommands: each in COMMANDS with its synopsis line, its options there with
  // their environment variable; the hidden --root is not shown.
  const std::string ca = ManPage(*app_.get_subcommand("ca"), header_);
  EXPECT_NE(ca.find(".SH COMMANDS\n"), std::string::npos);
  EXPECT_NE(ca.find("\\fBbenchlab ca issue\\fR [\\fIoptions\\fR]"), std::string::npos) << ca;
  const std::string host = ManPage(*app_.get_subcommand("host"), header_);
  EXPECT_NE(host.find("environment: BENCHLAB_HOST_STATE"), std::string::npos) << host;
  EXPECT_EQ(host.find("\\-\\-root"), std::string::npos) << host;
}

TEST(RoffTextTest, EscapesWhatRoffWouldReadAsControl) {
  EXPECT_EQ(RoffText(".hidden line"), "\\&.hidden line\n");
  EXPECT_EQ(RoffText("'quoted"), "\\&'quoted\n");
  EXPECT_EQ(RoffText("a\\b --x"), "a\\eb \\-\\-x\n");
  EXPECT_EQ(RoffText("CPU µs → 5"), "CPU \\[u00B5]s \\[u2192] 5\n");
  EXPECT_EQ(RoffText("one\n\n  two  "), "one\n.PP\ntwo\n");
}

// groff reads every page without a warning, as lintian's check does (man --warnings).
TEST_F(ManPageTest, GroffReadsEveryPageWithoutAWarning) {
  if (std::system("command -v groff > /dev/null 2>&1") != 0) GTEST_SKIP() << "no groff";
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("benchlab_manpage_" + std::to_string(getpid()));
  fs::create_directories(dir);
  for (const CLI::App* cmd : ManPageCommands(app_)) {
    const fs::path page = dir / ManPageFileName(*cmd);
    std::ofstream(page) << ManPage(*cmd, header_);
    const fs::path err = dir / "groff.err";
    const std::string command = "groff -man -ww -z -Tutf8 " + page.string() + " 2> " + err.string();
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    std::ifstream in(err);
    std::stringstream said;
    said << in.rdbuf();
    EXPECT_EQ(said.str(), "") << page.filename().string();
    // lexgrog, which lintian asks too, finds the NAME line's whatis entry.
    if (std::system("command -v lexgrog > /dev/null 2>&1") == 0) {
      const std::string whatis = "lexgrog " + page.string() + " > /dev/null";
      EXPECT_EQ(std::system(whatis.c_str()), 0) << whatis;
    }
  }
  fs::remove_all(dir);
}

// packaging/deb/benchlab.1.in's SEE ALSO names every page, and no page that is not made.
TEST_F(ManPageTest, BenchlabOneNamesEverySubcommandsPage) {
  std::ifstream in(std::string(BENCHLAB_SOURCE_DIR) + "/packaging/deb/benchlab.1.in");
  ASSERT_TRUE(in) << "packaging/deb/benchlab.1.in";
  std::string see_also, line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.starts_with(".SH ")) in_section = line == ".SH SEE ALSO";
    if (in_section) see_also += line + "\n";
  }
  size_t named = 0;
  for (const CLI::App* cmd : ManPageCommands(app_)) {
    EXPECT_NE(see_also.find(".BR benchlab\\-" + cmd->get_name() + " (1)"), std::string::npos)
        << "packaging/deb/benchlab.1.in: SEE ALSO lacks benchlab-" << cmd->get_name() << "(1)";
    ++named;
  }
  size_t listed = 0;
  for (size_t at = see_also.find(".BR benchlab\\-"); at != std::string::npos;
       at = see_also.find(".BR benchlab\\-", at + 1)) {
    ++listed;
  }
  EXPECT_EQ(listed, named) << "packaging/deb/benchlab.1.in: SEE ALSO names pages no subcommand "
                              "has:\n"
                           << see_also;
}

}  // namespace
}  // namespace benchlab
