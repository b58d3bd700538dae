// Certificates benchlab's CA would never issue, and a client that presents whatever it is given:
// for tests of what a server refuses at the handshake. Reissue signs a changed copy of an issued
// certificate with the CA's own key (expired, not yet valid, or without its benchlab identity);
// RawCredentials makes a channel that trusts the real CA but presents any certificate, which
// TlsContext::Load would refuse to load.
#pragma once

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>

namespace benchlab::forged {

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct Change {
  long starts_in_s = -300;     // the certificate's start, from now
  long ends_in_s = 86400;      // its end, from now
  bool drop_identity = false;  // remove its subject alternative names (benchlab://ROLE/NAME)
};

// Rewrites CA_DIR/NAME.pem as `change` says and signs it again with CA_DIR/ca.key. "" when done,
// else what failed.
inline std::string Reissue(const std::string& ca_dir, const std::string& name, Change change) {
  const std::string cert_path = ca_dir + "/" + name + ".pem";
  const std::string key_text = ReadText(ca_dir + "/ca.key");
  const std::string cert_text = ReadText(cert_path);
  BIO* key_bio = BIO_new_mem_buf(key_text.data(), static_cast<int>(key_text.size()));
  EVP_PKEY* ca_key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  BIO* cert_bio = BIO_new_mem_buf(cert_text.data(), static_cast<int>(cert_text.size()));
  X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  BIO_free(cert_bio);
  std::string error;
  if (ca_key == nullptr || cert == nullptr) error = "cannot read " + cert_path + " or ca.key";
  if (error.empty() && (X509_gmtime_adj(X509_getm_notBefore(cert), change.starts_in_s) == nullptr ||
                        X509_gmtime_adj(X509_getm_notAfter(cert), change.ends_in_s) == nullptr)) {
    error = "cannot set the validity";
  }
  if (error.empty() && change.drop_identity) {
    const int at = X509_get_ext_by_NID(cert, NID_subject_alt_name, -1);
    if (at >= 0) X509_EXTENSION_free(X509_delete_ext(cert, at));
  }
  if (error.empty() && X509_sign(cert, ca_key, EVP_sha256()) == 0) error = "cannot sign";
  if (error.empty()) {
    BIO* out = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(out, cert);
    char* data = nullptr;
    const long n = BIO_get_mem_data(out, &data);
    std::ofstream(cert_path, std::ios::binary | std::ios::trunc)
        .write(data, static_cast<std::streamsize>(n));
    BIO_free(out);
  }
  X509_free(cert);
  EVP_PKEY_free(ca_key);
  return error;
}

// A channel's credentials that trust `ca_pem_path` and present `cert_path` with `key_path`,
// checked by nobody on this side.
inline std::shared_ptr<grpc::ChannelCredentials> RawCredentials(const std::string& ca_pem_path,
                                                                const std::string& cert_path,
                                                                const std::string& key_path) {
  auto provider = std::make_shared<grpc::experimental::StaticDataCertificateProvider>(
      ReadText(ca_pem_path), std::vector<grpc::experimental::IdentityKeyCertPair>{
                                 {ReadText(key_path), ReadText(cert_path)}});
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(provider);
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  return grpc::experimental::TlsCredentials(options);
}

}  // namespace benchlab::forged
