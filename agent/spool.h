// Spool: the agent's durable outbox. A window result is written here (write, fsync, rename,
// fsync of the directory) before it is sent, and removed only when the coordinator acknowledges
// that it stored it; an agent restarted after a crash offers the coordinator what the spool
// still holds. Keys are [A-Za-z0-9._-]+. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace benchlab {

class Spool {
 public:
  // Creates the directory when missing; leftover temporary files of a crashed write are removed.
  static Result<std::unique_ptr<Spool>> Open(const std::string& dir);

  // Durable once it returns ok: a crash after it cannot lose the record.
  Status Put(const std::string& key, const std::string& bytes);
  // NotFound is not an error: the record may have been acknowledged already.
  Status Remove(const std::string& key);
  // Every record held, in key order.
  Result<std::vector<std::pair<std::string, std::string>>> List();

  const std::string& dir() const { return dir_; }

 private:
  explicit Spool(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  std::mutex mu_;
};

bool IsSpoolKey(const std::string& key);

}  // namespace benchlab
