// The files one end of a mutual-TLS channel holds (docs/security.md, "Mutual TLS"): the fleet
// CA's certificate, its own certificate and key, and optionally the CA's revocation list.
#pragma once

#include <string>

namespace benchlab {

struct TlsFiles {
  std::string ca, cert, key, crl;
  bool empty() const { return ca.empty() && cert.empty() && key.empty() && crl.empty(); }
  bool operator==(const TlsFiles&) const = default;
};

// `flags`, with each empty field taken from BENCHLAB_TLS_CA, BENCHLAB_TLS_CERT, BENCHLAB_TLS_KEY
// and BENCHLAB_TLS_CRL.
TlsFiles TlsFilesWithEnvironment(TlsFiles flags);

}  // namespace benchlab
