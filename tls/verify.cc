#include "tls/verify.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tls/openssl_util.h"

namespace benchlab {

using namespace tls_detail;

namespace {

X509Ptr ReadCert(const PemFile& file) {
  BioPtr bio = MemoryBio(file.text);
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  return cert;
}

X509Ptr ReadFirstCert(std::string_view pem) {
  BioPtr bio = MemoryBio(pem);
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  return cert;
}

struct X509StackFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};
using X509StackPtr = std::unique_ptr<STACK_OF(X509), X509StackFree>;

}  // namespace

ChainCheck VerifyPeerChain(std::string_view ca, std::string_view leaf, std::string_view chain,
                           bool peer_is_client) {
  X509Ptr ca_cert = ReadFirstCert(ca);
  if (!ca_cert) return {ChainFault::kInvalid, "the CA file holds no PEM certificate"};
  X509Ptr peer = ReadFirstCert(leaf);
  if (!peer) return {ChainFault::kInvalid, "not a PEM certificate"};
  X509StackPtr untrusted(sk_X509_new_null());
  BioPtr bio = MemoryBio(chain);
  while (untrusted) {
    X509* next = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
    if (next == nullptr) break;
    if (sk_X509_push(untrusted.get(), next) <= 0) X509_free(next);
  }
  ERR_clear_error();
  StorePtr store(X509_STORE_new());
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!untrusted || !store || !ctx || X509_STORE_add_cert(store.get(), ca_cert.get()) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), peer.get(), untrusted.get()) != 1 ||
      X509_STORE_CTX_set_purpose(
          ctx.get(), peer_is_client ? X509_PURPOSE_SSL_CLIENT : X509_PURPOSE_SSL_SERVER) != 1) {
    ERR_clear_error();
    return {ChainFault::kInvalid, "OpenSSL could not set up the verification"};
  }
  if (X509_verify_cert(ctx.get()) == 1) return {};
  const int error = X509_STORE_CTX_get_error(ctx.get());
  const int depth = X509_STORE_CTX_get_error_depth(ctx.get());
  ERR_clear_error();
  std::string detail = X509_verify_cert_error_string(error);
  if (depth > 0 &&
      (error == X509_V_ERR_CERT_HAS_EXPIRED || error == X509_V_ERR_CERT_NOT_YET_VALID)) {
    // Not the peer's own dates: the CA's (or an intermediate's).
    return {ChainFault::kInvalid, "the certificate above it: " + detail};
  }
  switch (error) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return {ChainFault::kExpired, std::move(detail)};
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return {ChainFault::kNotYetValid, std::move(detail)};
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return {ChainFault::kUnknownCa, std::move(detail)};
    default:
      return {ChainFault::kInvalid, std::move(detail)};
  }
}

Status CheckIssuedBy(const PemFile& ca, const PemFile& cert, const PemFile& key) {
  X509Ptr ca_cert = ReadCert(ca);
  if (!ca_cert) return Status::InvalidArgument(ca.path + ": expected the CA's PEM certificate");
  X509Ptr own = ReadCert(cert);
  if (!own) return Status::InvalidArgument(cert.path + ": expected a PEM certificate");
  BioPtr key_bio = MemoryBio(key.text);
  KeyPtr own_key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (!own_key) return Status::InvalidArgument(key.path + ": expected a PEM private key");
  if (X509_check_private_key(own.get(), own_key.get()) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument(key.path + " is not the key of " + cert.path);
  }
  StorePtr store(X509_STORE_new());
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!store || !ctx || X509_STORE_add_cert(store.get(), ca_cert.get()) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), own.get(), nullptr) != 1) {
    return OpensslError("checking " + cert.path);
  }
  if (X509_verify_cert(ctx.get()) != 1) {
    const int error = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return Status::InvalidArgument(cert.path + " does not verify against " + ca.path + ": " +
                                   X509_verify_cert_error_string(error));
  }
  return Status::Ok();
}

Result<std::set<std::string>> ReadCrl(const PemFile& ca, const PemFile& crl) {
  X509Ptr ca_cert = ReadCert(ca);
  if (!ca_cert) return Status::InvalidArgument(ca.path + ": expected the CA's PEM certificate");
  BioPtr bio = MemoryBio(crl.text);
  CrlPtr list(PEM_read_bio_X509_CRL(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (!list) return Status::InvalidArgument(crl.path + ": expected a PEM CRL");
  if (X509_CRL_verify(list.get(), X509_get0_pubkey(ca_cert.get())) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument(crl.path + " is not signed by the CA of " + ca.path);
  }
  std::set<std::string> serials;
  STACK_OF(X509_REVOKED)* entries = X509_CRL_get_REVOKED(list.get());
  for (int i = 0; i < sk_X509_REVOKED_num(entries); ++i) {
    serials.insert(SerialHex(X509_REVOKED_get0_serialNumber(sk_X509_REVOKED_value(entries, i))));
  }
  return serials;
}

Result<PemFile> ReadPemFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return PemFile{path, text.str()};
}

}  // namespace benchlab
