// A git repository made in a directory for one test, by running git by argv (no shell and no
// script): files written, commits made with a fixed author, branches and merges. Each call
// throws std::runtime_error with git's output when git fails.
#pragma once

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/subprocess.h"

namespace benchlab {

class TestGitRepo {
 public:
  explicit TestGitRepo(std::string dir) : dir_(std::move(dir)) {
    Git({"init", "-q", "-b", "main"});
  }

  const std::string& dir() const { return dir_; }

  // git's output; throws when it fails.
  std::string Git(std::vector<std::string> args) const {
    RunSpec spec;
    spec.argv = {"git", "-C", dir_};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    const char* path = std::getenv("PATH");
    spec.env = {{"PATH", path != nullptr ? path : "/usr/bin:/bin"},
                {"GIT_CONFIG_NOSYSTEM", "1"},
                {"HOME", dir_},
                {"LANG", "C"}};
    spec.time_limit = std::chrono::seconds(30);
    auto outcome = RunArgv(spec);
    if (!outcome.ok()) throw std::runtime_error(outcome.status().message());
    if (!outcome->ok()) throw std::runtime_error("git " + args.front() + ": " + outcome->output);
    std::string out = outcome->output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  void Write(const std::string& name, const std::string& content) const {
    std::ofstream(dir_ + "/" + name, std::ios::binary | std::ios::trunc) << content;
  }

  // Commits everything in the work tree; returns the new commit's id.
  std::string CommitAll(const std::string& message) const {
    Git({"add", "-A"});
    Git({"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m",
         message});
    return Git({"rev-parse", "HEAD"});
  }

  // Merges `branch` into the current branch with a merge commit; returns its id.
  std::string Merge(const std::string& branch, const std::string& message) const {
    Git({"-c", "user.name=t", "-c", "user.email=t@t", "merge", "-q", "--no-ff", "-m", message,
         branch});
    return Git({"rev-parse", "HEAD"});
  }

 private:
  std::string dir_;
};

}  // namespace benchlab
