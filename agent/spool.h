// Spool: the agent's durable outbox. A window result is written here (write, fsync, rename,
// fsync of the directory) before it is sent, and removed only when the coordinator acknowledges
// that it stored it; an agent restarted after a crash offers the coordinator what the spool
// still holds, a page at a time. Keys are [A-Za-z0-9._-]+.
//
// Each record remembers the window token it was spooled under, so that only that window's owner
// can acknowledge it (docs/agent.md, "The spool"). On disk a record is the file <dir>/<key>.rec
// holding "window=<token>\n" and then the payload bytes; the directory is 0700 and the files
// 0600. The records together hold at most `max_bytes` (file sizes): a Put beyond is refused,
// never made room for by dropping a result nobody acknowledged. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace benchlab {

struct SpoolRecord {
  std::string key;
  std::string window;  // the token it was spooled under
  std::string payload;
};

class Spool {
 public:
  // Creates the directory (0700) when missing, and refuses one that is not private
  // (agent/private_dir.h, errors naming spool_dir); leftover temporary files of a crashed write
  // are removed. max_bytes: the cap (limits.spool_max_bytes); 0: none.
  static Result<std::unique_ptr<Spool>> Open(const std::string& dir, uint64_t max_bytes = 0);

  // Durable once it returns ok: a crash after it cannot lose the record. ResourceExhausted when
  // the record would take the spool over its cap; InvalidArgument for a bad key or window.
  Status Put(const std::string& key, const std::string& window, const std::string& bytes);
  // Removes the record whatever its window (the coordinator took it over: OfferResults). NotFound
  // is not an error: the record may have been acknowledged already.
  Status Remove(const std::string& key);
  // Removes the record only when it was spooled under `window` (compared in constant time);
  // returns whether it did. An absent key or another window leaves the spool as it was.
  Result<bool> RemoveForWindow(const std::string& key, const std::string& window);
  // The records with keys after `after` ("": from the first), in key order, as many as fit in
  // `max_bytes` of keys and payloads and at most `max_records`; a record larger than max_bytes
  // comes alone. Empty at the end.
  Result<std::vector<SpoolRecord>> Page(const std::string& after, uint64_t max_bytes,
                                        size_t max_records = SIZE_MAX);

  uint64_t bytes_held();
  uint64_t max_bytes() const { return max_bytes_; }
  const std::string& dir() const { return dir_; }

 private:
  Spool(std::string dir, uint64_t max_bytes, uint64_t held)
      : dir_(std::move(dir)), max_bytes_(max_bytes), held_(held) {}
  std::string PathOf(const std::string& key) const;
  Result<SpoolRecord> ReadLocked(const std::string& key);

  const std::string dir_;
  const uint64_t max_bytes_;
  std::mutex mu_;
  uint64_t held_;  // bytes of every record file, guarded by mu_
};

bool IsSpoolKey(const std::string& key);

}  // namespace benchlab
