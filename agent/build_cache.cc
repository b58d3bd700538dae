#include "agent/build_cache.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "agent/private_dir.h"
#include "common/git_rev.h"
#include "common/printable.h"
#include "common/subprocess.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kStagingPrefix = ".staging-";

std::string BuildSha256Hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

bool IsFullCommitId(const std::string& text) {
  return text.size() == 40 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool IsEntryName(const std::string& name) {
  return name.size() == 64 && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Bytes of the regular files under `path`, symbolic links not followed (a link counts nothing).
uint64_t BuildDirBytes(const fs::path& path) {
  uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    std::error_code stat_ec;
    const fs::file_status st = it->symlink_status(stat_ec);
    if (!stat_ec && fs::is_regular_file(st)) {
      const uintmax_t size = it->file_size(stat_ec);
      if (!stat_ec) total += size;
    }
  }
  return total;
}

std::string ReadWholeFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The last `n` lines of the log, escaped and joined with " | ".
std::string BuildLogTail(const fs::path& log, size_t n) {
  std::string text = ReadWholeFile(log);
  if (text.size() > 64 * 1024) text.erase(0, text.size() - 64 * 1024);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::vector<std::string> lines;
  size_t stop = text.size();
  while (lines.size() < n && stop > 0) {
    size_t nl = text.rfind('\n', stop - 1);
    size_t begin = nl == std::string::npos ? 0 : nl + 1;
    lines.push_back(PrintableText(Truncated(text.substr(begin, stop - begin), 300)));
    if (nl == std::string::npos) break;
    stop = nl;
  }
  std::reverse(lines.begin(), lines.end());
  std::string out;
  for (const auto& line : lines) out += (out.empty() ? "" : " | ") + line;
  return out.empty() ? "(empty)" : out;
}

std::string ArgvText(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) out += (out.empty() ? "" : " ") + arg;
  return PrintableText(Truncated(out, 200));
}

void AppendToLog(const fs::path& log, const std::string& line) {
  std::ofstream(log, std::ios::binary | std::ios::app) << line << "\n";
}

std::map<std::string, std::string> BuildEnvironment(const std::string& home) {
  const char* path = std::getenv("PATH");
  return {{"PATH", path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin"},
          {"HOME", home},
          {"LANG", "C"}};
}

struct BuildRecord {
  bool ok = false;
  std::string commit;
  uint64_t bytes = 0;
  std::string failure;  // printable, one line
};

std::string FormatBuildRecord(const BuildRecord& r) {
  return std::string("state=") + (r.ok ? "built" : "failed") + "\ncommit=" + r.commit +
         "\nbytes=" + std::to_string(r.bytes) + "\nfailure=" + r.failure + "\n";
}

std::optional<BuildRecord> ParseBuildRecord(const std::string& text) {
  BuildRecord r;
  bool have_state = false;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string name = line.substr(0, eq), value = line.substr(eq + 1);
    if (name == "state") {
      have_state = value == "built" || value == "failed";
      r.ok = value == "built";
    } else if (name == "commit") {
      r.commit = value;
    } else if (name == "bytes") {
      r.bytes = std::strtoull(value.c_str(), nullptr, 10);
    } else if (name == "failure") {
      r.failure = value;
    }
  }
  if (!have_state || !IsFullCommitId(r.commit)) return std::nullopt;
  return r;
}

uint64_t ReadUseCount(const fs::path& entry) {
  return std::strtoull(ReadWholeFile(entry / "used").c_str(), nullptr, 10);
}

}  // namespace

BuildCache::BuildCache(std::string dir, uint64_t max_bytes, uint64_t next_use, OwnerLock lock)
    : dir_(std::move(dir)), max_bytes_(max_bytes), lock_(std::move(lock)), next_use_(next_use) {}

