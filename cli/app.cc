#include "cli/app.h"

#include <algorithm>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "common/log.h"
#include "rpc/server_port.h"

namespace benchlab {

size_t EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and swaps of neighbours
  // ("rnu" is one swap from "run"), one row of the table at a time.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    before.swap(prev);
    prev.swap(row);
  }
  return prev[b.size()];
}

std::vector<std::string> SimilarNames(std::string_view word,
                                      const std::vector<std::string>& names) {
  // Within two edits for words of four letters or more, one below; or a word that starts a name
  // ("rem" for "remeasure").
  const size_t limit = word.size() >= 4 ? 2 : 1;
  std::vector<std::pair<size_t, std::string>> near;
  for (const std::string& name : names) {
    const size_t d = EditDistance(word, name);
    if (d <= limit || (word.size() >= 2 && name.starts_with(word))) near.emplace_back(d, name);
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (auto& [d, name] : near) out.push_back(std::move(name));
  return out;
}

namespace {

// The first word of argv that is not a top-level option or its value: the subcommand the user
// meant, or nullptr when there is none.
const char* SubcommandWord(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--log-format") {
      ++i;  // its value
      continue;
    }
    if (a.starts_with("-")) continue;
    return argv[i];
  }
  return nullptr;
}

}  // namespace

int RunBenchlab(int argc, const char* const* argv) {
  CLI::App app{
      "benchlab: a distributed benchmark lab for HTTP servers.\n"
      "A coordinator schedules campaigns over gRPC to agents; every window is judged by gates "
      "and stored in SQLite."};
  // BENCHLAB_VERSION: the project's version (CMakeLists.txt), which the Debian package carries.
  app.set_version_flag("--version", "benchlab " BENCHLAB_VERSION);
  app.require_subcommand(1);
  // Options of the top level are accepted after the subcommand too: `benchlab agent
  // --log-format json --config ...`.
  app.fallthrough();
  std::string log_format = "text";
  app.add_option("--log-format", log_format,
                 "text (the default: a line a person reads) or json (one object a line: time, "
                 "level, daemon, agent, campaign, window, message; docs/logging.md)")
      ->check(CLI::IsMember({"text", "json"}))
      ->envname("BENCHLAB_LOG_FORMAT");
  // Every subcommand, from the one list (cli/commands.cc).
  auto commands = AddCommands(app);
  std::vector<std::string> names;
  for (auto& [sub, runner] : commands) names.push_back(sub->get_name());
  // `benchlab help [SUBCOMMAND]` is `benchlab [SUBCOMMAND] --help`; a word that is no subcommand
  // is refused with the names it is close to, before CLI11 would answer "A subcommand is
  // required" or take it for an argument.
  std::vector<const char*> args(argv, argv + argc);
  const char* word = SubcommandWord(argc, argv);
  if (word != nullptr && std::string_view(word) == "help") {
    auto at = args.erase(std::find(args.begin(), args.end(), word));
    args.insert(at == args.end() ? at : at + 1, "--help");
    word = SubcommandWord(static_cast<int>(args.size()), args.data());
  }
  if (word != nullptr && std::find(names.begin(), names.end(), word) == names.end()) {
    std::cerr << "benchlab: '" << word << "' is not a subcommand.";
    const std::vector<std::string> near = SimilarNames(word, names);
    for (size_t i = 0; i < near.size() && i < 3; ++i) {
      std::cerr << (i == 0 ? " Did you mean " : " or ") << "'" << near[i] << "'";
    }
    std::cerr << (near.empty() ? "" : "?") << "\nThe subcommands: 'benchlab --help'.\n";
    return kExitUsage;
  }
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  for (auto& [sub, runner] : commands) {
    if (!sub->parsed()) continue;
    ConfigureLogging(*ParseLogFormat(log_format), sub->get_name());
    RouteGrpcLogging();
    return runner();
  }
  return kExitUsage;
}

}  // namespace benchlab
