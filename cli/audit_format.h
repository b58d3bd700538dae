// What `benchlab audit` prints: the coordinator's audit trail (docs/security.md, "Audit") as a
// table for people or as JSON for machines. Pure formatting of stored rows; no I/O.
#pragma once

#include <string>
#include <vector>

#include "common/text_table.h"
#include "coordinator/store.h"

namespace benchlab {

// A header and one line per row: when, who, from where, which call, about what, the outcome
// ("refused ×500" for a row that stands for 500 identical refusals) and why. Every field is
// escaped for a terminal (common/text_table.h), so a row is always one line whatever a peer sent;
// "no audited calls\n" when there are none. Wider than `width`, the reason is cut with "…" first,
// then the time loses its fraction of a second, the peer's address is left out and the subject
// and the identity are cut.
std::string FormatAuditTable(const std::vector<AuditRow>& rows, int width = kDefaultTextWidth);

// {"audit": [{"id", "at", "identity", "role", "peer", "call", "subject", "outcome", "reason",
// "count"}]}, indented, ending with a newline; bytes that are not UTF-8 become U+FFFD.
std::string FormatAuditJson(const std::vector<AuditRow>& rows);

}  // namespace benchlab
