#include "agent/server/agent_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "agent/window_token.h"

namespace benchlab {
namespace {

constexpr size_t kProofBytes = 32;

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

bool IsProof(const std::string& text) {
  return text.size() == 2 * kProofBytes &&
         text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

Result<std::string> ReadProof(int fd, const std::string& path) {
  struct stat st;
  if (fstat(fd, &st) != 0) return Status::IoError(path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Status::PermissionDenied(path + ": not a regular file");
  if (st.st_uid != geteuid()) {
    return Status::PermissionDenied(path + ": owned by uid " + std::to_string(st.st_uid) +
                                    ", not by the agent's uid " + std::to_string(geteuid()));
  }
  if ((st.st_mode & 077) != 0) {
    return Status::PermissionDenied(path + ": others may read or write it; it must be 0600 " +
                                    "(a secret; delete it to make a new one)");
  }
  char buf[2 * kProofBytes + 2];
  ssize_t n;
  do {
    n = pread(fd, buf, sizeof(buf), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Status::IoError(path + ": " + std::strerror(errno));
  std::string text(buf, static_cast<size_t>(n));
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!IsProof(text)) {
    return Status::FailedPrecondition(path +
                                      ": expected 64 hex digits (an instance proof); "
                                      "delete it to make a new one");
  }
  return text;
}

Result<std::string> CreateProof(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return Status::AlreadyExists(path);
    return Status::IoError(path + ": cannot create it: " + std::strerror(errno));
  }
  auto proof = RandomHex(kProofBytes);
  if (!proof.ok()) {
    close(fd);
    unlink(path.c_str());
    return proof.status();
  }
  const std::string line = *proof + "\n";
  const bool written =
      write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && fsync(fd) == 0;
  const int err = errno;
  close(fd);
  if (!written) {
    unlink(path.c_str());
    return Status::IoError(path + ": " + std::strerror(err));
  }
  return proof;
}

}  // namespace

StateEnv StateEnv::FromProcess() {
  return {Env("STATE_DIRECTORY"), Env("XDG_STATE_HOME"), Env("HOME"), geteuid() == 0};
}

Result<std::string> DefaultStateDir(const std::string& agent_name, const StateEnv& env) {
  const std::string first = env.state_directory.substr(0, env.state_directory.find(':'));
  if (first.starts_with('/')) return first;
  const std::string leaf = "/benchlab/agent-" + agent_name;
  if (env.root) return "/var/lib" + leaf;
  if (env.xdg_state_home.starts_with('/')) return env.xdg_state_home + leaf;
  if (env.home.starts_with('/')) return env.home + "/.local/state" + leaf;
  return Status::FailedPrecondition(
      "no state directory: $STATE_DIRECTORY, $XDG_STATE_HOME and $HOME are unset; set state_dir "
      "in the agent's configuration");
}

Result<std::string> LoadInstanceProof(const std::string& state_dir) {
  const std::string path = state_dir + "/instance_proof";
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      auto proof = ReadProof(fd, path);
      close(fd);
      return proof;
    }
    if (errno == ELOOP) return Status::PermissionDenied(path + ": is a symbolic link");
    if (errno != ENOENT) return Status::IoError(path + ": " + std::strerror(errno));
    auto made = CreateProof(path);
    if (made.ok()) return made;
    // Another start made it in between: read that one.
    if (made.status().code() != StatusCode::kAlreadyExists) return made.status();
  }
  return Status::IoError(path + ": cannot read or create it");
}

}  // namespace benchlab
