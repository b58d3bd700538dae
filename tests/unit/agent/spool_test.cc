#include "agent/spool.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace benchlab {
namespace {

namespace fs = std::filesystem;

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/benchlab-spool-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = std::string(tmpl) + "/spool";
  }
  void TearDown() override { fs::remove_all(fs::path(dir_).parent_path()); }
  std::string dir_;
};

TEST_F(SpoolTest, PutListRemove) {
  auto spool = Spool::Open(dir_);
  ASSERT_TRUE(spool.ok()) << spool.status().ToString();
  ASSERT_TRUE((*spool)->Put("w-2.load", std::string("b\0c", 3)).ok());
  ASSERT_TRUE((*spool)->Put("w-1.server", "a").ok());
  auto records = (*spool)->List();
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0], (std::pair<std::string, std::string>{"w-1.server", "a"}));
  EXPECT_EQ((*records)[1].second, std::string("b\0c", 3));
  ASSERT_TRUE((*spool)->Remove("w-1.server").ok());
  EXPECT_TRUE((*spool)->Remove("w-1.server").ok()) << "acknowledging twice is harmless";
  EXPECT_EQ((*spool)->List()->size(), 1u);
}

TEST_F(SpoolTest, SurvivesReopenAndDropsHalfWrittenTemporaries) {
  {
    auto spool = Spool::Open(dir_);
    ASSERT_TRUE((*spool)->Put("kept", "result").ok());
  }
  // A crash in the middle of a Put leaves only a temporary file, which is never a record.
  std::ofstream(dir_ + "/torn.rec.tmp") << "half";
  auto reopened = Spool::Open(dir_);
  ASSERT_TRUE(reopened.ok());
  auto records = (*reopened)->List();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].first, "kept");
  EXPECT_FALSE(fs::exists(dir_ + "/torn.rec.tmp"));
}

TEST_F(SpoolTest, KeysCannotEscapeTheDirectory) {
  auto spool = Spool::Open(dir_);
  EXPECT_EQ((*spool)->Put("../evil", "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*spool)->Put("a/b", "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*spool)->Put("", "x").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsSpoolKey("7-nginx-hello-c16-r1-a1.load"));
}

TEST_F(SpoolTest, OverwritingAKeyReplacesTheRecord) {
  auto spool = Spool::Open(dir_);
  ASSERT_TRUE((*spool)->Put("k", "one").ok());
  ASSERT_TRUE((*spool)->Put("k", "two").ok());
  auto records = (*spool)->List();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].second, "two");
}

}  // namespace
}  // namespace benchlab
