#include "agent/private_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace benchlab {
namespace {

namespace fs = std::filesystem;

class PrivateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/benchlab-private-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static mode_t ModeOf(const std::string& path) {
    struct stat st;
    EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }

  std::string dir_;
};

TEST_F(PrivateDirTest, MakesMissingDirectoriesPrivate) {
  const std::string path = dir_ + "/a/b/run";
  ASSERT_TRUE(EnsurePrivateDir("run_root", path).ok());
  EXPECT_EQ(ModeOf(dir_ + "/a"), 0700u);
  EXPECT_EQ(ModeOf(path), 0700u);
  EXPECT_TRUE(EnsurePrivateDir("run_root", path + "/").ok()) << "an existing private one is fine";
}

TEST_F(PrivateDirTest, RefusesASymbolicLinkNamingKeyAndPath) {
  fs::create_directory(dir_ + "/elsewhere");
  fs::create_directory_symlink(dir_ + "/elsewhere", dir_ + "/run");
  Status st = EnsurePrivateDir("run_root", dir_ + "/run");
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(st.message().rfind("run_root " + dir_ + "/run: is a symbolic link", 0), 0u)
      << st.message();
  // A trailing slash would make lstat follow the link: it is refused all the same.
  EXPECT_EQ(EnsurePrivateDir("run_root", dir_ + "/run/").code(), StatusCode::kPermissionDenied);
}

TEST_F(PrivateDirTest, RefusesOneOthersMayWriteTo) {
  fs::create_directory(dir_ + "/shared");
  chmod((dir_ + "/shared").c_str(), 0777);
  Status st = EnsurePrivateDir("spool_dir", dir_ + "/shared");
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(st.message().find("spool_dir " + dir_ +
                              "/shared: is writable by group or others "
                              "(mode 0777)"),
            std::string::npos)
      << st.message();
}

TEST_F(PrivateDirTest, RefusesOneOwnedByAnotherUser) {
  if (geteuid() != 0) {
    // Not root: a directory of another user is at hand anyway.
    Status st = EnsurePrivateDir("state_dir", "/");
    EXPECT_EQ(st.code(), StatusCode::kPermissionDenied) << st.ToString();
    return;
  }
  fs::create_directory(dir_ + "/theirs");
  ASSERT_EQ(chown((dir_ + "/theirs").c_str(), 65534, 65534), 0);
  Status st = EnsurePrivateDir("state_dir", dir_ + "/theirs");
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(st.message().find("is owned by uid 65534, not by the agent's uid 0"), std::string::npos)
      << st.message();
}

TEST_F(PrivateDirTest, RefusesAFileAndARelativePath) {
  fs::create_directory(dir_ + "/x");
  EXPECT_EQ(EnsurePrivateDir("run_root", "relative/run").code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(MakePrivateDir(dir_ + "/fresh").ok());
  EXPECT_EQ(ModeOf(dir_ + "/fresh"), 0700u);
  EXPECT_FALSE(MakePrivateDir(dir_ + "/fresh").ok()) << "a per-window directory is always new";
}

}  // namespace
}  // namespace benchlab
