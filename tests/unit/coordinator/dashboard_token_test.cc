#include "coordinator/dashboard_token.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <set>

#include "common/clock.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;
using std::chrono::system_clock;

TEST(DashboardTokenTest, TokensAreRandomBase64UrlOfTheRightLength) {
  std::set<std::string> seen;
  for (int i = 0; i < 64; ++i) {
    auto token = NewDashboardToken();
    ASSERT_TRUE(token.ok());
    EXPECT_TRUE(std::regex_match(*token, std::regex("blt_[A-Za-z0-9_-]{43}"))) << *token;
    seen.insert(*token);
  }
  EXPECT_EQ(seen.size(), 64u);
}

TEST(DashboardTokenTest, TheHashIsSha256InHex) {
  // SHA-256("abc"), FIPS 180-2 appendix B.1.
  EXPECT_EQ(DashboardTokenHash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_NE(DashboardTokenHash("blt_a"), DashboardTokenHash("blt_b"));
}

TEST(DashboardTokenTest, ExpiryIsRelativeOrADateInTheFuture) {
  const auto now = system_clock::time_point(std::chrono::seconds(1'800'000'000));  // 2027-01-15
  auto never = ParseTokenExpiry("", now);
  ASSERT_TRUE(never.ok());
  EXPECT_EQ(*never, "");
  auto hours = ParseTokenExpiry("12h", now);
  ASSERT_TRUE(hours.ok());
  EXPECT_EQ(*hours, FormatIsoTime(now + std::chrono::hours(12)));
  auto days = ParseTokenExpiry("30d", now);
  ASSERT_TRUE(days.ok());
  EXPECT_EQ(*days, FormatIsoTime(now + std::chrono::hours(24 * 30)));
  auto date = ParseTokenExpiry("2027-02-01", now);
  ASSERT_TRUE(date.ok()) << date.status().message();
  EXPECT_EQ(*date, "2027-02-01T00:00:00.000Z");
  auto minute = ParseTokenExpiry("2027-02-01T12:30", now);
  ASSERT_TRUE(minute.ok()) << minute.status().message();
  EXPECT_EQ(*minute, "2027-02-01T12:30:00.000Z");
  for (const char* bad : {"0d", "tomorrow", "30", "2027-13-45", "2026-01-01", "-1d"}) {
    auto refused = ParseTokenExpiry(bad, now);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

class DashboardTokenStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::path(::testing::TempDir()) /
        ("token-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = Store::Open((dir_ / "lab.db").string());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  std::string Add(const std::string& name, const std::string& role, const std::string& expires) {
    auto token = NewDashboardToken();
    EXPECT_TRUE(token.ok());
    EXPECT_TRUE(store_
                    ->AddToken({name, role, DashboardTokenHash(*token), "2026-12-01T00:00:00.000Z",
                                expires, ""})
                    .ok());
    return *token;
  }
  fs::path dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(DashboardTokenStoreTest, OnlyTheHashIsStoredAndAStoredTokenChecks) {
  const std::string token = Add("alice", "operator", "");
  auto rows = store_->ListTokens();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].hash, DashboardTokenHash(token));
  EXPECT_EQ((*rows)[0].hash.find(token.substr(4)), std::string::npos);
  auto who = CheckDashboardToken(*store_, token, system_clock::now());
  ASSERT_TRUE(who.ok()) << who.status().message();
  EXPECT_EQ(who->name, "alice");
  EXPECT_EQ(who->role, "operator");
}

TEST_F(DashboardTokenStoreTest, UnknownMalformedExpiredAndRevokedTokensAreRefused) {
  const std::string expiring = Add("bob", "viewer", "2027-01-01T00:00:00.000Z");
  const auto before = system_clock::time_point(std::chrono::seconds(1'790'000'000));  // 2026-09
  const auto after = system_clock::time_point(std::chrono::seconds(1'800'000'000));   // 2027-01
  EXPECT_TRUE(CheckDashboardToken(*store_, expiring, before).ok());
  auto expired = CheckDashboardToken(*store_, expiring, after);
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(expired.status().message().find("expired"), std::string::npos);

  auto other = NewDashboardToken();
  ASSERT_TRUE(other.ok());
  for (const std::string& bad :
       {*other, std::string("blt_"), std::string("hunter2"), expiring + "x"}) {
    auto refused = CheckDashboardToken(*store_, bad, before);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated) << bad;
    if (bad.size() > 8) {
      EXPECT_EQ(refused.status().message().find(bad), std::string::npos);
    }
  }

  const std::string carol = Add("carol", "operator", "");
  ASSERT_TRUE(store_->RevokeToken("carol", "2026-12-02T00:00:00.000Z").ok());
  auto revoked = CheckDashboardToken(*store_, carol, before);
  ASSERT_FALSE(revoked.ok());
  EXPECT_NE(revoked.status().message().find("revoked"), std::string::npos);
  EXPECT_EQ(store_->RevokeToken("carol", "2026-12-03T00:00:00.000Z").code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->RevokeToken("dave", "2026-12-03T00:00:00.000Z").code(), StatusCode::kNotFound);
}

TEST_F(DashboardTokenStoreTest, ANameIsUsedOnceEvenAfterRevocation) {
  Add("erin", "viewer", "");
  ASSERT_TRUE(store_->RevokeToken("erin", "2026-12-02T00:00:00.000Z").ok());
  auto again = NewDashboardToken();
  ASSERT_TRUE(again.ok());
  const Status st = store_->AddToken(
      {"erin", "viewer", DashboardTokenHash(*again), "2026-12-02T00:00:00.000Z", "", ""});
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists);
  const Status role = store_->AddToken(
      {"frank", "admin", DashboardTokenHash(*again), "2026-12-02T00:00:00.000Z", "", ""});
  EXPECT_FALSE(role.ok()) << "the table takes viewer and operator only";
}

}  // namespace
}  // namespace benchlab
