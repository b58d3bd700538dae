#include "tls/https.h"

#include "tls/openssl_util.h"

namespace benchlab {
namespace {

// OpenSSL's reasons for the failure just seen, for a message in parentheses.
std::string Detail() {
  const std::string queued = tls_detail::OpensslErrorQueue();
  return queued.empty() ? "no detail from OpenSSL" : queued;
}

}  // namespace

Status LoadHttpsKeyPair(SSL_CTX& ctx, const std::string& cert, const std::string& key) {
  if (cert.empty() || key.empty()) {
    return Status::InvalidArgument(
        "HTTPS needs both a certificate and its key (--http-tls-cert and --http-tls-key)");
  }
  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(&ctx, cert.c_str()) != 1) {
    return Status::InvalidArgument(cert + ": not a PEM certificate chain that loads (" + Detail() +
                                   ")");
  }
  if (SSL_CTX_use_PrivateKey_file(&ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Status::InvalidArgument(key + ": not a PEM private key that loads, or not the key of " +
                                   cert + " (" + Detail() + ")");
  }
  if (SSL_CTX_check_private_key(&ctx) != 1) {
    return Status::InvalidArgument(key + ": is not the key of the certificate in " + cert);
  }
  return Status::Ok();
}

}  // namespace benchlab
