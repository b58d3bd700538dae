// What `benchlab audit` prints: the coordinator's audit trail (docs/security.md, "Audit") as a
// table for people or as JSON for machines. FormatAuditTable and FormatAuditJson format stored
// rows; AuditText reads them from a store, for the command on the database it opens (--db) and
// for the coordinator on its own (GetAudit), so the text is the same whichever answers.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/text_table.h"
#include "coordinator/server/query_fields.h"
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

// `benchlab audit`: the rows from `since` on, as a table or JSON.
struct AuditQuery {
  // "": every row; a UTC date or time ("2026-12-01", "2026-12-01T10:00", "2026-12-01T10:00:00Z")
  // or a whole number of hours or days back from now ("24h", "7d"), at most 64 bytes.
  std::string since;
  std::string format = "text";  // text (the table) | json
  int width = kDefaultTextWidth;
};

// The earliest time a row may have (an ISO 8601 prefix ListAudit compares with), "" for every
// row; hours or days are counted back from `now`. InvalidArgument naming the field otherwise.
Result<std::string> AuditSinceBound(const std::string& since,
                                    std::chrono::system_clock::time_point now,
                                    QueryFields fields = QueryFields::kOptions);

// InvalidArgument naming the field: a malformed since, a format not text or json, a width outside
// kMinTextWidth..kMaxTextWidth. Only the forms: no clock is read.
Status CheckAuditQuery(const AuditQuery& query, QueryFields fields = QueryFields::kOptions);

// The audit rows at or after the query's since (hours or days counted back from the store's
// clock, Store::clock), as FormatAuditTable `query.width` wide or FormatAuditJson. Errors: the
// query's; the store's.
Result<std::string> AuditText(Store& store, const AuditQuery& query);

}  // namespace benchlab
