#include "common/git_rev.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/support/git_repo.h"
#include "tests/unit/support/temp_dir.h"

namespace benchlab {
namespace {

TEST(CheckRevisionTextTest, AcceptsObjectIdsAndRefNames) {
  for (const char* rev : {"abc1234", "0123456789abcdef0123456789abcdef01234567", "main", "v1.2.3",
                          "release/2024-06", "feature/x_y", "HEAD", "a.b/c-d", "HEAD~3", "main^",
                          "v1.2^2", "abc1234~1^2~10", "release/2024-06~999999", "a~1~"}) {
    EXPECT_TRUE(CheckRevisionText(rev).ok()) << rev << ": " << CheckRevisionText(rev).message();
  }
}

// What an agent lists is what a coordinator takes (ListCommits): escaped subjects with
// backslashes and tabs, and long ones cut between characters, all pass IsListedSubject.
TEST(ListedSubjectTest, EscapesCutsBetweenCharactersAndIsAccepted) {
  EXPECT_EQ(ListedSubject("fix: parse \"a\\b\"\r\n"), "fix: parse \"a\\\\b\"");
  EXPECT_EQ(ListedSubject("tab\there\x1b[2J"), "tab\\there\\x1b[2J");
  EXPECT_EQ(ListedSubject("bad \xff byte"), "bad \\xff byte");

  // 1 + 150 two-byte characters: byte 256 is the second byte of the 128th.
  std::string accents = "x";
  for (int i = 0; i < 150; ++i) accents += "\u00e9";
  const std::string cut = ListedSubject(accents);
  EXPECT_EQ(cut.size(), 255u);
  EXPECT_EQ(cut, accents.substr(0, 255));
  // An escape near the end that does not fit is cut too, and the rest stays printable.
  const std::string escapes = ListedSubject(std::string(250, 'a') + "\x01\x02");
  EXPECT_EQ(escapes.size(), kMaxCommitSubjectBytes);

  for (const std::string& listed : {ListedSubject("a\\b"), ListedSubject("tab\tx"), cut, escapes,
                                    std::string("\u00e9t\u00e9")}) {
    EXPECT_TRUE(IsListedSubject(listed)) << listed;
  }
  for (const std::string& refused :
       {std::string("bad\x1b[2J"), std::string("two\nlines"), accents.substr(0, 256),
        std::string(kMaxCommitSubjectBytes + 1, 'a'), std::string("rtl \u202e")}) {
    EXPECT_FALSE(IsListedSubject(refused)) << refused;
  }
}

TEST(CheckRevisionTextTest, RefusesWhatGitWouldNotTakeNamingTheText) {
  const std::vector<std::string> bad = {"",
                                        "-rf",
                                        "--upload-pack=x",
                                        "a..b",
                                        "a b",
                                        "~1",
                                        "^",
                                        "a~1234567",
                                        "a^{commit}",
                                        "-x~1",
                                        "a..b~1",
                                        "a:b",
                                        "a?",
                                        "a*",
                                        "a[0]",
                                        "a\\b",
                                        "a@{1}",
                                        "@",
                                        "x.lock",
                                        "dir/x.lock/y",
                                        "/abs",
                                        "trailing/",
                                        "a//b",
                                        "dot.",
                                        ".hidden",
                                        "dir/.hidden",
                                        std::string("nl\nx"),
                                        std::string("esc\x1b[2J"),
                                        std::string(201, 'r')};
  for (const std::string& rev : bad) {
    Status st = CheckRevisionText(rev);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << rev;
    EXPECT_NE(st.message().find("revision \""), std::string::npos) << st.message();
    // One line, whatever the text held.
    EXPECT_EQ(st.message().find('\n'), std::string::npos) << st.message();
    EXPECT_EQ(st.message().find('\x1b'), std::string::npos) << st.message();
  }
  EXPECT_NE(CheckRevisionText("a..b").message().find("\"a..b\""), std::string::npos);
  EXPECT_NE(CheckRevisionText(std::string("nl\nx")).message().find("nl\\nx"), std::string::npos);
  // Exactly 200 characters is a ref name; 6 hex digits is a (short) ref name too.
  EXPECT_TRUE(CheckRevisionText(std::string(200, 'r')).ok());
  EXPECT_TRUE(CheckRevisionText("abcdef").ok());
}

class GitRangeTest : public ::testing::Test {
 protected:
  // main: c1 - c2 - m (merges side: s1 - s2, branched from c1) - c3
  void SetUp() override {
    repo_.Write("f", "1");
    c1_ = repo_.CommitAll("one");
    repo_.Git({"checkout", "-q", "-b", "side"});
    repo_.Write("s", "a");
    s1_ = repo_.CommitAll("side a");
    repo_.Write("s", "b");
    s2_ = repo_.CommitAll("side b");
    repo_.Git({"checkout", "-q", "main"});
    repo_.Write("f", "2");
    c2_ = repo_.CommitAll("two");
    m_ = repo_.Merge("side", "merge side");
    repo_.Write("f", "3");
    c3_ = repo_.CommitAll("three");
  }

