// `benchlab ca init|issue|revoke`: benchlab's private certificate authority (tls/ca.h,
// docs/security.md "Certificates and roles").
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/local_audit.h"
#include "tls/ca.h"

namespace benchlab {
namespace {

struct CaArgs {
  std::string dir;
  int init_days = 3650;  // ca init --days
  int issue_days = 365;  // ca issue --days: a 0 or less is refused, never read as the default
  std::string name;
  std::string role;
  std::vector<std::string> hosts;
  std::string db;  // the coordinator's database, to audit the change in; "" for none
};

// Records an issue or a revocation in the coordinator's audit trail when --db names it; a failure
// to record is a warning, since the certificate exists either way.
void Audit(const CaArgs& args, const char* command, const char* call, const std::string& subject,
           const Status& outcome) {
  if (Status st = AuditLocal(args.db, call, subject, outcome); !st.ok()) {
    std::fprintf(stderr, "benchlab %s: warning: not audited in %s: %s\n", command, args.db.c_str(),
                 st.message().c_str());
  }
}

std::string Hosts(const CertificateInfo& info) {
  std::string out;
  for (const std::string& host : info.hosts) out += (out.empty() ? "" : ", ") + host;
  return out.empty() ? "none" : out;
}

int RunInit(const CaArgs& args) {
  auto ca = InitCa(args.dir, args.init_days);
  if (!ca.ok()) return CommandError("ca init", ca.status());
  const CaPaths paths(args.dir);
  std::printf(
      "CA \"%s\" in %s, valid until %s\n"
      "  %s  give it to every daemon and client\n"
      "  %s  keep it here; it signs every certificate (mode 0600)\n"
      "  %s  the certificate revocation list, signed by the CA\n",
      ca->name.c_str(), args.dir.c_str(), FormatUtc(ca->not_after).c_str(), paths.cert.c_str(),
      paths.key.c_str(), paths.crl.c_str());
  return kExitOk;
}

int RunIssue(const CaArgs& args) {
  const auto role = ParseRole(args.role);
  if (!role) {
    return CommandError(
        "ca issue", kExitUsage,
        "--role: expected coordinator, agent, operator or viewer, got \"" + args.role + "\"");
  }
  auto info = IssueCertificate(args.dir, {args.name, *role, args.hosts, args.issue_days});
  Audit(args, "ca issue", "CaIssue",
        args.role + " certificate " + args.name +
            (info.ok() ? ", serial " + info->serial + ", until " + FormatUtc(info->not_after) : ""),
        info.status());
  if (!info.ok()) return CommandError("ca issue", info.status());
  const CaPaths paths(args.dir);
  std::printf(
      "%s certificate \"%s\" (%s), serial %s, valid until %s, hosts: %s\n"
      "  %s\n"
      "  %s  (mode 0600: give it to its holder alone)\n",
      std::string(RoleName(info->role)).c_str(), info->name.c_str(),
      IdentityUri(info->role, info->name).c_str(), info->serial.c_str(),
      FormatUtc(info->not_after).c_str(), Hosts(*info).c_str(), paths.Cert(args.name).c_str(),
      paths.Key(args.name).c_str());
  return kExitOk;
}

int RunCaRevoke(const CaArgs& args) {
  auto info = RevokeCertificate(args.dir, args.name);
  Audit(args, "ca revoke", "CaRevoke",
        "certificate " + args.name + (info.ok() ? ", serial " + info->serial : ""), info.status());
  if (!info.ok()) return CommandError("ca revoke", info.status());
  std::printf("revoked %s certificate \"%s\", serial %s; %s now lists it\n",
              std::string(RoleName(info->role)).c_str(), info->name.c_str(), info->serial.c_str(),
              CaPaths(args.dir).crl.c_str());
  return kExitOk;
}

}  // namespace

CommandRunner AddCaCommand(CLI::App& root) {
  auto args = std::make_shared<CaArgs>();
  auto which = std::make_shared<int>(0);
  CLI::App* ca = root.add_subcommand(
      "ca", "benchlab's private certificate authority: make it, issue and revoke certificates.");
  ca->require_subcommand(1);

  CLI::App* init = ca->add_subcommand(
      "init", "Make a new CA in DIR: ca.pem, ca.key (0600) and an empty crl.pem.");
  init->add_option("--dir", args->dir, "the CA's directory (made 0700 when missing)")->required();
  init->add_option("--days", args->init_days, "how long the CA is valid, in days (default 3650)")
      ->check(CLI::Range(1, 36500));
  init->callback([which] { *which = 1; });

  CLI::App* issue = ca->add_subcommand(
      "issue", "Issue NAME.pem and NAME.key (0600) for one daemon or person, with its role.");
  issue->add_option("--dir", args->dir, "the CA's directory")->required();
  issue->add_option("--name", args->name, "the holder's name: an agent's name, a person, a host")
      ->required();
  issue->add_option("--role", args->role, "coordinator, agent, operator or viewer")->required();
  issue->add_option("--host", args->hosts,
                    "a DNS name or IP address the holder's daemon is dialled at (repeatable)");
  issue->add_option("--days", args->issue_days,
                    "how long it is valid, in days (default 365; at most the CA's days left)");
  issue->add_option("--db", args->db,
                    "the coordinator's database: record the issue in its audit trail");
  issue->callback([which] { *which = 2; });

  CLI::App* revoke = ca->add_subcommand(
      "revoke", "Revoke NAME's certificate: add it to crl.pem and move it to revoked/.");
  revoke->add_option("--dir", args->dir, "the CA's directory")->required();
  revoke->add_option("name", args->name, "the certificate's name")->required();
  revoke->add_option("--db", args->db,
                     "the coordinator's database: record the revocation in its audit trail");
  revoke->callback([which] { *which = 3; });

  return [args, which] {
    switch (*which) {
      case 1:
        return RunInit(*args);
      case 2:
        return RunIssue(*args);
      default:
        return RunCaRevoke(*args);
    }
  };
}

}  // namespace benchlab
