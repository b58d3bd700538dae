// `benchlab audit`: the coordinator's audit trail from its database (docs/security.md, "Audit"):
// every call that changed something and every call refused for its certificate.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <regex>

#include "cli/audit_format.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/text_width.h"
#include "common/clock.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

struct AuditArgs {
  std::string db;
  std::string since;
  bool json = false;
};

// --since: a UTC date or time ("2026-12-01", "2026-12-01T10:00", "2026-12-01T10:00:00Z") or a
// whole number of hours or days back from now ("24h", "7d").
Result<std::string> SinceBound(const std::string& text) {
  if (text.empty()) return std::string();
  static const std::regex kDate(R"(\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?)?)");
  if (std::regex_match(text, kDate)) return text;
  static const std::regex kAgo(R"((\d{1,6})([hd]))");
  if (std::smatch m; std::regex_match(text, m, kAgo)) {
    const auto hours = std::chrono::hours(std::stoi(m[1].str()) * (m[2].str() == "d" ? 24 : 1));
    return FormatIsoTime(std::chrono::system_clock::now() - hours);
  }
  return Status::InvalidArgument(
      "--since: expected a UTC date or time such as 2026-12-01 or 2026-12-01T10:00:00Z, or "
      "hours or days back from now such as 24h or 7d, got \"" +
      text + "\"");
}

int RunAudit(const AuditArgs& args) {
  auto since = SinceBound(args.since);
  if (!since.ok()) return CommandError("audit", kExitUsage, since.status().message());
  if (!std::filesystem::exists(args.db)) {
    return CommandError("audit", kExitUsage, "--db: no database at " + args.db);
  }
  auto store = Store::Open(args.db);
  if (!store.ok()) return CommandError("audit", kExitFailure, store.status().message());
  auto rows = (*store)->ListAudit(*since);
  if (!rows.ok()) return CommandError("audit", kExitFailure, rows.status().message());
  const std::string out =
      args.json ? FormatAuditJson(*rows) : FormatAuditTable(*rows, OutputWidth());
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? kExitOk
                                  : CommandError("audit", kExitFailure, "writing to stdout failed");
}

}  // namespace

CommandRunner AddAuditCommand(CLI::App& root) {
  auto args = std::make_shared<AuditArgs>();
  CLI::App* cmd = root.add_subcommand(
      "audit",
      "The coordinator's audit trail: every call that changed something (submit, re-run, cancel, "
      "register) and every call refused for its certificate, with who, from where and why.");
  cmd->add_option("--db", args->db, "the coordinator's SQLite database")->required();
  cmd->add_option("--since", args->since,
                  "only calls at or after this UTC date or time (2026-12-01, "
                  "2026-12-01T10:00:00Z) or this long ago (24h, 7d)");
  cmd->add_flag("--json", args->json, "JSON instead of a table");
  AddWidthOption(cmd);
  return [args] { return RunAudit(*args); };
}

}  // namespace benchlab