  TempDir tmp_;
  TestGitRepo repo_{tmp_.path()};
  std::string c1_, s1_, s2_, c2_, m_, c3_;
};

TEST_F(GitRangeTest, ResolvesBranchesAndIds) {
  auto main = ResolveCommit(repo_.dir(), "main");
  ASSERT_TRUE(main.ok()) << main.status().message();
  EXPECT_EQ(*main, c3_);
  auto side = ResolveCommit(repo_.dir(), "side");
  ASSERT_TRUE(side.ok()) << side.status().message();
  EXPECT_EQ(*side, s2_);
  auto short_id = ResolveCommit(repo_.dir(), c2_.substr(0, 10));
  ASSERT_TRUE(short_id.ok()) << short_id.status().message();
  EXPECT_EQ(*short_id, c2_);
  // Ancestry: main~1 is the merge, main~2 its first parent c2, main~1^2 the merged side's tip.
  const std::pair<const char*, std::string*> ancestry[] = {
      {"main~1", &m_}, {"main~2", &c2_}, {"main~1^2", &s2_}, {"main^^", &c2_}};
  for (const auto& [rev, want] : ancestry) {
    auto got = ResolveCommit(repo_.dir(), rev);
    ASSERT_TRUE(got.ok()) << rev << ": " << got.status().message();
    EXPECT_EQ(*got, *want) << rev;
  }
  EXPECT_EQ(ResolveCommit(repo_.dir(), "main~9").status().code(), StatusCode::kNotFound);
}

TEST_F(GitRangeTest, AnUnknownRevisionIsNotFound) {
  auto r = ResolveCommit(repo_.dir(), "no-such-branch");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("no-such-branch"), std::string::npos);
  auto bad = ResolveCommit(repo_.dir(), "--output=/tmp/x");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(GitRangeTest, ADirectoryThatIsNoRepositoryIsAnError) {
  TempDir empty;
  auto r = ResolveCommit(empty.path(), "main");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().message();
}

TEST_F(GitRangeTest, FirstParentRangeIsOldestFirstWithoutTheMergedBranch) {
  auto range = FirstParentRange(repo_.dir(), c1_, c3_, 100);
  ASSERT_TRUE(range.ok()) << range.status().message();
  ASSERT_EQ(range->size(), 3u);
  EXPECT_EQ((*range)[0].oid, c2_);
  EXPECT_EQ((*range)[0].subject, "two");
  EXPECT_EQ((*range)[1].oid, m_);
  EXPECT_EQ((*range)[1].subject, "merge side");
  EXPECT_EQ((*range)[2].oid, c3_);
  EXPECT_EQ((*range)[2].subject, "three");
  // Names resolve too.
  auto named = FirstParentRange(repo_.dir(), c2_, "main", 100);
  ASSERT_TRUE(named.ok()) << named.status().message();
  ASSERT_EQ(named->size(), 2u);
  EXPECT_EQ((*named)[0].oid, m_);
}

TEST_F(GitRangeTest, TheCountLimitIsNamed) {
  auto range = FirstParentRange(repo_.dir(), c1_, c3_, 2);
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(range.status().message().find("holds 3 commits, over the limit of 2"),
            std::string::npos)
      << range.status().message();
  EXPECT_TRUE(FirstParentRange(repo_.dir(), c1_, c3_, 3).ok());
}

TEST_F(GitRangeTest, GoodMustBeAnAncestorOfBad) {
  auto backwards = FirstParentRange(repo_.dir(), c3_, c1_, 100);
  ASSERT_FALSE(backwards.ok());
  EXPECT_EQ(backwards.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(backwards.status().message().find("not an ancestor"), std::string::npos);
  // A branch commit is an ancestor of the merge but not of c2.
  auto sideways = FirstParentRange(repo_.dir(), s1_, c2_, 100);
  ASSERT_FALSE(sideways.ok());
  EXPECT_EQ(sideways.status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(GitRangeTest, GoodMustBeOnBadsFirstParentLine) {
  // s2 is an ancestor of c3, through the merge's second parent: the first-parent range from it
  // would start at c2, whose parent is c1, not s2, so c2 would be judged against a commit it
  // does not contain.
  auto merged = FirstParentRange(repo_.dir(), s2_, c3_, 100);
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(merged.status().message().find("first-parent"), std::string::npos)
      << merged.status().message();
  auto line = FirstParentRange(repo_.dir(), c2_, c3_, 100);
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  EXPECT_EQ(line->size(), 2u);
}

}  // namespace
}  // namespace benchlab
