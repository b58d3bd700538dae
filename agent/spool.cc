#include "agent/spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "agent/private_dir.h"
#include "agent/window_token.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;
constexpr const char* kSuffix = ".rec";
constexpr const char* kTmpSuffix = ".tmp";
constexpr std::string_view kWindowPrefix = "window=";

Status Errno(const std::string& what) {
  return Status::IoError(what + ": " + std::strerror(errno));
}

Status WriteAndSync(const std::string& path, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Errno("spool: open " + path);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status st = Errno("spool: write " + path);
      ::close(fd);
      return st;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    Status st = Errno("spool: fsync " + path);
    ::close(fd);
    return st;
  }
  if (::close(fd) != 0) return Errno("spool: close " + path);
  return Status::Ok();
}

// A rename is durable only once the directory that holds it is synced.
Status SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("spool: open " + dir);
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Errno("spool: fsync " + dir);
  return Status::Ok();
}

uint64_t FileSize(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// The keys of every record, in key order.
Result<std::vector<std::string>> Keys(const std::string& dir) {
  std::vector<std::string> keys;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == kSuffix) keys.push_back(entry.path().stem().string());
  }
  if (ec) return Status::IoError("spool: read " + dir + ": " + ec.message());
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace

bool IsSpoolKey(const std::string& key) {
  return !key.empty() && key.size() <= 200 && key[0] != '.' &&
         std::all_of(key.begin(), key.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
         });
}

Result<std::unique_ptr<Spool>> Spool::Open(const std::string& dir, uint64_t max_bytes) {
  BENCHLAB_RETURN_IF_ERROR(EnsurePrivateDir("spool_dir", dir));
  std::error_code ec;
  uint64_t held = 0;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == kTmpSuffix) fs::remove(entry.path(), ec);
    if (entry.path().extension() == kSuffix) held += FileSize(entry.path().string());
  }
  if (ec) return Status::IoError("spool: read " + dir + ": " + ec.message());
  return std::unique_ptr<Spool>(new Spool(dir, max_bytes, held));
}

std::string Spool::PathOf(const std::string& key) const { return dir_ + "/" + key + kSuffix; }

Status Spool::Put(const std::string& key, const std::string& window, const std::string& bytes) {
  if (!IsSpoolKey(key)) return Status::InvalidArgument("spool: bad key \"" + key + "\"");
  BENCHLAB_RETURN_IF_ERROR(CheckWindowToken("spool: window", window));
  std::string record;
  record.reserve(kWindowPrefix.size() + window.size() + 1 + bytes.size());
  record.append(kWindowPrefix).append(window).append("\n").append(bytes);
  std::lock_guard lock(mu_);
  const std::string final_path = PathOf(key);
  const uint64_t replaced = FileSize(final_path);
  const uint64_t after = held_ - std::min(held_, replaced) + record.size();
  if (max_bytes_ != 0 && after > max_bytes_) {
    return Status::ResourceExhausted(
        "spool full: " + dir_ + " holds " + std::to_string(held_) +
        " bytes of results the "
        "coordinator has not acknowledged, and " +
        key + " (" + std::to_string(record.size()) +
        " bytes) would exceed limits.spool_max_bytes = " + std::to_string(max_bytes_));
  }
  const std::string tmp_path = final_path + kTmpSuffix;
  BENCHLAB_RETURN_IF_ERROR(WriteAndSync(tmp_path, record));
  if (::rename(tmp_path.c_str(), final_path.c_str()) != 0)
    return Errno("spool: rename " + tmp_path);
  held_ = after;
  return SyncDir(dir_);
}

Status Spool::Remove(const std::string& key) {
  if (!IsSpoolKey(key)) return Status::InvalidArgument("spool: bad key \"" + key + "\"");
  std::lock_guard lock(mu_);
  const std::string path = PathOf(key);
  const uint64_t size = FileSize(path);
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Errno("spool: remove " + path);
  }
  held_ -= std::min(held_, size);
  return Status::Ok();
}

Result<bool> Spool::RemoveForWindow(const std::string& key, const std::string& window) {
  if (!IsSpoolKey(key)) return Status::InvalidArgument("spool: bad key \"" + key + "\"");
  std::lock_guard lock(mu_);
  auto record = ReadLocked(key);
  if (!record.ok()) {
    if (record.status().code() == StatusCode::kNotFound) return false;
    return record.status();
  }
  if (!TokensEqual(record->window, window)) return false;
  const std::string path = PathOf(key);
  const uint64_t size = FileSize(path);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Errno("spool: remove " + path);
  held_ -= std::min(held_, size);
  return true;
}

Result<SpoolRecord> Spool::ReadLocked(const std::string& key) {
  const std::string path = PathOf(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("spool: no record " + key);
    return Errno("spool: open " + path);
  }
  std::string bytes;
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status st = Errno("spool: read " + path);
      ::close(fd);
      return st;
    }
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  SpoolRecord record{key, "", ""};
  // A record spooled before windows were recorded has no header: it names no window.
  size_t newline = bytes.find('\n');
  if (bytes.compare(0, kWindowPrefix.size(), kWindowPrefix) == 0 && newline != std::string::npos) {
    record.window = bytes.substr(kWindowPrefix.size(), newline - kWindowPrefix.size());
    record.payload = bytes.substr(newline + 1);
  } else {
    record.payload = std::move(bytes);
  }
  return record;
}

Result<std::vector<SpoolRecord>> Spool::Page(const std::string& after, uint64_t max_bytes,
                                             size_t max_records) {
  std::lock_guard lock(mu_);
  auto keys = Keys(dir_);
  if (!keys.ok()) return keys.status();
  std::vector<SpoolRecord> page;
  uint64_t size = 0;
  for (auto it = std::upper_bound(keys->begin(), keys->end(), after);
       it != keys->end() && page.size() < max_records; ++it) {
    auto record = ReadLocked(*it);
    if (!record.ok()) {
      if (record.status().code() == StatusCode::kNotFound) continue;
      return record.status();
    }
    const uint64_t adds = record->key.size() + record->payload.size();
    if (!page.empty() && size + adds > max_bytes) break;
    size += adds;
    page.push_back(std::move(record).value());
  }
  return page;
}

uint64_t Spool::bytes_held() {
  std::lock_guard lock(mu_);
  return held_;
}

}  // namespace benchlab
