// One connection of the HTTP front (rpc/http_server.h): its TLS handshake, then requests read
// whole and answered one at a time, each step under its HttpLimits deadline (beast's stream
// timeouts are deadlines for a whole operation, however many reads it takes). A connection is
// created, run and ended on the front's network thread; workers only run handlers on a copy of
// a request it has read.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <functional>
#include <memory>
#include <string>

#include "rpc/http_routes.h"
#include "rpc/http_server.h"

namespace benchlab {

class HttpConnection {
 public:
  virtual ~HttpConnection() = default;
  virtual void Start() = 0;
  // Closes the connection unless a request on it is being answered; that one is answered and
  // the connection closes after it.
  virtual void Shutdown() = 0;
};

// What a connection needs from the front that holds it; called on the network thread.
class HttpConnectionHost {
 public:
  virtual ~HttpConnectionHost() = default;
  virtual const HttpLimits& limits() const = 0;
  // True once the front stops: the request being read is the connection's last.
  virtual bool stopping() const = 0;
  virtual HttpRoutes& routes() = 0;
  // Runs `work` on a worker, then `done` with its answer on the network thread, which stays up
  // until it has. `done` (which may own the connection) is never destroyed by the worker.
  virtual void Run(std::function<HttpRoutes::Answer()> work,
                   std::function<void(HttpRoutes::Answer)> done) = 0;
  // From the connection's destructor: it counted under `address`.
  virtual void Closed(HttpConnection* connection, const std::string& address) = 0;
};

// A connection on `socket`, over TLS with `tls` when it is not null, from the client `peer`,
// counted under `address` (ConnectionCaps). Start it.
std::shared_ptr<HttpConnection> NewHttpConnection(HttpConnectionHost& host,
                                                  boost::asio::ip::tcp::socket socket,
                                                  HttpRoutes::Peer peer, std::string address,
                                                  boost::asio::ssl::context* tls);

}  // namespace benchlab
