// `benchlab audit --db FILE | --coordinator HOST:PORT`: the coordinator's audit trail
// (docs/security.md, "Audit"): every call that changed something and every call refused for its
// certificate. Reads the database, or asks a running coordinator (GetAudit, operators only),
// which makes the same text from its own: AuditText (coordinator/server/audit_format.h) either
// way.
#include <cstdio>
#include <memory>

#include "cli/client.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/series_input.h"
#include "cli/text_width.h"
#include "cli/tls_options.h"
#include "coordinator/server/audit_format.h"

namespace benchlab {
namespace {

struct AuditArgs {
  std::string db;
  std::string coordinator;
  TlsFiles tls;  // --tls-*: mutual TLS to the coordinator
  std::string since;
  bool json = false;
};

// The trail from the coordinator at `address`: its GetAudit reply's text.
int AuditFromCoordinator(const AuditArgs& args, const AuditQuery& query, std::string& text) {
  v1::GetAuditRequest req;
  req.set_since(query.since);
  req.set_format(query.format);
  req.set_width(query.width);
  v1::GetAuditReply reply;
  if (Status called = CallCoordinator(args.coordinator, args.tls, 30,
                                      &v1::Coordinator::Stub::GetAudit, req, &reply);
      !called.ok()) {
    return CommandError("audit", called);
  }
  text = reply.text();
  return kExitOk;
}

int RunAudit(const AuditArgs& args) {
  if (args.db.empty() == args.coordinator.empty()) {
    return CommandError("audit", kExitUsage,
                        "give exactly one of --db FILE and --coordinator HOST:PORT");
  }
  AuditQuery query;
  query.since = args.since;
  query.format = args.json ? "json" : "text";
  query.width = OutputWidth();
  if (Status bad = CheckAuditQuery(query); !bad.ok()) return CommandError("audit", bad);
  std::string text;
  if (!args.coordinator.empty()) {
    if (int failed = AuditFromCoordinator(args, query, text)) return failed;
  } else {
    std::unique_ptr<Store> store;
    if (int bad = OpenExistingStore("audit", args.db, store)) return bad;
    auto made = AuditText(*store, query);
    if (!made.ok()) return CommandError("audit", kExitFailure, made.status().message());
    text = std::move(*made);
  }
  return WriteCommandOutput("audit", text, "");
}

}  // namespace

CommandRunner AddAuditCommand(CLI::App& root) {
  auto args = std::make_shared<AuditArgs>();
  CLI::App* cmd = root.add_subcommand(
      "audit",
      "The coordinator's audit trail: every call that changed something (submit, re-run, cancel, "
      "register) and every call refused for its certificate, with who, from where and why.");
  CLI::Option* db = cmd->add_option("--db", args->db, "the coordinator's SQLite database");
  cmd->add_option("--coordinator", args->coordinator,
                  "instead of --db: ask the coordinator at HOST:PORT (an operator's certificate "
                  "over mutual TLS), which reads its database")
      ->excludes(db);
  AddTlsOptions(cmd, &args->tls);
  cmd->add_option("--since", args->since,
                  "only calls at or after this UTC date or time (2026-12-01, "
                  "2026-12-01T10:00:00Z) or this long ago (24h, 7d)");
  cmd->add_flag("--json", args->json, "JSON instead of a table");
  AddWidthOption(cmd);
  return [args] { return RunAudit(*args); };
}

}  // namespace benchlab
