#include "cli/audit_format.h"

#include <nlohmann/json.hpp>

#include "common/text_table.h"

namespace benchlab {

std::string FormatAuditTable(const std::vector<AuditRow>& rows, int width) {
  if (rows.empty()) return "no audited calls\n";
  // The reason gives way first (cut, `--json` has it whole), then the time's fraction of a
  // second, the peer's address and the subject; when, who, the call and its outcome stay.
  TextTable table;
  table.columns = {
      TableColumn("at").GivesWay(Shrink::kShorten, 2),
      TableColumn("who").GivesWay(Shrink::kCutMiddle, 5, 16),
      TableColumn("from").GivesWay(Shrink::kDrop, 3),
      TableColumn("call"),
      TableColumn("about").GivesWay(Shrink::kCutEnd, 4, 12),
      TableColumn("outcome"),
      TableColumn("reason").GivesWay(Shrink::kCutEnd, 1, 16),
  };
  for (const AuditRow& r : rows) {
    const std::string outcome =
        r.count > 1 ? r.outcome + " \u00d7" + std::to_string(r.count) : r.outcome;
    // "2026-12-01T10:00:00.123Z" -> "2026-12-01T10:00:00Z"
    const size_t dot = r.at.find('.');
    const std::string at_short = dot == std::string::npos ? r.at : r.at.substr(0, dot) + "Z";
    table.rows.push_back({TableCell(r.at, at_short), r.identity, r.peer, r.call,
                          r.subject.empty() ? "-" : r.subject, outcome,
                          r.reason.empty() ? "-" : r.reason});
  }
  return FormatTable(table, width);
}

std::string FormatAuditJson(const std::vector<AuditRow>& rows) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const AuditRow& r : rows) {
    list.push_back({{"id", r.id},
                    {"at", r.at},
                    {"identity", r.identity},
                    {"role", r.role},
                    {"peer", r.peer},
                    {"call", r.call},
                    {"subject", r.subject},
                    {"outcome", r.outcome},
                    {"reason", r.reason},
                    {"count", r.count}});
  }
  return nlohmann::ordered_json{{"audit", std::move(list)}}.dump(
             2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

}  // namespace benchlab
