#include "agent/spool.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace benchlab {
namespace {

namespace fs = std::filesystem;

// Window tokens as a coordinator makes them: 16 to 128 characters of [A-Za-z0-9._:-].
const std::string kWindow = "w-0123456789abcdef";
const std::string kOtherWindow = "w-fedcba9876543210";

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/benchlab-spool-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = std::string(tmpl) + "/spool";
  }
  void TearDown() override { fs::remove_all(fs::path(dir_).parent_path()); }

  std::vector<SpoolRecord> All(Spool& spool) {
    auto page = spool.Page("", UINT64_MAX);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    return page.ok() ? *page : std::vector<SpoolRecord>{};
  }

  std::string dir_;
};

TEST_F(SpoolTest, PutPageRemove) {
  auto spool = Spool::Open(dir_);
  ASSERT_TRUE(spool.ok()) << spool.status().ToString();
  ASSERT_TRUE((*spool)->Put("w-2.load", kWindow, std::string("b\0c", 3)).ok());
  ASSERT_TRUE((*spool)->Put("w-1.server", kOtherWindow, "a").ok());
  auto records = All(**spool);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].key, "w-1.server");
  EXPECT_EQ(records[0].window, kOtherWindow);
  EXPECT_EQ(records[0].payload, "a");
  EXPECT_EQ(records[1].payload, std::string("b\0c", 3));
  ASSERT_TRUE((*spool)->Remove("w-1.server").ok());
  EXPECT_TRUE((*spool)->Remove("w-1.server").ok()) << "acknowledging twice is harmless";
  EXPECT_EQ(All(**spool).size(), 1u);
}

TEST_F(SpoolTest, SurvivesReopenAndDropsHalfWrittenTemporaries) {
  {
    auto spool = Spool::Open(dir_);
    ASSERT_TRUE((*spool)->Put("kept", kWindow, "result").ok());
  }
  // A crash in the middle of a Put leaves only a temporary file, which is never a record.
  std::ofstream(dir_ + "/torn.rec.tmp") << "half";
  auto reopened = Spool::Open(dir_);
  ASSERT_TRUE(reopened.ok());
  auto records = All(**reopened);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].key, "kept");
  EXPECT_EQ(records[0].window, kWindow);
  EXPECT_FALSE(fs::exists(dir_ + "/torn.rec.tmp"));
  EXPECT_EQ((*reopened)->bytes_held(), fs::file_size(dir_ + "/kept.rec"));
}

TEST_F(SpoolTest, KeysCannotEscapeTheDirectory) {
  auto spool = Spool::Open(dir_);
  EXPECT_EQ((*spool)->Put("../evil", kWindow, "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*spool)->Put("a/b", kWindow, "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*spool)->Put("", kWindow, "x").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsSpoolKey("7-nginx-hello-c16-r1-a1.load"));
}

TEST_F(SpoolTest, OverwritingAKeyReplacesTheRecord) {
  auto spool = Spool::Open(dir_);
  ASSERT_TRUE((*spool)->Put("k", kWindow, "one").ok());
  ASSERT_TRUE((*spool)->Put("k", kWindow, "two").ok());
  auto records = All(**spool);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].payload, "two");
}

TEST_F(SpoolTest, OnlyTheWindowThatSpooledAResultRemovesIt) {
  auto spool = Spool::Open(dir_);
  ASSERT_TRUE((*spool)->Put("7-a-c1-r1-a1.load", kWindow, "result").ok());
  auto other = (*spool)->RemoveForWindow("7-a-c1-r1-a1.load", kOtherWindow);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(*other);
  EXPECT_FALSE(*(*spool)->RemoveForWindow("7-a-c1-r1-a1.load", ""));
  EXPECT_FALSE(*(*spool)->RemoveForWindow("7-a-c1-r1-a1.load", kWindow.substr(0, 17) + "X"));
  ASSERT_EQ(All(**spool).size(), 1u) << "another window's acknowledgement is ignored";
  auto own = (*spool)->RemoveForWindow("7-a-c1-r1-a1.load", kWindow);
  ASSERT_TRUE(own.ok());
  EXPECT_TRUE(*own);
  EXPECT_TRUE(All(**spool).empty());
  EXPECT_FALSE(*(*spool)->RemoveForWindow("7-a-c1-r1-a1.load", kWindow)) << "already gone";
  EXPECT_EQ((*spool)->Put("k", "short", "x").code(), StatusCode::kInvalidArgument)
      << "a record always names a window token";
}

