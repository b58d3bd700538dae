// The mutual-TLS options every command that speaks gRPC takes (docs/security.md, "Mutual TLS"):
// --tls-ca, --tls-cert, --tls-key and --tls-crl, each falling back to BENCHLAB_TLS_CA,
// BENCHLAB_TLS_CERT, BENCHLAB_TLS_KEY and BENCHLAB_TLS_CRL.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "common/status.h"
#include "rpc/tls.h"

namespace CLI {
class App;
}

namespace benchlab {

// Adds the four options to `cmd`, filling `files`.
void AddTlsOptions(CLI::App* cmd, TlsFiles* files);

// The TLS of a command or daemon whose certificate must carry one of `roles`: null when neither
// the options nor the environment name any file (plaintext), else the loaded, checked context.
// InvalidArgument names the file or says which role the certificate has.
Result<std::shared_ptr<TlsContext>> LoadTls(const TlsFiles& flags, const std::set<Role>& roles);

}  // namespace benchlab
