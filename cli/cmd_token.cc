// `benchlab token create|list|revoke`: the dashboard's tokens in the coordinator's database
// (coordinator/dashboard_token.h, docs/security.md "The dashboard"). A token is printed once, at
// creation; the database keeps only its hash. Every change is audited.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cli/columns.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/local_audit.h"
#include "common/clock.h"
#include "coordinator/dashboard_token.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

struct TokenArgs {
  std::string db;
  std::string role;
  std::string name;
  std::string expires;
  bool json = false;
};

Result<std::unique_ptr<Store>> OpenStore(const std::string& db) {
  if (!std::filesystem::exists(db)) {
    return Status::NotFound("--db: no database at " + db +
                            " (the coordinator's --db; it makes the database when it starts)");
  }
  return Store::Open(db);
}

int ExitFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

// A name for a token made without --name: its role and the time, unique to the second.
std::string DefaultName(const std::string& role, std::chrono::system_clock::time_point now) {
  std::string at = FormatIsoTime(now).substr(0, 19);  // 2026-12-01T10:00:00
  std::erase(at, '-');
  std::erase(at, ':');
  return role + "-" + at;
}

int RunCreate(const TokenArgs& args) {
  if (!IsDashboardRole(args.role)) {
    return CommandError("token create", kExitUsage,
                        "--role: expected viewer or operator, got \"" + args.role + "\"");
  }
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9._@-]{0,63}");
  if (!args.name.empty() && !std::regex_match(args.name, kName)) {
    return CommandError("token create", kExitUsage,
                        "--name: expected 1 to 64 letters, digits, '.', '_', '@' or '-' "
                        "(starting with a letter or digit), got \"" +
                            args.name + "\"");
  }
  const auto now = std::chrono::system_clock::now();
  auto expires = ParseTokenExpiry(args.expires, now);
  if (!expires.ok()) return CommandError("token create", kExitUsage, expires.status().message());
  auto store = OpenStore(args.db);
  if (!store.ok())
    return CommandError("token create", ExitFor(store.status()), store.status().message());
  auto token = NewDashboardToken();
  if (!token.ok()) return CommandError("token create", kExitFailure, token.status().message());
  TokenRow row;
  row.name = args.name.empty() ? DefaultName(args.role, now) : args.name;
  row.role = args.role;
  row.hash = DashboardTokenHash(*token);
  row.created_at = FormatIsoTime(now);
  row.expires_at = *expires;
  const Status added = (*store)->AddToken(row);
  const std::string subject = "token " + row.name + " (" + row.role + ")";
  if (Status audited = AuditLocal(**store, "TokenCreate", subject, added); !audited.ok()) {
    std::fprintf(stderr, "benchlab token create: warning: not audited: %s\n",
                 audited.message().c_str());
  }
  if (!added.ok()) return CommandError("token create", ExitFor(added), added.message());
  // The token on stdout alone, so that a script can take it; what it is on stderr.
  std::fprintf(stderr, "%s token \"%s\", %s; it is shown only now, keep it secret\n",
               row.role.c_str(), row.name.c_str(),
               row.expires_at.empty() ? "never expires" : ("expires " + row.expires_at).c_str());
  std::printf("%s\n", token->c_str());
  return std::fflush(stdout) == 0
             ? kExitOk
             : CommandError("token create", kExitFailure, "writing to stdout failed");
}

std::string StateOf(const TokenRow& t, std::chrono::system_clock::time_point now) {
  if (!t.revoked_at.empty()) return "revoked";
  return TokenExpired(t, now) ? "expired" : "valid";
}

int RunList(const TokenArgs& args) {
  auto store = OpenStore(args.db);
  if (!store.ok())
    return CommandError("token list", ExitFor(store.status()), store.status().message());
  auto tokens = (*store)->ListTokens();
  if (!tokens.ok()) return CommandError("token list", kExitFailure, tokens.status().message());
  const auto now = std::chrono::system_clock::now();
  std::string out;
  if (args.json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const TokenRow& t : *tokens) {
      list.push_back(
          {{"name", t.name},
           {"role", t.role},
           {"state", StateOf(t, now)},
           {"created_at", t.created_at},
           {"expires_at", t.expires_at.empty() ? nullptr : nlohmann::ordered_json(t.expires_at)},
           {"revoked_at", t.revoked_at.empty() ? nullptr : nlohmann::ordered_json(t.revoked_at)}});
    }
    out = nlohmann::ordered_json{{"tokens", std::move(list)}}.dump(2) + "\n";
  } else if (tokens->empty()) {
    out = "no tokens (benchlab token create --db " + args.db + " --role viewer|operator)\n";
  } else {
    std::vector<std::vector<std::string>> lines = {{"name", "role", "state", "created", "expires"}};
    for (const TokenRow& t : *tokens) {
      lines.push_back({t.name, t.role, StateOf(t, now), t.created_at,
                       t.expires_at.empty() ? "never" : t.expires_at});
    }
    out = FormatColumns(lines);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0
             ? kExitOk
             : CommandError("token list", kExitFailure, "writing to stdout failed");
}

int RunTokenRevoke(const TokenArgs& args) {
  auto store = OpenStore(args.db);
  if (!store.ok())
    return CommandError("token revoke", ExitFor(store.status()), store.status().message());
  const Status revoked =
      (*store)->RevokeToken(args.name, FormatIsoTime(std::chrono::system_clock::now()));
  if (Status audited = AuditLocal(**store, "TokenRevoke", "token " + args.name, revoked);
      !audited.ok()) {
    std::fprintf(stderr, "benchlab token revoke: warning: not audited: %s\n",
                 audited.message().c_str());
  }
  if (!revoked.ok()) return CommandError("token revoke", ExitFor(revoked), revoked.message());
  std::printf("revoked token \"%s\": the dashboard refuses it and its sessions from now on\n",
              args.name.c_str());
  return kExitOk;
}

}  // namespace

CommandRunner AddTokenCommand(CLI::App& root) {
  auto args = std::make_shared<TokenArgs>();
  auto which = std::make_shared<int>(0);
  CLI::App* token = root.add_subcommand(
      "token", "The dashboard's tokens: create (shown once), list and revoke them.");
  token->require_subcommand(1);
  CLI::App* create = token->add_subcommand(
      "create", "Make a token for the dashboard and its API; print it once, store its hash.");
  create->add_option("--db", args->db, "the coordinator's SQLite database")->required();
  create->add_option("--role", args->role, "viewer (reads) or operator (reads and re-runs)")
      ->required();
  create->add_option("--name", args->name, "its name in lists and the audit trail");
  create->add_option("--expires", args->expires,
                     "when it stops working: 12h or 30d from now, or a UTC date or time "
                     "(default: never)");
  create->callback([which] { *which = 1; });
  CLI::App* list = token->add_subcommand("list", "The tokens: name, role, state, expiry.");
  list->add_option("--db", args->db, "the coordinator's SQLite database")->required();
  list->add_flag("--json", args->json, "JSON instead of a table");
  list->callback([which] { *which = 2; });
  CLI::App* revoke = token->add_subcommand(
      "revoke", "Revoke a token by name: the dashboard refuses it and its sessions at once.");
  revoke->add_option("--db", args->db, "the coordinator's SQLite database")->required();
  revoke->add_option("name", args->name, "the token's name")->required();
  revoke->callback([which] { *which = 3; });
  return [args, which] {
    switch (*which) {
      case 1:
        return RunCreate(*args);
      case 2:
        return RunList(*args);
      default:
        return RunTokenRevoke(*args);
    }
  };
}

}  // namespace benchlab