TEST_F(SpoolTest, AFullSpoolRefusesNewResultsAndDropsNone) {
  auto spool = Spool::Open(dir_, /*max_bytes=*/1000);
  ASSERT_TRUE(spool.ok());
  ASSERT_TRUE((*spool)->Put("a", kWindow, std::string(600, 'a')).ok());
  Status full = (*spool)->Put("b", kWindow, std::string(600, 'b'));
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(full.message().find("spool full"), std::string::npos) << full.message();
  EXPECT_NE(full.message().find("limits.spool_max_bytes = 1000"), std::string::npos)
      << full.message();
  auto records = All(**spool);
  ASSERT_EQ(records.size(), 1u) << "the unacknowledged result stays";
  EXPECT_EQ(records[0].key, "a");
  // Replacing a record counts only the difference; acknowledging frees room.
  EXPECT_TRUE((*spool)->Put("a", kWindow, std::string(700, 'a')).ok());
  ASSERT_TRUE((*spool)->Remove("a").ok());
  EXPECT_EQ((*spool)->bytes_held(), 0u);
  EXPECT_TRUE((*spool)->Put("b", kWindow, std::string(600, 'b')).ok());
}

TEST_F(SpoolTest, PagesStayUnderTheirSizeAndALargeRecordComesAlone) {
  auto spool = Spool::Open(dir_);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE((*spool)->Put("k" + std::to_string(i), kWindow, std::string(100, 'x')).ok());
  }
  ASSERT_TRUE((*spool)->Put("k5-big", kWindow, std::string(5000, 'y')).ok());
  std::vector<std::string> seen;
  std::string after;
  size_t pages = 0;
  for (;;) {
    auto page = (*spool)->Page(after, 350);
    ASSERT_TRUE(page.ok());
    if (page->empty()) break;
    ++pages;
    size_t bytes = 0;
    for (const auto& r : *page) bytes += r.key.size() + r.payload.size();
    if (page->size() > 1) {
      EXPECT_LE(bytes, 350u);
    }
    for (const auto& r : *page) seen.push_back(r.key);
    after = page->back().key;
  }
  EXPECT_EQ(seen.size(), 11u) << "every record, each once";
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(pages, 5u) << "3+3 small ones, the big one alone, then 3+1";
}

TEST_F(SpoolTest, APageHoldsAtMostMaxRecords) {
  // The coordinator takes at most 64 results per OfferResults call, however small they are.
  auto spool = Spool::Open(dir_);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE((*spool)->Put("k" + std::to_string(i), kWindow, "x").ok());
  }
  auto first = (*spool)->Page("", UINT64_MAX, 4);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 4u);
  auto second = (*spool)->Page(first->back().key, UINT64_MAX, 4);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 4u);
  EXPECT_EQ(second->front().key, "k4");
}

TEST_F(SpoolTest, DirectoryAndRecordsArePrivate) {
  auto spool = Spool::Open(dir_);
  ASSERT_TRUE((*spool)->Put("k", kWindow, "secret-ish").ok());
  struct stat st;
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat((dir_ + "/k.rec").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(SpoolTest, ASymlinkedSpoolDirectoryIsRefused) {
  fs::create_directory(dir_ + "-real");
  fs::create_directory_symlink(dir_ + "-real", dir_);
  auto spool = Spool::Open(dir_);
  ASSERT_FALSE(spool.ok());
  EXPECT_EQ(spool.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(spool.status().message().find("spool_dir " + dir_ + ": is a symbolic link"),
            std::string::npos)
      << spool.status().message();
}

}  // namespace
}  // namespace benchlab
