#include "coordinator/server/audit_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/text_table.h"
#include "tests/unit/support/fake_clock.h"

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
  const std::string table = FormatAuditTable({forged}, kMaxTextWidth);
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
  const std::string table = FormatAuditTable({many, once}, kMaxTextWidth);
  EXPECT_NE(table.find("  refused \u00d7500  not a benchlab dashboard token\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("/api/v1/windows    refused       not a"), std::string::npos) << table;
  auto json = nlohmann::json::parse(FormatAuditJson({many, once}));
  EXPECT_EQ(json["audit"][0]["count"], 500);
  EXPECT_EQ(json["audit"][1]["count"], 1);
  EXPECT_EQ(json["audit"][0]["outcome"], "refused");
}

// Every line of the table within the width, the header's columns over their cells: the reason is
// cut first, then the time loses its milliseconds and the peer's address goes.
TEST(AuditFormatTest, TheTableFitsTheWidthWithItsHeadersOverTheirColumns) {
  AuditRow row = Refusal("/api/v1/campaigns/nightly-2026-12-04-json-serialization-large/windows");
  row.identity = "operator:ci-runner-eu-west-1.build.example.org";
  row.reason =
      std::string("certificate revoked at 2026-12-01T10:00:00Z by ") + std::string(80, 'x');
  for (int width : {100, 80}) {
    const std::string table = FormatAuditTable({row, Refusal("/x")}, width);
    size_t start = 0;
    std::vector<std::string> lines;
    for (size_t end; (end = table.find('\n', start)) != std::string::npos; start = end + 1) {
      lines.push_back(table.substr(start, end - start));
    }
    ASSERT_EQ(lines.size(), 3u) << table;
    for (const std::string& line : lines) EXPECT_LE(TextColumns(line), size_t(width)) << line;
    EXPECT_EQ(lines[0].find("from"), std::string::npos) << "the peer goes\n" << table;
    EXPECT_NE(lines[1].find("2026-12-04T22:51:37Z  "), std::string::npos) << table;
    EXPECT_NE(lines[1].find("…"), std::string::npos) << table;
    // "call" and "outcome" start where their cells start (in columns: "…" is three bytes).
    auto column = [](const std::string& line, const std::string& text) {
      const size_t at = line.find(text);
      return at == std::string::npos ? at : TextColumns(line.substr(0, at));
    };
    EXPECT_EQ(column(lines[0], "call"), column(lines[1], "DashboardRead")) << table;
    EXPECT_EQ(column(lines[0], "outcome"), column(lines[1], "refused")) << table;
    EXPECT_EQ(column(lines[0], "outcome"), column(lines[2], "refused")) << table;
  }
  // Wide enough, nothing gives way.
  const std::string wide = FormatAuditTable({row}, kMaxTextWidth);
  EXPECT_NE(wide.find(row.reason), std::string::npos) << wide;
  EXPECT_NE(wide.find(row.at), std::string::npos) << wide;
}

TEST(AuditFormatTest, JsonKeepsControlCharactersEscapedAndSurvivesBytesThatAreNotUtf8) {
  const std::string json_text = FormatAuditJson({Refusal("/x\n\x1b[2J\xff")});
  EXPECT_EQ(json_text.find('\x1b'), std::string::npos);
  auto json = nlohmann::json::parse(json_text);
  EXPECT_EQ(json["audit"][0]["subject"], "/x\n\x1b[2J\xef\xbf\xbd");
  EXPECT_EQ(FormatAuditTable({}), "no audited calls\n");
}

// "24h" counts back from the store's clock: at 2099-12-02T10:00Z, a call of 23 hours before is
// shown and one of 25 hours before is not (by the machine's date, both are yet to come).
TEST(AuditFormatTest, HoursBackCountFromTheStoresClock) {
  FakeClock clock;
  clock.Advance(std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::from_time_t(4099888800) - clock.WallNow()));  // 2099-12-02T10Z
  auto opened = Store::Open(":memory:", clock);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Store& store = **opened;
  AuditRow early = Refusal("/early");
  early.at = "2099-12-01T09:00:00.000Z";
  AuditRow late = Refusal("/late");
  late.at = "2099-12-01T11:00:00.000Z";
  ASSERT_TRUE(store.AppendAudit(early).ok());
  ASSERT_TRUE(store.AppendAudit(late).ok());
  AuditQuery query;
  query.since = "24h";
  query.format = "json";
  auto text = AuditText(store, query);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto json = nlohmann::json::parse(*text);
  ASSERT_EQ(json["audit"].size(), 1u) << *text;
  EXPECT_EQ(json["audit"][0]["subject"], "/late");
  EXPECT_EQ(json["audit"][0]["at"], "2099-12-01T11:00:00.000Z");
  EXPECT_EQ(*AuditSinceBound("24h", clock.WallNow()), "2099-12-01T10:00:00.000Z");
}

}  // namespace
}  // namespace benchlab
