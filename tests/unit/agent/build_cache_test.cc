#include "agent/build_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/unit/support/git_repo.h"
#include "tests/unit/support/temp_dir.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

size_t LinesIn(const std::string& path) {
  std::string text = ReadText(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Gone, or a zombie waiting for its reaper.
bool ProcessGone(pid_t pid) {
  for (int i = 0; i < 100; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    if (line.empty() || line.find(") Z") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

class BuildCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(repo_dir_);
    repo_ = std::make_unique<TestGitRepo>(repo_dir_);
    for (int i = 1; i <= 4; ++i) {
      repo_->Write("version.txt", "v" + std::to_string(i) + "\n");
      commits_.push_back(repo_->CommitAll("commit " + std::to_string(i)));
    }
  }

  // A recipe whose one step copies the checkout's version.txt into {out} and counts its runs.
  BuildRecipe CopyRecipe(const std::string& extra = "") const {
    BuildRecipe r;
    r.source = repo_dir_;
    r.build = {{"/bin/sh", "-c",
                "cp {src}/version.txt {out}/version.txt && echo run >> " + runs_ + extra}};
    r.time_limit = std::chrono::seconds(60);
    return r;
  }

  std::unique_ptr<BuildCache> OpenCache(uint64_t max_bytes = kDefaultBuildCacheBytes) const {
    auto cache = BuildCache::Open(cache_dir_, max_bytes);
    EXPECT_TRUE(cache.ok()) << cache.status().message();
    return cache.ok() ? std::move(cache).value() : nullptr;
  }

  TempDir tmp_;
  const std::string repo_dir_ = tmp_.path() + "/repo";
  const std::string cache_dir_ = tmp_.path() + "/cache";
  const std::string runs_ = tmp_.path() + "/runs";
  std::unique_ptr<TestGitRepo> repo_;
  std::vector<std::string> commits_;
};

TEST_F(BuildCacheTest, BuildsEachCommitFromItsOwnCheckout) {
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  const BuildRecipe recipe = CopyRecipe();
  auto first = cache->Build(recipe, commits_[0]);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE(first->ok) << first->failure;
  EXPECT_EQ(ReadText(first->output_dir + "/version.txt"), "v1\n");
  auto third = cache->Build(recipe, commits_[2]);
  ASSERT_TRUE(third.ok()) << third.status().message();
  ASSERT_TRUE(third->ok) << third->failure;
  EXPECT_EQ(ReadText(third->output_dir + "/version.txt"), "v3\n");
  EXPECT_EQ(third->commit, commits_[2]);
  EXPECT_EQ(third->key, BuildCache::Key(commits_[2], recipe));
  EXPECT_EQ(third->output_bytes, 3u);
  EXPECT_NE(first->key, third->key);
  // The checkouts are gone, from the disk and from the source's worktree list.
  EXPECT_EQ(repo_->Git({"worktree", "list", "--porcelain"}).find("worktree " + cache_dir_),
            std::string::npos);
  for (const auto& item : fs::directory_iterator(cache_dir_)) {
    EXPECT_FALSE(item.path().filename().string().starts_with(".staging-")) << item.path();
    EXPECT_FALSE(fs::exists(item.path() / "src")) << item.path();
  }
  // The source's own work tree is untouched.
  EXPECT_EQ(ReadText(repo_dir_ + "/version.txt"), "v4\n");
}

TEST_F(BuildCacheTest, OutIsWhereTheOutputStaysAndAnUnendedBuildIsRemoved) {
  // A build that bakes {out} in (configure --prefix={out}) finds it where the output lives.
  BuildRecipe recipe = CopyRecipe();
  recipe.build.push_back({"/bin/sh", "-c", "echo {out} > {out}/prefix"});
  const std::string key = BuildCache::Key(commits_[0], recipe);
  // What a build killed with its agent leaves: an entry directory without its result.
  fs::create_directories(cache_dir_ + "/" + key + "/out");
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  EXPECT_FALSE(fs::exists(cache_dir_ + "/" + key)) << "removed when the cache is opened";
  auto built = cache->Build(recipe, commits_[0]);
  ASSERT_TRUE(built.ok()) << built.status().message();
  ASSERT_TRUE(built->ok) << built->failure;
  EXPECT_EQ(built->output_dir, cache_dir_ + "/" + key + "/out");
  EXPECT_EQ(ReadText(built->output_dir + "/prefix"), built->output_dir + "\n");
  EXPECT_FALSE(fs::exists(cache_dir_ + "/" + key + "/result.pending"));
}

TEST_F(BuildCacheTest, AStepThatCannotStartIsNotRecordedAsAFailedBuild) {
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  BuildRecipe recipe = CopyRecipe();
  recipe.build.push_back({"/nonexistent/tool", "{out}"});
  auto built = cache->Build(recipe, commits_[0]);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(built.status().message().find("could not be started"), std::string::npos)
      << built.status().message();
  // Nothing says the commit fails to build: a later call tries again.
  EXPECT_EQ(cache->Lookup(recipe, commits_[0]).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(cache->TotalBytes(), 0u);
}

TEST_F(BuildCacheTest, OneCachePerDirectory) {
  auto first = OpenCache();
  ASSERT_NE(first, nullptr);
  auto second = BuildCache::Open(cache_dir_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("in use by pid"), std::string::npos)
      << second.status().message();
  first.reset();
  EXPECT_TRUE(BuildCache::Open(cache_dir_).ok()) << "free again once the first is gone";
}

TEST_F(BuildCacheTest, ARecordedBuildIsNotRunAgain) {
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  const BuildRecipe recipe = CopyRecipe();
  auto before = cache->Lookup(recipe, commits_[1]);
  EXPECT_EQ(before.status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(cache->Build(recipe, commits_[1]).ok());
  auto again = cache->Build(recipe, commits_[1]);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE(again->ok);
  auto looked = cache->Lookup(recipe, commits_[1]);
  ASSERT_TRUE(looked.ok()) << looked.status().message();
  EXPECT_TRUE(looked->ok);
  EXPECT_EQ(looked->output_dir, again->output_dir);
  EXPECT_EQ(LinesIn(runs_), 1u);
  // A reopened cache finds it too; another recipe is another key.
  cache.reset();  // one cache per directory at a time
  cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  EXPECT_TRUE(cache->Lookup(recipe, commits_[1]).ok());
  EXPECT_EQ(cache->Lookup(CopyRecipe(" # other"), commits_[1]).status().code(),
            StatusCode::kNotFound);
}

TEST_F(BuildCacheTest, TwoCallersOfOneKeyShareOneBuild) {
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  const BuildRecipe recipe = CopyRecipe("; sleep 0.3");
  std::vector<std::thread> callers;
  std::vector<bool> built(3, false);
  for (size_t i = 0; i < built.size(); ++i) {
    callers.emplace_back([&, i] {
      auto r = cache->Build(recipe, commits_[0]);
      built[i] = r.ok() && r->ok;
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(built, std::vector<bool>(3, true));
  EXPECT_EQ(LinesIn(runs_), 1u);
}

TEST_F(BuildCacheTest, AFailedStepIsRecordedWithItsLogAndNotRetried) {
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  BuildRecipe recipe = CopyRecipe();
  recipe.build.push_back({"/bin/sh", "-c", "echo compiling; echo 'error: boom' >&2; exit 2"});
  auto r = cache->Build(recipe, commits_[0]);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->ok);
  EXPECT_TRUE(r->output_dir.empty());
  EXPECT_NE(r->failure.find("step 2 of 2"), std::string::npos) << r->failure;
  EXPECT_NE(r->failure.find("exit status 2"), std::string::npos) << r->failure;
  EXPECT_NE(r->failure.find("compiling | error: boom"), std::string::npos) << r->failure;
  EXPECT_NE(ReadText(r->log_path).find("error: boom"), std::string::npos);
  EXPECT_FALSE(fs::exists(r->entry_dir + "/out"));
  auto looked = cache->Lookup(recipe, commits_[0]);
  ASSERT_TRUE(looked.ok()) << looked.status().message();
  EXPECT_FALSE(looked->ok);
  EXPECT_EQ(looked->failure, r->failure);
  auto again = cache->Build(recipe, commits_[0]);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->ok);
  EXPECT_EQ(LinesIn(runs_), 1u);  // step 1 ran once
}

TEST_F(BuildCacheTest, AStepPastTheTimeLimitIsKilledWithItsGroup) {
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  const std::string pid_file = tmp_.path() + "/sleeper";
  BuildRecipe recipe;
  recipe.source = repo_dir_;
  recipe.build = {{"/bin/sh", "-c", "sleep 30 & echo $! > " + pid_file + "; wait"}};
  recipe.time_limit = std::chrono::milliseconds(1500);
  const auto start = std::chrono::steady_clock::now();
  auto r = cache->Build(recipe, commits_[0]);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_FALSE(r->ok);
  EXPECT_NE(r->failure.find("over the build's time limit of 1500 ms"), std::string::npos)
      << r->failure;
  pid_t sleeper = 0;
  std::ifstream(pid_file) >> sleeper;
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(ProcessGone(sleeper));
  EXPECT_FALSE(cache->Lookup(recipe, commits_[0])->ok);
}

TEST_F(BuildCacheTest, OutputOverTheLimitIsAFailedBuild) {
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  BuildRecipe recipe;
  recipe.source = repo_dir_;
  recipe.build = {{"/bin/sh", "-c", "head -c 5000 /dev/zero > {out}/big"}};
  recipe.max_output_bytes = 4096;
  auto r = cache->Build(recipe, commits_[0]);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->ok);
  EXPECT_EQ(r->failure, "output 5000 bytes over limit 4096");
  EXPECT_FALSE(fs::exists(r->entry_dir + "/out"));
  recipe.max_output_bytes = 5000;
  auto fits = cache->Build(recipe, commits_[0]);
  ASSERT_TRUE(fits.ok()) << fits.status().message();
  EXPECT_TRUE(fits->ok) << fits->failure;
}

TEST_F(BuildCacheTest, TheLeastRecentlyUsedEntriesGoFirst) {
  // Each build's output is 10000 bytes; the rest of an entry is far smaller.
  auto cache = OpenCache(25000);
  ASSERT_NE(cache, nullptr);
  BuildRecipe recipe;
  recipe.source = repo_dir_;
  recipe.build = {{"/bin/sh", "-c", "head -c 10000 /dev/zero > {out}/blob; echo run >> " + runs_}};
  auto built = [&](size_t i) {
    auto r = cache->Build(recipe, commits_[i]);
    return r.ok() && r->ok;
  };
  auto present = [&](size_t i) { return cache->Lookup(recipe, commits_[i]).ok(); };
  ASSERT_TRUE(built(0));
  ASSERT_TRUE(built(1));
  ASSERT_TRUE(present(0));  // 0 is now used after 1
  ASSERT_TRUE(built(2));    // over 25000: 1 goes
  EXPECT_LE(cache->TotalBytes(), 25000u);
  EXPECT_EQ(cache->Lookup(recipe, commits_[1]).status().code(), StatusCode::kNotFound);
  // Looking 1 up above did not bring it back; 0 was used before 2 was built, so 0 goes next.
  ASSERT_TRUE(built(3));
  EXPECT_FALSE(present(0));
  EXPECT_TRUE(present(2));
  EXPECT_TRUE(present(3));
  // The one just built stays even when it alone is over the limit.
  cache.reset();  // one cache per directory at a time
  auto tiny = OpenCache(100);
  ASSERT_NE(tiny, nullptr);
  auto r = tiny->Build(recipe, commits_[1]);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->ok);
  EXPECT_TRUE(tiny->Lookup(recipe, commits_[1]).ok());
  EXPECT_EQ(tiny->Lookup(recipe, commits_[3]).status().code(), StatusCode::kNotFound);
}

TEST_F(BuildCacheTest, RecipesAndCommitsAreChecked) {
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  BuildRecipe typo = CopyRecipe();
  typo.build.push_back({"make", "-C", "{prot}"});
  auto r = cache->Build(typo, commits_[0]);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("build[1]"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("{prot}"), std::string::npos) << r.status().message();
  EXPECT_FALSE(fs::exists(runs_));

  BuildRecipe relative = CopyRecipe();
  relative.source = "repo";
  EXPECT_EQ(cache->Build(relative, commits_[0]).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cache->Build(CopyRecipe(), "main").status().code(), StatusCode::kInvalidArgument);

  // A commit the source does not hold cannot be tried, and nothing is recorded.
  const std::string unknown(40, 'a');
  auto missing = cache->Build(CopyRecipe(), unknown);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(cache->Lookup(CopyRecipe(), unknown).status().code(), StatusCode::kNotFound);
}

TEST(BuildRecipeTest, CanonicalTextAndPlaceholders) {
  BuildRecipe a;
  a.source = "/src/a";
  a.build = {{"make", "-C", "{src}", "DESTDIR={out}"}};
  BuildRecipe b = a;
  b.source = "/src/b";
  EXPECT_EQ(CanonicalRecipeText(a), CanonicalRecipeText(b));
  b.time_limit = std::chrono::seconds(1);
  EXPECT_NE(CanonicalRecipeText(a), CanonicalRecipeText(b));
  EXPECT_TRUE(CheckBuildRecipe(a).ok());
  EXPECT_EQ(UnknownBuildPlaceholder("{src}/x {out}"), "");
  EXPECT_EQ(UnknownBuildPlaceholder("{src}/{run_dir}"), "{run_dir}");
  EXPECT_EQ(FillBuildPlaceholders("{src}/a:{out}/b{x}", "/s", "/o"), "/s/a:/o/b{x}");
}

}  // namespace
}  // namespace benchlab
