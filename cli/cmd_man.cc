// `benchlab man`: the manual page of each subcommand, generated from the command's own
// definitions (cli/manpage.h, docs/cli.md "Manual pages").
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>

#include "cli/commands.h"
#include "cli/manpage.h"

namespace benchlab {
namespace {

struct ManArgs {
  std::string command;
  std::string output_dir;
  std::string date;
};

int RunMan(const CLI::App& root, const ManArgs& args) {
  const ManPageHeader header{args.date, "benchlab " BENCHLAB_VERSION};
  const std::vector<const CLI::App*> commands = ManPageCommands(root);
  if (!args.command.empty()) {
    for (const CLI::App* cmd : commands) {
      if (cmd->get_name() != args.command) continue;
      const std::string page = ManPage(*cmd, header);
      std::fwrite(page.data(), 1, page.size(), stdout);
      return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
    }
    std::cerr << "benchlab man: '" << args.command << "' is no subcommand with a page; see "
              << "'benchlab --help'\n";
    return kExitUsage;
  }
  if (args.output_dir.empty()) {
    std::cerr << "benchlab man: give a COMMAND (its page on stdout) or --output-dir DIR (every "
                 "page)\n";
    return kExitUsage;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(args.output_dir, ec);
  if (ec) {
    std::cerr << "benchlab man: --output-dir " << args.output_dir << ": " << ec.message() << "\n";
    return kExitFailure;
  }
  for (const CLI::App* cmd : commands) {
    const fs::path path = fs::path(args.output_dir) / ManPageFileName(*cmd);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << ManPage(*cmd, header);
    out.close();
    if (!out) {
      std::cerr << "benchlab man: writing " << path.string() << " failed\n";
      return kExitFailure;
    }
  }
  return kExitOk;
}

}  // namespace

CommandRunner AddManCommand(CLI::App& root) {
  auto args = std::make_shared<ManArgs>();
  CLI::App* cmd = root.add_subcommand(
      "man",
      "Print a subcommand's manual page (roff: `benchlab man run | man -l -`), or write every "
      "subcommand's page, benchlab-NAME.1, into a directory (the Debian package installs them).");
  CLI::Option* command =
      cmd->add_option("command", args->command, "the subcommand whose page is printed");
  cmd->add_option("--output-dir", args->output_dir,
                  "write benchlab-NAME.1 for every subcommand into DIR (made when missing)")
      ->type_name("DIR")
      ->excludes(command);
  cmd->add_option("--date", args->date,
                  "the date each page's header carries, such as 2026-12-02 (default: none)");
  // The root outlives the runner: RunBenchlab parses and runs within its own scope.
  return [args, &root] { return RunMan(root, *args); };
}

}  // namespace benchlab
