#include "agent/private_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace benchlab {
namespace {

std::string Mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

Status EnsurePrivateDir(std::string_view key, const std::string& path) {
  const std::string where = std::string(key) + " " + path + ": ";
  if (path.empty() || path[0] != '/') {
    return Status::InvalidArgument(where + "expected an absolute directory path");
  }
  // Without a trailing '/', which would make lstat follow a final symbolic link.
  std::filesystem::path normal = std::filesystem::path(path).lexically_normal();
  std::string dir = normal.string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::string partial;
  for (const auto& part : std::filesystem::path(dir).relative_path()) {
    partial += "/" + part.string();
    if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::IoError(where + "cannot create " + partial + ": " + std::strerror(errno));
    }
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    return Status::IoError(where + "cannot read it: " + std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) {
    return Status::PermissionDenied(where +
                                    "is a symbolic link; the agent uses only a directory of its "
                                    "own (give the real path, or remove the link)");
  }
  if (!S_ISDIR(st.st_mode)) return Status::FailedPrecondition(where + "is not a directory");
  if (st.st_uid != geteuid()) {
    return Status::PermissionDenied(where + "is owned by uid " + std::to_string(st.st_uid) +
                                    ", not by the agent's uid " + std::to_string(geteuid()));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Status::PermissionDenied(where + "is writable by group or others (mode " +
                                    Mode(st.st_mode) + "); make it 0700");
  }
  return Status::Ok();
}

Status WritePrivateFile(const std::string& path, const std::string& bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Status::IoError("cannot write " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    done += static_cast<size_t>(n);
  }
  const int err = errno;
  close(fd);
  if (done < bytes.size()) {
    return Status::IoError("cannot write " + path + ": " + std::strerror(err));
  }
  return Status::Ok();
}

Status MakePrivateDir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0) {
    return Status::IoError("cannot create directory " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace benchlab
