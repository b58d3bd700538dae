// Mutual TLS for benchlab's gRPC channels (docs/security.md, "Mutual TLS"). Every daemon and
// client holds a certificate from the fleet's CA (tls/ca.h); both ends of a channel verify the
// other's chain against the CA, refuse a revoked certificate, and check that the peer is who it
// must be: the server's certificate covers the host the client dialled and carries the role
// (and, for an agent, the name) the client expects. What a caller may do is decided per call from
// its certificate (CallerOf), never from a message. Every refused handshake is logged and handed
// to the context's refusal sink, at most once per kind per kRefusalWindow
// (rpc/handshake_refusals.h).
#pragma once

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/server_context.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/clock.h"
#include "common/status.h"
#include "rpc/handshake_refusals.h"
#include "tls/certificate.h"
#include "tls/files.h"

namespace benchlab {

// How often gRPC re-reads the certificate, key and CA files: a renewed certificate is used for
// the handshakes after that.
inline constexpr unsigned kTlsFileRefreshSeconds = 10;

class TlsContext : public std::enable_shared_from_this<TlsContext> {
 public:
  // Reads and checks the files: the CA certificate; this end's certificate, a benchlab
  // certificate issued by that CA, valid now, whose key `key` is; the CRL, signed by the CA.
  // InvalidArgument naming the file and what is wrong. `clock` paces the re-reads of the CRL and
  // CA files and the refusal windows; it must outlive the context.
  static Result<std::shared_ptr<TlsContext>> Load(TlsFiles files,
                                                  Clock& clock = RealClockInstance());

  const TlsFiles& files() const { return files_; }
  CertificateInfo own() const;

  // Reads the files again (SIGHUP). On any error the previous certificate and CRL stay in force
  // and the error is returned.
  Status Reload();

  // Whether the CRL lists `serial` (upper-case hexadecimal). Re-reads the CRL when its file
  // changed, at most once a second.
  bool Revoked(const std::string& serial);

  // The identity in a peer's PEM certificate (ParseCertificatePem), remembered: a connection
  // presents the same certificate on every call, and parsing it with OpenSSL 3's decoders cost
  // more than the rest of a heartbeat. At most kPeerCacheSize certificates are kept.
  static constexpr size_t kPeerCacheSize = 4096;
  Result<CertificateInfo> ParsePeer(std::string_view pem);

  // A server that requires a client certificate from the CA, valid now, not revoked, whose role
  // is one of `roles` (the finer per-method check is the handler's, through CallerOf). The chain
  // is verified by benchlab's verifier, not inside gRPC's TLS, so that a certificate refused as
  // expired or from another CA is reported like every other refusal.
  std::shared_ptr<grpc::ServerCredentials> ServerCredentials(std::set<Role> roles);

  // A channel to a server whose certificate is from the CA, not revoked, covers the host dialled,
  // and carries `role` (and, when `name` is set, that name).
  std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(Role role, std::string name = "");

  // Where refused handshakes go besides the log (the coordinator: its audit trail); null: the log
  // only. The sink is called on gRPC's threads, never after SetRefusalSink returns with another.
  using RefusalSink = std::function<void(const HandshakeRefusal&)>;
  void SetRefusalSink(RefusalSink sink);
  // Logs a refused handshake and hands it to the sink, unless one like it was reported within
  // kRefusalWindow (then it is counted and reported with the next report of its kind).
  void ReportRefusal(HandshakeRefusal refusal);
  // Reports the counts held back whose windows have closed (`all`: every one, before a stop).
  void FlushRefusals(bool all = false);

  // The CA certificate's PEM text, read again when its file changed (checked at most once a
  // second); a file that cannot be read leaves the previous text in force.
  std::string CaPem();

 private:
  TlsContext(TlsFiles files, Clock& clock);
  Status ReadFiles();

  const TlsFiles files_;
  Clock& clock_;
  mutable std::mutex mu_;
  CertificateInfo own_;  // under mu_
  // The one provider of this context's files that every credential shares: each provider
  // watches the files on a thread of its own, so one per channel would cost a thread per agent
  // the coordinator dials. Replaced by Reload, so new connections see the files at once.
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider_;  // under mu_
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> SharedProvider();
  std::mutex peers_mu_;
  std::unordered_map<std::string, CertificateInfo> peers_;  // by PEM text; under peers_mu_
  std::set<std::string> revoked_;                           // under mu_
  std::string crl_stamp_;  // the CRL file's mtime and size when read; under mu_
  std::chrono::steady_clock::time_point crl_checked_{};  // under mu_
  std::string ca_pem_;                                   // under mu_
  std::string ca_stamp_;                                 // under mu_
  std::chrono::steady_clock::time_point ca_checked_{};   // under mu_

  void Emit(const std::vector<HandshakeRefusal>& reports);
  HandshakeRefusals refusals_;
  std::mutex sink_mu_;  // held while the sink runs, so that replacing it waits for it
  RefusalSink sink_;    // under sink_mu_
};

// Whether `host` is a loopback address or name: 127.0.0.0/8, ::1 or localhost.
bool IsLoopbackHost(std::string_view host);

// Where a daemon may listen (docs/security.md, "Mutual TLS"): anywhere with TLS; without it, on
// loopback only, unless `insecure` (then a warning is logged on every start). The error says how
// to set TLS up.
Status CheckListenPolicy(std::string_view daemon, std::string_view host, bool tls, bool insecure);

// Who made this call: the identity in the client's certificate. nullopt when the server has no
// TLS (an insecure listener, allowed on loopback only). UNAUTHENTICATED when the call carries a
// certificate benchlab cannot read or `tls` lists as revoked (one revoked after its connection
// was made); `presented`, when given, then receives the certificate's identity if it has one, so
// that the refusal can be recorded under it.
Result<std::optional<CertificateInfo>> CallerOf(
    const grpc::ServerContext& ctx, TlsContext* tls,
    std::optional<CertificateInfo>* presented = nullptr);

// PERMISSION_DENIED unless the caller's role is one of `roles`; OK for every caller of an
// insecure listener. `caller`, when given, receives the identity.
grpc::Status RequireRole(const grpc::ServerContext& ctx, TlsContext* tls, std::set<Role> roles,
                         std::optional<CertificateInfo>* caller = nullptr);

}  // namespace benchlab
