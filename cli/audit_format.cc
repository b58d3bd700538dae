#include "cli/audit_format.h"

#include <nlohmann/json.hpp>

#include "cli/columns.h"

namespace benchlab {

std::string FormatAuditTable(const std::vector<AuditRow>& rows) {
  if (rows.empty()) return "no audited calls\n";
  std::vector<std::vector<std::string>> lines = {
      {"at", "who", "from", "call", "about", "outcome", "reason"}};
  for (const AuditRow& r : rows) {
    const std::string outcome =
        r.count > 1 ? r.outcome + " \u00d7" + std::to_string(r.count) : r.outcome;
    lines.push_back({r.at, r.identity, r.peer, r.call, r.subject.empty() ? "-" : r.subject, outcome,
                     r.reason.empty() ? "-" : r.reason});
  }
  return FormatColumns(lines);
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