Result<std::unique_ptr<BuildCache>> BuildCache::Open(const std::string& dir, uint64_t max_bytes) {
  if (dir.empty() || dir.front() != '/') {
    return Status::InvalidArgument("build_cache.dir \"" + PrintableText(dir) +
                                   "\": expected an absolute directory path");
  }
  if (max_bytes == 0) return Status::InvalidArgument("build_cache.max_bytes: expected 1 or more");
  BENCHLAB_RETURN_IF_ERROR(EnsurePrivateDir("build_cache.dir", dir));
  // Before anything is removed: the staging and unrecorded entries below are another live
  // cache's builds when it holds the directory.
  BENCHLAB_ASSIGN_OR_RETURN(OwnerLock lock,
                            OwnerLock::Acquire(dir + "/.lock", "build cache " + dir,
                                               "pid " + std::to_string(::getpid())));
  uint64_t last_use = 0;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(dir, ec)) {
    const std::string name = item.path().filename().string();
    if (name.starts_with(kStagingPrefix) ||
        (IsEntryName(name) && !fs::exists(item.path() / "result"))) {
      // A build a previous process did not finish: its staging, or an entry without a record.
      std::error_code rm_ec;
      fs::remove_all(item.path(), rm_ec);
    } else if (IsEntryName(name)) {
      last_use = std::max(last_use, ReadUseCount(item.path()));
    }
  }
  if (ec) return Status::IoError("build_cache.dir " + dir + ": " + ec.message());
  return std::unique_ptr<BuildCache>(new BuildCache(dir, max_bytes, last_use + 1, std::move(lock)));
}

std::string BuildCache::Key(const std::string& commit, const BuildRecipe& recipe) {
  return BuildSha256Hex(commit + "\n" + CanonicalRecipeText(recipe));
}

uint64_t BuildCache::TotalBytes() const {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(dir_, ec)) {
    if (IsEntryName(item.path().filename().string())) total += BuildDirBytes(item.path());
  }
  return total;
}

Result<CachedBuild> BuildCache::ReadEntryLocked(const std::string& key) {
  const fs::path entry = fs::path(dir_) / key;
  const fs::path result = entry / "result";
  struct stat st;
  if (lstat(result.c_str(), &st) != 0) {
    return Status::NotFound("no build under key " + key + " in " + dir_);
  }
  auto record = ParseBuildRecord(ReadWholeFile(result));
  if (!record) return Status::Internal("build record " + result.string() + " is damaged");
  CachedBuild out;
  out.ok = record->ok;
  out.commit = record->commit;
  out.key = key;
  out.entry_dir = entry.string();
  out.output_dir = record->ok ? (entry / "out").string() : "";
  out.log_path = (entry / "build.log").string();
  out.output_bytes = record->bytes;
  out.failure = record->failure;
  // Marks it used: the counter orders entries for eviction.
  BENCHLAB_RETURN_IF_ERROR(
      WritePrivateFile((entry / "used").string(), std::to_string(next_use_++) + "\n"));
  return out;
}

Result<CachedBuild> BuildCache::Lookup(const BuildRecipe& recipe, const std::string& commit) {
  const std::string key = Key(commit, recipe);
  std::unique_lock<std::mutex> lock(mu_);
  for (auto it = building_.find(key); it != building_.end(); it = building_.find(key)) {
    std::shared_ptr<InFlight> other = it->second;
    other->cv.wait(lock, [&] { return other->done; });
  }
  return ReadEntryLocked(key);
}

Result<CachedBuild> BuildCache::Build(const BuildRecipe& recipe, const std::string& commit) {
  BENCHLAB_RETURN_IF_ERROR(CheckBuildRecipe(recipe));
  if (!IsFullCommitId(commit)) {
    return Status::InvalidArgument("commit \"" + PrintableText(Truncated(commit, 80)) +
                                   "\": expected a full commit id of 40 hex digits");
  }
  const std::string key = Key(commit, recipe);
  auto flight = std::make_shared<InFlight>();
  {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      auto entry = ReadEntryLocked(key);
      if (entry.ok() || entry.status().code() != StatusCode::kNotFound) return entry;
      auto it = building_.find(key);
      if (it == building_.end()) break;
      // Another caller builds it: its record is ours (or, when it could not try, our turn).
      std::shared_ptr<InFlight> other = it->second;
      other->cv.wait(lock, [&] { return other->done; });
    }
    building_[key] = flight;
  }
  Status built = BuildEntry(recipe, commit, key);
  std::unique_lock<std::mutex> lock(mu_);
  building_.erase(key);
  flight->done = true;
  flight->cv.notify_all();
  if (!built.ok()) return built;
  auto entry = ReadEntryLocked(key);
  if (entry.ok() && entry->ok) EvictLocked(key);
  return entry;
}

