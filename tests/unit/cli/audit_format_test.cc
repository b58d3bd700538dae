#include "cli/audit_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

namespace benchlab {
namespace {

AuditRow Refusal(const std::string& subject) {
  AuditRow row;
  row.id = 7;
  row.at = "2026-12-04T22:51:37.974Z";
  row.identity = "dashboard:anonymous";
  row.peer = "127.0.0.1:34156";
  row.call = "DashboardRead";
  row.subject = subject;
  row.outcome = "refused";
  row.reason = "not a benchlab dashboard token";
  return row;
}

TEST(AuditFormatTest, AForgedPathPrintsAsOneEscapedRow) {
  // A bad-token GET whose path holds %0a, a fake row and an ESC (the dashboard decodes it).
  const AuditRow forged = Refusal(
      "/api/v1/campaigns\n2026-12-01T10:00:00.000Z  local:root  local  TokenCreate  token evil  "
      "ok\x1b[2J");
  const std::string table = FormatAuditTable({forged});
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 2) << "the header and one row\n" << table;
  EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
  EXPECT_NE(table.find("/api/v1/campaigns\\n2026-12-01T10:00:00.000Z  local:root  local  "
                       "TokenCreate  token evil  ok\\x1b[2J  refused"),
            std::string::npos)
      << table;
}

TEST(AuditFormatTest, CoalescedRefusalsShowTheirCount) {
  AuditRow many = Refusal("/api/v1/campaigns");
  many.count = 500;
  AuditRow once = Refusal("/api/v1/windows");
  const std::string table = FormatAuditTable({many, once});
  EXPECT_NE(table.find("  refused \u00d7500  not a benchlab dashboard token\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("/api/v1/windows    refused       not a"), std::string::npos) << table;
  auto json = nlohmann::json::parse(FormatAuditJson({many, once}));
  EXPECT_EQ(json["audit"][0]["count"], 500);
  EXPECT_EQ(json["audit"][1]["count"], 1);
  EXPECT_EQ(json["audit"][0]["outcome"], "refused");
}

TEST(AuditFormatTest, JsonKeepsControlCharactersEscapedAndSurvivesBytesThatAreNotUtf8) {
  const std::string json_text = FormatAuditJson({Refusal("/x\n\x1b[2J\xff")});
  EXPECT_EQ(json_text.find('\x1b'), std::string::npos);
  auto json = nlohmann::json::parse(json_text);
  EXPECT_EQ(json["audit"][0]["subject"], "/x\n\x1b[2J\xef\xbf\xbd");
  EXPECT_EQ(FormatAuditTable({}), "no audited calls\n");
}

}  // namespace
}  // namespace benchlab
