#include "rpc/tls.h"

#include <arpa/inet.h>
#include <grpcpp/security/auth_context.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "common/clock.h"
#include "spdlog/spdlog.h"
#include "tls/verify.h"

namespace benchlab {
namespace {

using grpc::experimental::ExternalCertificateVerifier;
using grpc::experimental::TlsCustomVerificationCheckRequest;

std::string FileStamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  return std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The host of a gRPC target: "host:port", "[v6]:port", "dns:///host:port" or a bare host.
std::string TargetHost(std::string target) {
  if (auto scheme = target.find(":///"); scheme != std::string::npos) {
    target = target.substr(scheme + 4);
  }
  if (!target.empty() && target.front() == '[') {
    const size_t close = target.find(']');
    return close == std::string::npos ? target : target.substr(1, close - 1);
  }
  const size_t colon = target.rfind(':');
  if (colon != std::string::npos && target.find(':') == colon) return target.substr(0, colon);
  return target;
}

std::string RoleList(const std::set<Role>& roles) {
  std::string out;
  for (Role r : roles) out += (out.empty() ? "" : " or ") + std::string(RoleName(r));
  return out;
}

// Checks the peer of one handshake. A server verifies the client's chain itself (gRPC's TLS asks
// for the certificate without verifying it), so that every refusal, an expired certificate or
// one from another CA included, is reported with its reason; a client leaves the server's chain
// to gRPC, then checks its identity and host. Each refusal goes to TlsContext::ReportRefusal.
class PeerVerifier : public ExternalCertificateVerifier {
 public:
  PeerVerifier(std::shared_ptr<TlsContext> tls, std::set<Role> roles, std::string name,
               bool client_side)
      : tls_(std::move(tls)),
        roles_(std::move(roles)),
        name_(std::move(name)),
        client_side_(client_side) {}

  bool Verify(TlsCustomVerificationCheckRequest* request, std::function<void(grpc::Status)>,
              grpc::Status* sync_status) override {
    *sync_status = Check(*request);
    tls_->FlushRefusals();
    return true;
  }
  void Cancel(TlsCustomVerificationCheckRequest*) override {}

 private:
  static std::string Text(grpc::string_ref s) { return std::string(s.data(), s.size()); }

