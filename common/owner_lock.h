// One owner per state (docs/security.md, "One owner per state"): a daemon that owns a piece of
// state (the coordinator its database, an agent its state directory) holds an exclusive flock(2)
// on a lock file beside it for as long as it runs. The file says who holds it, so a second daemon
// refuses to start with an answer a person can act on ("lab.db is in use by benchlab
// coordinator, pid 4242, listening on 127.0.0.1:7700") instead of both writing the same state.
// The kernel drops the lock when its holder exits, however it exits, so a crash leaves nothing to
// clean up; the file itself stays, and its text is only read while it is locked.
#pragma once

#include <string>

#include "common/status.h"

namespace benchlab {

class OwnerLock {
 public:
  // Takes the lock on the file `path` (created 0600 when missing, never through a symbolic link;
  // its descriptor is not inherited by child processes) and writes `holder` into it.
  // FailedPrecondition "WHAT is in use by HOLDER" when another process, or another OwnerLock of
  // this process, holds it; IoError naming the file when it cannot be opened.
  static Result<OwnerLock> Acquire(const std::string& path, const std::string& what,
                                   const std::string& holder);

  OwnerLock(OwnerLock&& other) noexcept;
  OwnerLock& operator=(OwnerLock&& other) noexcept;
  OwnerLock(const OwnerLock&) = delete;
  OwnerLock& operator=(const OwnerLock&) = delete;
  ~OwnerLock();  // releases the lock

  // Replaces the holder's description (e.g. once the daemon knows the address it listens on).
  Status SetHolder(const std::string& holder);

 private:
  OwnerLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// "benchlab coordinator, pid 4242": how a daemon of this process describes itself as a holder.
std::string ProcessHolder(const std::string& daemon);

}  // namespace benchlab
