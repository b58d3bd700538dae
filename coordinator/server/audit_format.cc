#include "coordinator/server/audit_format.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <regex>

#include "common/clock.h"
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

namespace {

// A since's form: the bound itself for a date or time ("" for none), or how far back from now
// it reaches.
struct AuditSinceForm {
  std::string bound;
  std::optional<std::chrono::hours> back;
};

Result<AuditSinceForm> ParseAuditSince(const std::string& since, QueryFields fields) {
  if (since.empty()) return AuditSinceForm{};
  const std::string expected =
      QueryFieldName(fields, "--since", "since") +
      ": expected a UTC date or time such as 2026-12-01 or 2026-12-01T10:00:00Z, or hours or days "
      "back from now such as 24h or 7d, got \"";
  if (since.size() > 64) {
    return Status::InvalidArgument(expected + since.substr(0, 64) + "...\"");
  }
  static const std::regex kDate(R"(\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?)?)");
  if (std::regex_match(since, kDate)) return AuditSinceForm{since, std::nullopt};
  static const std::regex kAgo(R"((\d{1,6})([hd]))");
  if (std::smatch m; std::regex_match(since, m, kAgo)) {
    return AuditSinceForm{"",
                          std::chrono::hours(std::stoi(m[1].str()) * (m[2].str() == "d" ? 24 : 1))};
  }
  return Status::InvalidArgument(expected + since + "\"");
}

}  // namespace

Result<std::string> AuditSinceBound(const std::string& since,
                                    std::chrono::system_clock::time_point now, QueryFields fields) {
  auto form = ParseAuditSince(since, fields);
  if (!form.ok()) return form.status();
  if (!form->back) return form->bound;
  return FormatIsoTime(now - *form->back);
}

Status CheckAuditQuery(const AuditQuery& query, QueryFields fields) {
  if (auto since = ParseAuditSince(query.since, fields); !since.ok()) return since.status();
  if (query.format != "text" && query.format != "json") {
    return Status::InvalidArgument(QueryFieldName(fields, "--format", "format") +
                                   ": expected text or json, got \"" + query.format.substr(0, 64) +
                                   "\"");
  }
  if (query.width < kMinTextWidth || query.width > kMaxTextWidth) {
    return Status::InvalidArgument(
        QueryFieldName(fields, "--width", "width") + ": expected " + std::to_string(kMinTextWidth) +
        " to " + std::to_string(kMaxTextWidth) + " columns, got " + std::to_string(query.width));
  }
  return Status::Ok();
}

Result<std::string> AuditText(Store& store, const AuditQuery& query) {
  if (Status st = CheckAuditQuery(query); !st.ok()) return st;
  auto since = AuditSinceBound(query.since, store.clock().WallNow());
  if (!since.ok()) return since.status();
  auto rows = store.ListAudit(*since);
  if (!rows.ok()) return rows.status();
  return query.format == "json" ? FormatAuditJson(*rows) : FormatAuditTable(*rows, query.width);
}

}  // namespace benchlab