  grpc::Status Check(const TlsCustomVerificationCheckRequest& request) {
    const std::string pem = Text(request.peer_cert());
    // What any certificate says, benchlab's or not, for the report.
    HandshakeRefusal refusal;
    if (client_side_) refusal.peer = Text(request.target_name());
    auto any = ParseCertificatePem(pem, "the peer's certificate", Identity::kNone);
    if (any.ok()) {
      refusal.subject = any->subject;
      refusal.serial = any->serial;
    }
    auto refuse = [&](HandshakeFault fault, grpc::StatusCode code, std::string message) {
      refusal.fault = fault;
      refusal.message = message;
      tls_->ReportRefusal(refusal);
      return grpc::Status(code, std::move(message));
    };
    if (!any.ok()) {
      return refuse(HandshakeFault::kInvalid, grpc::StatusCode::UNAUTHENTICATED,
                    any.status().message());
    }
    const std::string serial = " (serial " + any->serial + ")";
    auto peer = ParseCertificatePem(pem, "the peer's certificate");
    if (peer.ok()) {
      refusal.identity = IdentityUri(peer->role, peer->name);
      refusal.role = std::string(RoleName(peer->role));
    }
    const std::string who = (peer.ok() ? refusal.identity : any->subject) + serial;
    if (!client_side_) {
      const ChainCheck chain =
          VerifyPeerChain(tls_->CaPem(), pem, Text(request.peer_cert_full_chain()), true);
      switch (chain.fault) {
        case ChainFault::kNone:
          break;
        case ChainFault::kExpired:
          return refuse(HandshakeFault::kExpired, grpc::StatusCode::UNAUTHENTICATED,
                        who + " ended " + FormatUtc(any->not_after));
        case ChainFault::kNotYetValid:
          return refuse(HandshakeFault::kNotYetValid, grpc::StatusCode::UNAUTHENTICATED,
                        who + " starts " + FormatUtc(any->not_before));
        case ChainFault::kUnknownCa:
          return refuse(HandshakeFault::kUnknownCa, grpc::StatusCode::UNAUTHENTICATED,
                        who + ", issued by " + any->issuer +
                            ", is not from this fleet's CA: " + chain.detail);
        case ChainFault::kInvalid:
          return refuse(HandshakeFault::kInvalid, grpc::StatusCode::UNAUTHENTICATED,
                        who + " does not verify against this fleet's CA: " + chain.detail);
      }
    }
    if (!peer.ok()) {
      return refuse(HandshakeFault::kNotBenchlab, grpc::StatusCode::UNAUTHENTICATED,
                    peer.status().message() + serial);
    }
    if (tls_->Revoked(peer->serial)) {
      return refuse(HandshakeFault::kRevoked, grpc::StatusCode::UNAUTHENTICATED,
                    who + " is revoked");
    }
    if (!roles_.contains(peer->role)) {
      return refuse(HandshakeFault::kWrongRole, grpc::StatusCode::PERMISSION_DENIED,
                    who + ": expected a certificate of role " + RoleList(roles_));
    }
    if (!name_.empty() && peer->name != name_) {
      return refuse(HandshakeFault::kWrongName, grpc::StatusCode::UNAUTHENTICATED,
                    "expected " + IdentityUri(peer->role, name_) + ", the peer is " + who);
    }
    if (client_side_) {
      const std::string host = Lower(TargetHost(Text(request.target_name())));
      const bool covered = std::any_of(peer->hosts.begin(), peer->hosts.end(),
                                       [&](const std::string& h) { return Lower(h) == host; });
      if (!covered) {
        std::string hosts;
        for (const std::string& h : peer->hosts) hosts += (hosts.empty() ? "" : ", ") + h;
        return refuse(HandshakeFault::kWrongHost, grpc::StatusCode::UNAUTHENTICATED,
                      who + " does not cover the host dialled, " + host +
                          " (its hosts: " + (hosts.empty() ? "none" : hosts) +
                          "; issue it with --host " + host + ")");
      }
    }
    return grpc::Status::OK;
  }

