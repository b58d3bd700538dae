#include "cli/local_audit.h"

#include <pwd.h>
#include <unistd.h>

#include <filesystem>

#include "common/clock.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

std::string LocalUser() {
  if (const passwd* pw = getpwuid(geteuid()); pw != nullptr && pw->pw_name != nullptr) {
    return pw->pw_name;
  }
  return "uid " + std::to_string(geteuid());
}

}  // namespace

Status AuditLocal(Store& store, const std::string& call, const std::string& subject,
                  const Status& outcome) {
  AuditRow row;
  row.at = FormatIsoTime(store.clock().WallNow());
  row.identity = "local:" + LocalUser();
  row.role = "";
  row.peer = "local";
  row.call = call;
  row.subject = subject;
  row.outcome = outcome.ok() ? "ok" : "failed";
  row.reason = outcome.ok() ? "" : outcome.message();
  return store.AppendAudit(row);
}

Status AuditLocal(const std::string& db, const std::string& call, const std::string& subject,
                  const Status& outcome) {
  if (db.empty()) return Status::Ok();
  if (!std::filesystem::exists(db)) {
    return Status::NotFound("--db: no database at " + db);
  }
  auto store = Store::Open(db);
  if (!store.ok()) return store.status();
  return AuditLocal(**store, call, subject, outcome);
}

}  // namespace benchlab
