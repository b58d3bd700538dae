#include "agent/cancel.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace benchlab {

CancelFlag::CancelFlag() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

CancelFlag::~CancelFlag() {
  if (fd_ >= 0) close(fd_);
}

void CancelFlag::Cancel() {
  if (flag_.exchange(true)) return;
  if (fd_ >= 0) {
    const uint64_t one = 1;
    // Never read back: the counter stays non-zero, so the fd stays readable.
    (void)!write(fd_, &one, sizeof(one));
  }
}

}  // namespace benchlab
