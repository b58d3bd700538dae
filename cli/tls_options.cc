#include "cli/tls_options.h"

#include <CLI/CLI.hpp>

namespace benchlab {

void AddTlsOptions(CLI::App* cmd, TlsFiles* files) {
  cmd->add_option(
         "--tls-ca", files->ca,
         "the fleet CA's certificate (ca.pem from `benchlab ca init`); env BENCHLAB_TLS_CA")
      ->group("Mutual TLS");
  cmd->add_option("--tls-cert", files->cert,
                  "this end's certificate (`benchlab ca issue`); env BENCHLAB_TLS_CERT")
      ->group("Mutual TLS");
  cmd->add_option("--tls-key", files->key, "this end's private key; env BENCHLAB_TLS_KEY")
      ->group("Mutual TLS");
  cmd->add_option("--tls-crl", files->crl,
                  "the CA's revocation list (crl.pem), re-read when it changes; env "
                  "BENCHLAB_TLS_CRL")
      ->group("Mutual TLS");
}

Result<std::shared_ptr<TlsContext>> LoadTls(const TlsFiles& flags, const std::set<Role>& roles) {
  const TlsFiles files = TlsFilesWithEnvironment(flags);
  if (files.empty()) return std::shared_ptr<TlsContext>();
  auto tls = TlsContext::Load(files);
  if (!tls.ok()) return tls.status();
  const CertificateInfo own = (*tls)->own();
  if (!roles.contains(own.role)) {
    std::string wanted;
    for (Role r : roles) wanted += (wanted.empty() ? "" : " or ") + std::string(RoleName(r));
    return Status::InvalidArgument(files.cert + " is " + IdentityUri(own.role, own.name) +
                                   "; this needs a " + wanted + " certificate");
  }
  return *tls;
}

}  // namespace benchlab
