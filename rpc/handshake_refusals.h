// Handshakes refused for the peer's certificate (docs/security.md, "Mutual TLS"), and how often
// each is reported. gRPC answers a refused handshake with a TLS alert alone: the client learns no
// reason and the server's own log gets one line from gRPC without the peer's certificate. The
// certificate verifier (rpc/tls.h) therefore reports each refusal itself, with what the
// certificate says and why it was refused; HandshakeRefusals keeps a flood of them (one client
// retrying with an expired certificate, or a scanner) to one report per peer, certificate and
// reason per kRefusalWindow, with the count of those it held back. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/clock.h"

namespace benchlab {

// Why a handshake was refused.
enum class HandshakeFault {
  kExpired,      // the certificate's end has passed
  kNotYetValid,  // its start is still ahead
  kUnknownCa,    // not issued by the fleet's CA
  kInvalid,      // issued by the CA, but fails another check of the chain (its purpose, ...)
  kNotBenchlab,  // no single benchlab://ROLE/NAME identity in it
  kRevoked,      // listed in the CRL
  kWrongRole,    // a role the listener does not take
  kWrongName,    // (client side) not the agent dialled
  kWrongHost,    // (client side) does not cover the host dialled
};

// "expired", "not yet valid", "unknown CA", "invalid", "not a benchlab certificate", "revoked",
// "wrong role", "wrong name", "wrong host".
std::string_view HandshakeFaultName(HandshakeFault fault);

struct HandshakeRefusal {
  HandshakeFault fault = HandshakeFault::kInvalid;
  // The address dialled, when this end is the client. A server's verifier is not told who
  // connected: gRPC 1.51's TlsCustomVerificationCheckRequest carries the peer's certificates and
  // names, and the dialled name on a client only, never the peer's address.
  std::string peer;
  std::string identity;  // benchlab://ROLE/NAME when the certificate names one, else ""
  std::string role;      // its role, when it names one
  std::string subject;   // the certificate's subject, one line (RFC 2253)
  std::string serial;    // upper-case hexadecimal
  std::string message;   // why, in full: what the verifier answered the handshake with
  // Refusals of the same peer, certificate and fault that were held back (not reported one by
  // one) since the previous report of this kind.
  uint64_t suppressed = 0;
  // Whether this report is only that count, sent when its window closed without a new refusal;
  // otherwise it is a refusal that just happened.
  bool summary = false;
};

// One line for a log or the audit trail: "expired: benchlab://agent/srv (serial 1F...) ended
// 2026-11-30T10:00:00Z" followed, when some were held back, by how many.
std::string DescribeRefusal(const HandshakeRefusal& refusal);

inline constexpr std::chrono::seconds kRefusalWindow{10};
// Peers, certificates and faults followed at once; refusals of any further ones are counted
// together, per fault, as "other certificates".
inline constexpr size_t kMaxRefusalKinds = 256;

class HandshakeRefusals {
 public:
  explicit HandshakeRefusals(Clock& clock) : clock_(clock) {}

  // What to report now that `refusal` happened: the refusal itself when it is the first of its
  // peer, certificate and fault within kRefusalWindow (carrying the count held back in the window
  // before, if any), and the counts of other kinds whose windows have closed.
  std::vector<HandshakeRefusal> Add(HandshakeRefusal refusal);

  // The counts of kinds whose windows have closed (`all`: every count still held, for a stop).
  std::vector<HandshakeRefusal> Flush(bool all = false);

 private:
  using Key = std::tuple<std::string, HandshakeFault, std::string, std::string>;
  struct Window {
    std::chrono::steady_clock::time_point opened;
    HandshakeRefusal first;  // as reported
    uint64_t held = 0;       // refusals since, not reported
  };
  void CloseWindows(std::chrono::steady_clock::time_point now, bool all, const Key* keep,
                    std::vector<HandshakeRefusal>& out);

  Clock& clock_;
  std::mutex mu_;
  std::map<Key, Window> windows_;  // under mu_
};

}  // namespace benchlab
