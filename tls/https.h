// HTTPS for the coordinator's dashboard (docs/security.md, "The dashboard"): the certificate
// chain and key an operator gives in PEM files, loaded into the HTTP server's TLS context
// (rpc/http_server.h, HttpServer::UseTls). Unlike the gRPC channels' certificates (rpc/tls.h)
// they need not come from benchlab's CA: browsers check them. Stateless; any thread.
#pragma once

#include <openssl/ssl.h>

#include <string>

#include "common/status.h"

namespace benchlab {

// Loads the certificate chain in `cert` and its private key in `key` (PEM files) into `ctx`
// and holds it to TLS 1.2 at least. InvalidArgument naming the file when either is not given,
// does not load, or the key is not the certificate's; `ctx` is then to be discarded.
Status LoadHttpsKeyPair(SSL_CTX& ctx, const std::string& cert, const std::string& key);

}  // namespace benchlab
