// BuildCache: builds of one commit of a target's source by its recipe (common/build_recipe.h),
// kept in a directory of the agent's own under a total size limit, so that a bisection measures
// each commit it needs from a build made once (docs/agent.md, "Builds"; docs/security.md,
// "Builds").
//
// A build makes a fresh checkout of the commit outside the source tree (`git worktree add
// --detach` into the build's staging directory, with hooks off), runs each step by argv (no
// shell) with the checkout as working directory, stdin from /dev/null, the environment PATH,
// HOME (a directory of the build's own) and LANG=C only, and stdout and stderr appended to the
// entry's build.log. The checkout and every step together have the recipe's time limit: past
// it the step's whole process group is killed. The output directory's files, in all, must fit
// the recipe's max_output_bytes. A failed build (a step's exit status or signal, the time limit,
// the size) is recorded with why and the log's last lines, and is never built or measured again
// by that key. The checkout is removed afterwards (git worktree remove, by its path).
//
// Entries are directories named by their key, the hex SHA-256 of the commit id and the recipe's
// canonical text: `<dir>/<key>/` holds `result` (state, commit, bytes, failure), `build.log`,
// `used` (a use counter for LRU) and, for a build that succeeded, `out/`. The checkout and HOME
// are staged in `<dir>/.staging-<key>-XXXXXX/`; the output is built in place, `{out}` being
// `<dir>/<key>/out`, so an output that bakes its own path in runs from there. `result` is renamed
// into the entry last: an entry without it is a build that never ended (removed at Open and
// before a new try, never evicted), so a recorded entry is never half there. After a successful
// build the least recently used entries (Lookup and Build
// count as uses) are removed until the cache fits max_bytes, never the one just built.
//
// Thread-safe: one build per key at a time (a second caller waits for the first's result);
// builds of different keys run at once. One BuildCache per directory: Open takes a lock on
// `<dir>/.lock`, so a second one (another agent given the same dir) is refused.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/build_recipe.h"
#include "common/owner_lock.h"
#include "common/status.h"

namespace benchlab {

inline constexpr uint64_t kDefaultBuildCacheBytes = 2ull << 30;  // 2 GiB
// Lines of build.log a failure quotes.
inline constexpr size_t kBuildLogTailLines = 5;

struct CachedBuild {
  bool ok = false;  // built; else failed, and `failure` says why
  std::string commit;
  std::string key;         // 64 hex digits
  std::string entry_dir;   // <dir>/<key>
  std::string output_dir;  // <entry_dir>/out when ok; empty otherwise
  std::string log_path;    // <entry_dir>/build.log
  uint64_t output_bytes = 0;
  // "step 2 of 3 (make -j2): exit status 2; build.log ends: ... | ...", "output 5000 bytes over
  // limit 4096", "step 1 of 1 (./slow.sh): still running after 600000 ms ... (killed)"; printable.
  std::string failure;
};

class BuildCache {
 public:
  // Makes `dir` (0700, private: agent/private_dir.h) when missing and removes the staging
  // directories and unrecorded entries a previous process left behind.
  static Result<std::unique_ptr<BuildCache>> Open(const std::string& dir,
                                                  uint64_t max_bytes = kDefaultBuildCacheBytes);

  // The key of `commit` (40 hex digits) built by `recipe`.
  static std::string Key(const std::string& commit, const BuildRecipe& recipe);

  // The recorded build of commit by recipe, built or failed, and marks it used; NotFound when
  // there is none (never built, or evicted). A build in progress is waited for.
  Result<CachedBuild> Lookup(const BuildRecipe& recipe, const std::string& commit);

  // As Lookup when the build is recorded (nothing runs again, a failure included); else builds
  // it and records the outcome. `commit` must be a full 40-hex commit id (common/git_rev.h,
  // ResolveCommit). Errors (not recorded) only when the build could not be tried: an invalid
  // recipe or commit id, a commit the source does not hold, the cache directory unwritable, a
  // step that could not be started (Unavailable: fork refused, its program missing).
  Result<CachedBuild> Build(const BuildRecipe& recipe, const std::string& commit);

  const std::string& dir() const { return dir_; }
  uint64_t max_bytes() const { return max_bytes_; }
  // Bytes of every entry's files, as eviction counts them.
  uint64_t TotalBytes() const;

 private:
  BuildCache(std::string dir, uint64_t max_bytes, uint64_t next_use, OwnerLock lock);

  struct InFlight {
    bool done = false;
    std::condition_variable cv;
  };

  // Reads <dir>/<key>/result; NotFound when absent. Marks it used. mu_ held.
  Result<CachedBuild> ReadEntryLocked(const std::string& key);
  // Builds into the entry (checkout and HOME staged), its `result` renamed in last.
  Status BuildEntry(const BuildRecipe& recipe, const std::string& commit, const std::string& key);
  // Removes least recently used entries but `keep` until the total fits max_bytes_. mu_ held.
  void EvictLocked(const std::string& keep);

  const std::string dir_;
  const uint64_t max_bytes_;
  OwnerLock lock_;  // on <dir>/.lock: one BuildCache per directory, whichever process opens it
  std::mutex mu_;
  uint64_t next_use_;                                          // guarded by mu_
  std::map<std::string, std::shared_ptr<InFlight>> building_;  // guarded by mu_
  std::mutex git_mu_;  // one `git worktree` command at a time (they share the source's metadata)
};

}  // namespace benchlab
