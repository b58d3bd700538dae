// HttpServer: the HTTP front of the coordinator's dashboard and API
// (coordinator/server/http_api.h) and of an agent's /metrics (agent/server/agent_metrics.h).
// Routes, handlers, the page's files and the error handlers are cpp-httplib's (routes()); the
// connections are not. One network thread reads every request whole, within deadlines for its
// head and its body (not a timeout that each byte restarts), TLS handshakes included, and only
// a complete request reaches one of a few worker threads, which runs httplib's routing on it in
// memory. So clients that trickle bytes or hold connections open occupy no worker; they are
// closed by the deadlines and held to caps per address and in all (HttpLimits; docs/security.md,
// "Limits"). The owner configures routes(), SetAnswerHeaders and UseTls, then Bind and Serve;
// Stop may come from any thread but its own (not from a handler).
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "common/parse.h"
#include "common/status.h"

namespace benchlab {

// What one HTTP front allows a client; every field is a limit of docs/security.md's table.
struct HttpLimits {
  // A TLS handshake completes within this of the connection.
  std::chrono::milliseconds handshake_timeout{10'000};
  // A request's head (request line and headers) arrives whole within this: from the connection
  // (or its handshake) for the first request, from its first byte for the next ones.
  std::chrono::milliseconds head_timeout{10'000};
  // The body, within this of the head.
  std::chrono::milliseconds body_timeout{10'000};
  // A kept connection waits this long for the first byte of its next request.
  std::chrono::milliseconds idle_timeout{5'000};
  // A client takes an answer whole within this.
  std::chrono::milliseconds write_timeout{10'000};
  // After the front refuses a request (400, 413, 431), what the client still sends is read and
  // dropped for this long before the connection closes, so that the refusal reaches it.
  std::chrono::milliseconds linger_timeout{2'000};
  size_t max_head_bytes = 16 * 1024;         // beyond: 431
  size_t max_body_bytes = 64 * 1024;         // beyond: 413
  size_t max_requests_per_connection = 100;  // then the connection closes
  size_t max_connections = 512;              // open at once; beyond, a new one is closed at once
  size_t max_connections_per_address = 256;  // from one client address, likewise
  size_t workers = 4;                        // threads running handlers
};

class HttpFront;  // rpc/http_server.cc

class HttpServer {
 public:
  explicit HttpServer(const HttpLimits& limits = {});
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // httplib's routes, handlers, mount points and error handlers, set before Serve. The front
  // gives it each request with the client's address (Request::remote_addr, remote_port); its
  // own listening, threads and timeouts are unused, its keep-alive and payload settings are the
  // front's, and its content providers (streamed answers) are not supported.
  httplib::Server& routes();
  // Headers of every answer, those the front gives by itself included.
  void SetAnswerHeaders(const httplib::Headers& headers);
  // Serves HTTPS (TLS 1.2 at least): `setup` loads the certificate chain and key into the
  // context and says whether it could.
  bool UseTls(const std::function<bool(SSL_CTX&)>& setup);

  // Binds `listen`, or a free port of its host when the port is 0, and listens. Returns the
  // port; Unavailable when the address cannot be bound (in use, also by another benchlab, or
  // not an address of this host).
  Result<uint16_t> Bind(const HostPort& listen);
  // Serves a bound server on threads of its own; returns at once, and a Stop right after ends
  // them.
  void Serve();
  // Stops accepting and closes connections waiting for a request; requests being answered
  // finish first (within HttpLimits::write_timeout for their answers). Safe to call twice.
  void Stop();

 private:
  std::unique_ptr<HttpFront> front_;
};

}  // namespace benchlab
