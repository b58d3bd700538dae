#include "agent/server/agent_state.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace benchlab {
namespace {

namespace fs = std::filesystem;

TEST(StateDirTest, SystemdThenRootThenXdgThenHome) {
  StateEnv env;
  env.state_directory = "/var/lib/benchlab-a:/var/lib/other";
  env.home = "/home/u";
  EXPECT_EQ(*DefaultStateDir("a", env), "/var/lib/benchlab-a") << "the first path";
  env.state_directory = "";
  env.root = true;
  EXPECT_EQ(*DefaultStateDir("load-1", env), "/var/lib/benchlab/agent-load-1");
  env.root = false;
  env.xdg_state_home = "/home/u/state";
  EXPECT_EQ(*DefaultStateDir("load-1", env), "/home/u/state/benchlab/agent-load-1");
  env.xdg_state_home = "relative";  // not absolute: ignored, as the XDG specification says
  EXPECT_EQ(*DefaultStateDir("load-1", env), "/home/u/.local/state/benchlab/agent-load-1");
  env.home = "";
  auto none = DefaultStateDir("load-1", env);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("set state_dir"), std::string::npos);
}

class InstanceProofTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/benchlab-state-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(InstanceProofTest, MadeOnceKeptPrivateAndReused) {
  auto first = LoadInstanceProof(dir_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->size(), 64u);
  EXPECT_EQ(first->find_first_not_of("0123456789abcdef"), std::string::npos);
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/instance_proof").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = LoadInstanceProof(dir_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first) << "a restarted agent proves it is the same instance";
}

TEST_F(InstanceProofTest, AnUnsafeOrDamagedFileIsRefused) {
  ASSERT_TRUE(LoadInstanceProof(dir_).ok());
  const std::string path = dir_ + "/instance_proof";
  chmod(path.c_str(), 0644);
  auto readable = LoadInstanceProof(dir_);
  ASSERT_FALSE(readable.ok());
  EXPECT_EQ(readable.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(readable.status().message().find(path), std::string::npos);

  fs::remove(path);
  fs::create_symlink(dir_ + "/elsewhere", path);
  EXPECT_EQ(LoadInstanceProof(dir_).status().code(), StatusCode::kPermissionDenied);

  fs::remove(path);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_EQ(write(fd, "xyz\n", 4), 4);
  close(fd);
  auto damaged = LoadInstanceProof(dir_);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find("expected 64 hex digits"), std::string::npos);
}

}  // namespace
}  // namespace benchlab
