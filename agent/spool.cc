#include "agent/spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace benchlab {
namespace {

namespace fs = std::filesystem;
constexpr const char* kSuffix = ".rec";
constexpr const char* kTmpSuffix = ".tmp";

Status Errno(const std::string& what) {
  return Status::IoError(what + ": " + std::strerror(errno));
}

Status WriteAndSync(const std::string& path, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
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

}  // namespace

bool IsSpoolKey(const std::string& key) {
  return !key.empty() && key.size() <= 200 && key[0] != '.' &&
         std::all_of(key.begin(), key.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
         });
}

Result<std::unique_ptr<Spool>> Spool::Open(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError("spool: create " + dir + ": " + ec.message());
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == kTmpSuffix) fs::remove(entry.path(), ec);
  }
  if (ec) return Status::IoError("spool: read " + dir + ": " + ec.message());
  return std::unique_ptr<Spool>(new Spool(dir));
}

Status Spool::Put(const std::string& key, const std::string& bytes) {
  if (!IsSpoolKey(key)) return Status::InvalidArgument("spool: bad key \"" + key + "\"");
  std::lock_guard lock(mu_);
  std::string final_path = dir_ + "/" + key + kSuffix;
  std::string tmp_path = final_path + kTmpSuffix;
  BENCHLAB_RETURN_IF_ERROR(WriteAndSync(tmp_path, bytes));
  if (::rename(tmp_path.c_str(), final_path.c_str()) != 0) return Errno("spool: rename " + tmp_path);
  return SyncDir(dir_);
}

Status Spool::Remove(const std::string& key) {
  if (!IsSpoolKey(key)) return Status::InvalidArgument("spool: bad key \"" + key + "\"");
  std::lock_guard lock(mu_);
  std::string path = dir_ + "/" + key + kSuffix;
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Errno("spool: remove " + path);
  return Status::Ok();
}

Result<std::vector<std::pair<std::string, std::string>>> Spool::List() {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, std::string>> records;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (entry.path().extension() != kSuffix) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (!in && !in.eof()) return Status::IoError("spool: read " + entry.path().string());
    records.emplace_back(entry.path().stem().string(), bytes.str());
  }
  if (ec) return Status::IoError("spool: read " + dir_ + ": " + ec.message());
  std::sort(records.begin(), records.end());
  return records;
}

}  // namespace benchlab
