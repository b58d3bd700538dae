#include "common/owner_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace benchlab {
namespace {

class OwnerLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/owner_lock_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = (dir_ / "lab.db.lock").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(OwnerLockTest, ASecondHolderIsRefusedWithTheFirstsName) {
  auto first = OwnerLock::Acquire(path_, "lab.db", "benchlab coordinator, pid 4242");
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = OwnerLock::Acquire(path_, "lab.db", "benchlab coordinator, pid 1");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("lab.db is in use by benchlab coordinator, pid 4242"),
            std::string::npos)
      << second.status().message();
}

TEST_F(OwnerLockTest, TheHolderCanSayMoreOnceItKnowsIt) {
  auto first = OwnerLock::Acquire(path_, "lab.db", "benchlab coordinator, pid 4242");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->SetHolder("benchlab coordinator, pid 4242, listening on 127.0.0.1:7700").ok());
  auto second = OwnerLock::Acquire(path_, "lab.db", "x");
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("pid 4242, listening on 127.0.0.1:7700 (it holds"),
            std::string::npos)
      << second.status().message();
}

TEST_F(OwnerLockTest, ReleasedOnDestructionAndOnMove) {
  {
    auto first = OwnerLock::Acquire(path_, "lab.db", "one");
    ASSERT_TRUE(first.ok());
    OwnerLock moved = std::move(first).value();
    EXPECT_FALSE(OwnerLock::Acquire(path_, "lab.db", "two").ok());
  }
  auto again = OwnerLock::Acquire(path_, "lab.db", "two");
  EXPECT_TRUE(again.ok()) << again.status().message();
}

// Another process holds it: refused with that process's own words, and free once it exits,
// however it exits (here _exit without releasing anything).
TEST_F(OwnerLockTest, AnotherProcessHoldsItUntilItExits) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    auto lock = OwnerLock::Acquire(path_, "lab.db", ProcessHolder("coordinator"));
    const char byte = lock.ok() ? 'y' : 'n';
    if (write(ready[1], &byte, 1) != 1) _exit(2);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    _exit(0);
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  ASSERT_EQ(byte, 'y');
  auto refused = OwnerLock::Acquire(path_, "lab.db", ProcessHolder("coordinator"));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("benchlab coordinator, pid " + std::to_string(child)),
            std::string::npos)
      << refused.status().message();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(OwnerLock::Acquire(path_, "lab.db", "after").ok());
}

// A child the holder starts (a target, a load tool) must not keep the lock after the holder is
// gone: the descriptor is close-on-exec.
TEST_F(OwnerLockTest, ChildrenDoNotInheritTheLock) {
  pid_t child = -1;
  {
    auto lock = OwnerLock::Acquire(path_, "lab.db", "parent");
    ASSERT_TRUE(lock.ok());
    child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      execlp("sleep", "sleep", "2", static_cast<char*>(nullptr));
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the exec has happened
  }
  auto after = OwnerLock::Acquire(path_, "lab.db", "next");
  EXPECT_TRUE(after.ok()) << after.status().message();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

TEST_F(OwnerLockTest, NeverThroughASymbolicLink) {
  const std::string target = (dir_ / "elsewhere").string();
  std::filesystem::create_symlink(target, path_);
  auto lock = OwnerLock::Acquire(path_, "lab.db", "x");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), StatusCode::kIoError);
  EXPECT_FALSE(std::filesystem::exists(target));
}

}  // namespace
}  // namespace benchlab
