#include "rpc/handshake_refusals.h"

namespace benchlab {

std::string_view HandshakeFaultName(HandshakeFault fault) {
  switch (fault) {
    case HandshakeFault::kExpired:
      return "expired";
    case HandshakeFault::kNotYetValid:
      return "not yet valid";
    case HandshakeFault::kUnknownCa:
      return "unknown CA";
    case HandshakeFault::kInvalid:
      return "invalid";
    case HandshakeFault::kNotBenchlab:
      return "not a benchlab certificate";
    case HandshakeFault::kRevoked:
      return "revoked";
    case HandshakeFault::kWrongRole:
      return "wrong role";
    case HandshakeFault::kWrongName:
      return "wrong name";
    case HandshakeFault::kWrongHost:
      return "wrong host";
  }
  return "invalid";
}

std::string DescribeRefusal(const HandshakeRefusal& refusal) {
  std::string out = std::string(HandshakeFaultName(refusal.fault)) + ": " + refusal.message;
  if (refusal.suppressed > 0) {
    const std::string n = std::to_string(refusal.suppressed);
    out += refusal.summary
               ? "; refused " + n + " more time" + (refusal.suppressed == 1 ? "" : "s") +
                     " since, not reported one by one"
               : "; " + n + " more like it before this, not reported one by one";
  }
  return out;
}

std::vector<HandshakeRefusal> HandshakeRefusals::Add(HandshakeRefusal refusal) {
  const auto now = clock_.Now();
  std::vector<HandshakeRefusal> out;
  std::lock_guard lock(mu_);
  Key key{refusal.peer, refusal.fault, refusal.serial, refusal.subject};
  if (!windows_.contains(key) && windows_.size() >= kMaxRefusalKinds) {
    // A flood of certificates (each one new) is counted per fault, not followed one by one.
    key = Key{"*", refusal.fault, "*", "*"};
    refusal.message +=
        "; refusals of other peers and certificates for this reason are counted with it";
  }
  uint64_t carried = 0;
  if (auto it = windows_.find(key); it != windows_.end()) {
    if (now - it->second.opened < kRefusalWindow) {
      ++it->second.held;
      CloseWindows(now, false, &key, out);
      return out;
    }
    carried = it->second.held;
    windows_.erase(it);
  }
  CloseWindows(now, false, &key, out);
  refusal.suppressed = carried;
  refusal.summary = false;
  windows_.emplace(key, Window{now, refusal, 0});
  out.push_back(std::move(refusal));
  return out;
}

std::vector<HandshakeRefusal> HandshakeRefusals::Flush(bool all) {
  std::vector<HandshakeRefusal> out;
  std::lock_guard lock(mu_);
  CloseWindows(clock_.Now(), all, nullptr, out);
  return out;
}

void HandshakeRefusals::CloseWindows(std::chrono::steady_clock::time_point now, bool all,
                                     const Key* keep, std::vector<HandshakeRefusal>& out) {
  for (auto it = windows_.begin(); it != windows_.end();) {
    const bool closed = all || now - it->second.opened >= kRefusalWindow;
    if (!closed || (keep != nullptr && it->first == *keep)) {
      ++it;
      continue;
    }
    if (it->second.held > 0) {
      HandshakeRefusal count = it->second.first;
      count.suppressed = it->second.held;
      count.summary = true;
      out.push_back(std::move(count));
    }
    it = windows_.erase(it);
  }
}

}  // namespace benchlab
