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

}  // namespace

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
