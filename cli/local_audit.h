// The audit rows of commands run on the coordinator's own machine rather than over gRPC: token
// and certificate changes (docs/security.md, "Audit"). Their identity is the local user
// ("local:alice"), their peer "local".
#pragma once

#include <string>

#include "common/status.h"

namespace benchlab {

class Store;

// Appends one row: call ("TokenCreate", "CaIssue", ...), what it was about, and its outcome
// ("ok" or "failed", with the failure's message as the reason).
Status AuditLocal(Store& store, const std::string& call, const std::string& subject,
                  const Status& outcome);

// The same through a database path: opens it, appends and closes. An empty path does nothing
// (the CA may live on a machine without the coordinator's database).
Status AuditLocal(const std::string& db, const std::string& call, const std::string& subject,
                  const Status& outcome);

}  // namespace benchlab