Status BuildCache::BuildEntry(const BuildRecipe& recipe, const std::string& commit,
                              const std::string& key) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + recipe.time_limit;
  std::string pattern = dir_ + "/" + std::string(kStagingPrefix) + key + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status::IoError("build directory " + pattern + ": " + std::strerror(errno));
  }
  // The checkout and HOME are staged; the output is built where it stays, `{out}` =
  // <dir>/<key>/out, so a build that bakes its prefix in (configure --prefix={out}, rpaths,
  // shebangs) runs from there. The entry counts as built only once its `result` is renamed into
  // place, last: an entry without one is a build that never ended, removed before a new try.
  const fs::path staging = pattern;
  const fs::path src = staging / "src", home = staging / "home";
  const fs::path entry = fs::path(dir_) / key;
  const fs::path out = entry / "out", log = entry / "build.log";
  auto give_up = [&](Status st) {
    std::error_code ec;
    fs::remove_all(staging, ec);
    fs::remove_all(entry, ec);
    return st;
  };
  {
    std::error_code ec;
    fs::remove_all(entry, ec);
    if (ec) return give_up(Status::IoError("build entry " + entry.string() + ": " + ec.message()));
  }
  for (const fs::path& d : {entry, out, home}) {
    if (Status st = MakePrivateDir(d.string()); !st.ok()) return give_up(st);
  }
  if (Status st = WritePrivateFile(log.string(), ""); !st.ok()) return give_up(st);

  auto remove_checkout = [&] {
    std::lock_guard<std::mutex> git_lock(git_mu_);
    auto removed = RunGit(recipe.source, {"worktree", "remove", "--force", src.string()});
    if (!removed.ok() || !removed->ok()) {
      spdlog::warn("build cache: git worktree remove {} in {}: {}", src.string(), recipe.source,
                   removed.ok() ? PrintableText(removed->output) : removed.status().message());
    }
    std::error_code ec;
    fs::remove_all(src, ec);
  };

  // The checkout: hooks off, so that checking out runs nothing of the repository's.
  {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    // No `git worktree prune`: it would also drop the metadata of the owner's own worktrees
    // whose directories are absent (an unmounted disk); only this checkout is removed, by path.
    std::unique_lock<std::mutex> git_lock(git_mu_);
    auto added = RunGit(recipe.source,
                        {"-c", "core.hooksPath=/dev/null", "worktree", "add", "--detach", "--quiet",
                         src.string(), commit},
                        std::max(left, std::chrono::milliseconds(1)));
    git_lock.unlock();
    if (!added.ok() || !added->ok()) {
      remove_checkout();
      const std::string why =
          added.ok() ? PrintableText(Truncated(added->output, 500)) : added.status().message();
      return give_up(Status::FailedPrecondition("checkout of " + commit + " from " +
                                                PrintableText(recipe.source) + " failed: " + why));
    }
  }

  BuildRecord record;
  record.commit = commit;
  record.ok = true;
  const size_t steps = recipe.build.size();
  for (size_t i = 0; i < steps && record.ok; ++i) {
    std::vector<std::string> argv;
    for (const std::string& arg : recipe.build[i]) {
      argv.push_back(FillBuildPlaceholders(arg, src.string(), out.string()));
    }
    const std::string step = "step " + std::to_string(i + 1) + " of " + std::to_string(steps) +
                             " (" + ArgvText(argv) + ")";
    AppendToLog(log, "# " + step);
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      record.ok = false;
      record.failure = step + ": not started, the build's time limit of " +
                       std::to_string(recipe.time_limit.count()) + " ms has passed";
      break;
    }
    RunSpec spec;
    spec.argv = argv;
    spec.cwd = src.string();
    spec.env = BuildEnvironment(home.string());
    spec.time_limit = left;
    spec.output_path = log.string();
    auto ran = RunArgv(spec);
    if (!ran.ok()) {
      // The step could not be started (fork refused, a full disk, a program missing from PATH):
      // that says nothing of the commit, so nothing is recorded and a later call tries again.
      remove_checkout();
      return give_up(Status::Unavailable(
          step + " could not be started: " + PrintableText(ran.status().message())));
    } else if (ran->timed_out) {
      record.ok = false;
      record.failure = step + ": over the build's time limit of " +
                       std::to_string(recipe.time_limit.count()) +
                       " ms (its process group was killed); build.log ends: " +
                       BuildLogTail(log, kBuildLogTailLines);
    } else if (!ran->ok()) {
      record.ok = false;
      record.failure = step + ": " + ran->Describe(left) +
                       "; build.log ends: " + BuildLogTail(log, kBuildLogTailLines);
    }
  }
  remove_checkout();
  if (record.ok) {
    record.bytes = BuildDirBytes(out);
    if (record.bytes > recipe.max_output_bytes) {
      record.ok = false;
      record.failure = "output " + std::to_string(record.bytes) + " bytes over limit " +
                       std::to_string(recipe.max_output_bytes);
    }
  }
  std::error_code ec;
  fs::remove_all(staging, ec);
  if (!record.ok) fs::remove_all(out, ec);
  AppendToLog(log, record.ok ? "# built" : "# failed: " + record.failure);
  if (Status st =
          WritePrivateFile((entry / "recipe.json").string(), CanonicalRecipeText(recipe) + "\n");
      !st.ok()) {
    return give_up(st);
  }
  // The record last, by rename: the entry is whole or it is not there.
  const fs::path pending = entry / "result.pending";
  if (Status st = WritePrivateFile(pending.string(), FormatBuildRecord(record)); !st.ok()) {
    return give_up(st);
  }
  if (std::rename(pending.c_str(), (entry / "result").c_str()) != 0) {
    return give_up(Status::IoError("build entry " + entry.string() + ": " + std::strerror(errno)));
  }
  if (record.ok) {
    spdlog::info("build cache: built {} ({} bytes) into {}", commit, record.bytes, entry.string());
  } else {
    spdlog::warn("build cache: build of {} failed: {}", commit, record.failure);
  }
  return Status::Ok();
}

void BuildCache::EvictLocked(const std::string& keep) {
  struct EntryUse {
    uint64_t used;
    std::string name;
    uint64_t bytes;
  };
  std::vector<EntryUse> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(dir_, ec)) {
    const std::string name = item.path().filename().string();
    // An entry without its record is a build still running: never evicted.
    if (!IsEntryName(name) || !fs::exists(item.path() / "result")) continue;
    const uint64_t bytes = BuildDirBytes(item.path());
    total += bytes;
    entries.push_back({ReadUseCount(item.path()), name, bytes});
  }
  std::sort(entries.begin(), entries.end(), [](const EntryUse& a, const EntryUse& b) {
    return a.used != b.used ? a.used < b.used : a.name < b.name;
  });
  for (const EntryUse& e : entries) {
    if (total <= max_bytes_) break;
    if (e.name == keep) continue;
    std::error_code rm_ec;
    fs::remove_all(fs::path(dir_) / e.name, rm_ec);
    if (rm_ec) {
      spdlog::warn("build cache: cannot remove {}: {}", e.name, rm_ec.message());
      continue;
    }
    total -= e.bytes;
    spdlog::info("build cache: removed least recently used entry {} ({} bytes)", e.name, e.bytes);
  }
}

}  // namespace benchlab
