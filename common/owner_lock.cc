#include "common/owner_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace benchlab {

namespace {

constexpr size_t kMaxHolderBytes = 512;  // what is read back of another holder's text

std::string Errno() { return std::strerror(errno); }

// The holder's text as written, one line of printable bytes (it is printed to a terminal).
std::string ReadHolder(int fd) {
  char buffer[kMaxHolderBytes];
  const ssize_t n = pread(fd, buffer, sizeof buffer, 0);
  std::string text;
  for (ssize_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(buffer[i]);
    if (c == '\n') break;
    text += (c >= 0x20 && c != 0x7f) ? static_cast<char>(c) : '?';
  }
  return text;
}

Status WriteHolder(int fd, const std::string& path, const std::string& holder) {
  const std::string line = holder + "\n";
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
    return Status::IoError(path + ": cannot write its holder: " + Errno());
  }
  return Status::Ok();
}

}  // namespace

Result<OwnerLock> OwnerLock::Acquire(const std::string& path, const std::string& what,
                                     const std::string& holder) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Status::IoError(path + ": cannot open the lock file: " + Errno());
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string other = ReadHolder(fd);
    close(fd);
    if (error != EWOULDBLOCK) {
      return Status::IoError(path + ": cannot lock: " + std::strerror(error));
    }
    return Status::FailedPrecondition(what + " is in use by " +
                                      (other.empty() ? "another process" : other) + " (it holds " +
                                      path + "); stop it, or give this one its own");
  }
  OwnerLock lock(fd, path);
  BENCHLAB_RETURN_IF_ERROR(WriteHolder(fd, path, holder));
  return lock;
}

OwnerLock::OwnerLock(OwnerLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

OwnerLock& OwnerLock::operator=(OwnerLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

OwnerLock::~OwnerLock() {
  // The text stays: it is read only while the file is locked, and then it is the new holder's.
  if (fd_ >= 0) close(fd_);
}

Status OwnerLock::SetHolder(const std::string& holder) {
  if (fd_ < 0) return Status::FailedPrecondition(path_ + ": not held");
  return WriteHolder(fd_, path_, holder);
}

std::string ProcessHolder(const std::string& daemon) {
  return "benchlab " + daemon + ", pid " + std::to_string(getpid());
}

}  // namespace benchlab
