#include "tls/files.h"

#include <cstdlib>

namespace benchlab {

TlsFiles TlsFilesWithEnvironment(TlsFiles flags) {
  auto from_env = [](std::string& field, const char* name) {
    if (!field.empty()) return;
    const char* value = std::getenv(name);
    if (value != nullptr) field = value;
  };
  from_env(flags.ca, "BENCHLAB_TLS_CA");
  from_env(flags.cert, "BENCHLAB_TLS_CERT");
  from_env(flags.key, "BENCHLAB_TLS_KEY");
  from_env(flags.crl, "BENCHLAB_TLS_CRL");
  return flags;
}

}  // namespace benchlab