  const std::shared_ptr<TlsContext> tls_;
  const std::set<Role> roles_;
  const std::string name_;
  const bool client_side_;
};

std::shared_ptr<grpc::experimental::CertificateProviderInterface> Provider(const TlsFiles& f) {
  return std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      f.key, f.cert, f.ca, kTlsFileRefreshSeconds);
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost" || host == "::1") return true;
  in_addr v4{};
  const std::string text(host);
  return inet_pton(AF_INET, text.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

Status CheckListenPolicy(std::string_view daemon, std::string_view host, bool tls, bool insecure) {
  if (tls || IsLoopbackHost(host)) return Status::Ok();
  const std::string who(daemon);
  if (!insecure) {
    return Status::FailedPrecondition(
        who + ": listening on " + std::string(host) +
        " without TLS is refused: anyone who reaches the port could drive it. Give it "
        "--tls-ca, --tls-cert and --tls-key (agents: a [tls] table), made with `benchlab ca` "
        "(docs/security.md, \"Mutual TLS\"), or listen on 127.0.0.1; --insecure overrides this");
  }
  spdlog::warn(
      "{}: listening on {} WITHOUT TLS (--insecure): anyone who reaches the port may "
      "call it",
      who, host);
  return Status::Ok();
}

TlsContext::TlsContext(TlsFiles files, Clock& clock)
    : files_(std::move(files)), clock_(clock), refusals_(clock) {}

Result<std::shared_ptr<TlsContext>> TlsContext::Load(TlsFiles files, Clock& clock) {
  for (const auto& [value, flag] :
       {std::pair{&files.ca, "--tls-ca"}, std::pair{&files.cert, "--tls-cert"},
        std::pair{&files.key, "--tls-key"}}) {
    if (value->empty()) {
      return Status::InvalidArgument(std::string(flag) +
                                     ": missing; TLS needs --tls-ca, --tls-cert and --tls-key "
                                     "(make them with `benchlab ca`, docs/security.md)");
    }
  }
  std::shared_ptr<TlsContext> tls(new TlsContext(std::move(files), clock));
  if (Status s = tls->ReadFiles(); !s.ok()) return s;
  return tls;
}

Status TlsContext::ReadFiles() {
  auto ca = ReadPemFile(files_.ca);
  if (!ca.ok()) return ca.status();
  auto cert = ReadPemFile(files_.cert);
  if (!cert.ok()) return cert.status();
  auto key = ReadPemFile(files_.key);
  if (!key.ok()) return key.status();
  if (Status s = CheckIssuedBy(*ca, *cert, *key); !s.ok()) return s;
  auto own = ParseCertificatePem(cert->text, cert->path);
  if (!own.ok()) return own.status();
  std::set<std::string> revoked;
  std::string stamp;
  if (!files_.crl.empty()) {
    stamp = FileStamp(files_.crl);
    auto crl = ReadPemFile(files_.crl);
    if (!crl.ok()) return crl.status();
    auto serials = ReadCrl(*ca, *crl);
    if (!serials.ok()) return serials.status();
    revoked = std::move(*serials);
    if (revoked.contains(own->serial)) {
      return Status::InvalidArgument(files_.cert + " is revoked by " + files_.crl);
    }
  }
  if (ExpiresSoon(*own)) {
    spdlog::warn("TLS: {} ({}) ends {}; renew it with `benchlab ca issue`", files_.cert,
                 IdentityUri(own->role, own->name), FormatUtc(own->not_after));
  }
  std::lock_guard lock(mu_);
  own_ = std::move(*own);
  ca_pem_ = std::move(ca->text);
  ca_stamp_ = FileStamp(files_.ca);
  ca_checked_ = clock_.Now();
  revoked_ = std::move(revoked);
  crl_stamp_ = std::move(stamp);
  crl_checked_ = clock_.Now();
  return Status::Ok();
}

CertificateInfo TlsContext::own() const {
  std::lock_guard lock(mu_);
  return own_;
}

Status TlsContext::Reload() {
  BENCHLAB_RETURN_IF_ERROR(ReadFiles());
  std::lock_guard lock(mu_);
  provider_ = Provider(files_);
  return Status::Ok();
}

Result<CertificateInfo> TlsContext::ParsePeer(std::string_view pem) {
  const std::string key(pem);
  {
    std::lock_guard lock(peers_mu_);
    if (auto it = peers_.find(key); it != peers_.end()) return it->second;
  }
  auto parsed = ParseCertificatePem(pem, "the caller");
  if (!parsed.ok()) return parsed;
  std::lock_guard lock(peers_mu_);
  if (peers_.size() >= kPeerCacheSize) peers_.clear();  // a fleet is far smaller; a flood forgets
  peers_.emplace(key, *parsed);
  return parsed;
}

std::shared_ptr<grpc::experimental::CertificateProviderInterface> TlsContext::SharedProvider() {
  std::lock_guard lock(mu_);
  if (!provider_) provider_ = Provider(files_);
  return provider_;
}

bool TlsContext::Revoked(const std::string& serial) {
  if (files_.crl.empty()) return false;
  {
    std::lock_guard lock(mu_);
    const auto now = clock_.Now();
    if (now - crl_checked_ < std::chrono::seconds(1)) return revoked_.contains(serial);
    crl_checked_ = now;
    if (FileStamp(files_.crl) == crl_stamp_) return revoked_.contains(serial);
  }
  // The CRL changed: read it again; a list that does not verify leaves the old one in force.
  auto ca = ReadPemFile(files_.ca);
  auto crl = ReadPemFile(files_.crl);
  std::lock_guard lock(mu_);
  if (ca.ok() && crl.ok()) {
    if (auto serials = ReadCrl(*ca, *crl); serials.ok()) {
      revoked_ = std::move(*serials);
      crl_stamp_ = FileStamp(files_.crl);
    }
  }
  return revoked_.contains(serial);
}

std::string TlsContext::CaPem() {
  {
    std::lock_guard lock(mu_);
    const auto now = clock_.Now();
    if (now - ca_checked_ < std::chrono::seconds(1)) return ca_pem_;
    ca_checked_ = now;
    if (FileStamp(files_.ca) == ca_stamp_) return ca_pem_;
  }
  auto ca = ReadPemFile(files_.ca);
  std::lock_guard lock(mu_);
  if (ca.ok() && ParseCertificatePem(ca->text, ca->path, Identity::kNone).ok()) {
    ca_pem_ = std::move(ca->text);
    ca_stamp_ = FileStamp(files_.ca);
  }
  return ca_pem_;
}

void TlsContext::SetRefusalSink(RefusalSink sink) {
  std::lock_guard lock(sink_mu_);
  sink_ = std::move(sink);
}

void TlsContext::ReportRefusal(HandshakeRefusal refusal) {
  Emit(refusals_.Add(std::move(refusal)));
}

void TlsContext::FlushRefusals(bool all) { Emit(refusals_.Flush(all)); }

void TlsContext::Emit(const std::vector<HandshakeRefusal>& reports) {
  if (reports.empty()) return;
  std::lock_guard lock(sink_mu_);
  for (const HandshakeRefusal& r : reports) {
    spdlog::warn("TLS: refused the handshake of {}: {}",
                 r.peer.empty() ? "a client (gRPC does not give its address)" : r.peer,
                 DescribeRefusal(r));
    if (sink_) sink_(r);
  }
}

std::shared_ptr<grpc::ServerCredentials> TlsContext::ServerCredentials(std::set<Role> roles) {
  grpc::experimental::TlsServerCredentialsOptions options(SharedProvider());
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  // The client must present a certificate and prove it holds its key (TLS does that); its chain
  // is checked by PeerVerifier, which can then say why it refused one.
  options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_BUT_DONT_VERIFY);
  options.set_certificate_verifier(ExternalCertificateVerifier::Create<PeerVerifier>(
      shared_from_this(), std::move(roles), std::string(), false));
  return grpc::experimental::TlsServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> TlsContext::ChannelCredentials(Role role,
                                                                         std::string name) {
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(SharedProvider());
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  options.set_verify_server_certs(true);
  options.set_check_call_host(false);  // PeerVerifier checks the host
  options.set_certificate_verifier(ExternalCertificateVerifier::Create<PeerVerifier>(
      shared_from_this(), std::set<Role>{role}, std::move(name), true));
  return grpc::experimental::TlsCredentials(options);
}

Result<std::optional<CertificateInfo>> CallerOf(const grpc::ServerContext& ctx, TlsContext* tls,
                                                std::optional<CertificateInfo>* presented) {
  if (tls == nullptr) return std::optional<CertificateInfo>();
  const auto auth = ctx.auth_context();
  const auto pems =
      auth ? auth->FindPropertyValues("x509_pem_cert") : std::vector<grpc::string_ref>{};
  if (pems.empty()) return Status::Unauthenticated("the call carries no client certificate");
  auto caller = tls->ParsePeer(std::string_view(pems[0].data(), pems[0].size()));
  if (!caller.ok()) return Status::Unauthenticated(caller.status().message());
  if (presented != nullptr) *presented = *caller;
  if (tls->Revoked(caller->serial)) {
    return Status::Unauthenticated(IdentityUri(caller->role, caller->name) + " (serial " +
                                   caller->serial + ") is revoked");
  }
  return std::optional<CertificateInfo>(std::move(*caller));
}

grpc::Status RequireRole(const grpc::ServerContext& ctx, TlsContext* tls, std::set<Role> roles,
                         std::optional<CertificateInfo>* caller) {
  auto who = CallerOf(ctx, tls);
  if (!who.ok()) return {grpc::StatusCode::UNAUTHENTICATED, who.status().message()};
  if (who->has_value() && !roles.contains((*who)->role)) {
    return {grpc::StatusCode::PERMISSION_DENIED, IdentityUri((*who)->role, (*who)->name) +
                                                     " may not make this call; it needs " +
                                                     RolesWithArticle(roles) + " certificate"};
  }
  if (caller != nullptr) *caller = std::move(*who);
  return grpc::Status::OK;
}

}  // namespace benchlab
