#include "rpc/http_server.h"

#include <fcntl.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rpc/connection_caps.h"
#include "rpc/http_connection.h"
#include "rpc/http_routes.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

// What a cap counts: an IPv4 client of a dual-stack socket is its IPv4 address.
std::string AddressKey(const net::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return net::ip::make_address_v4(net::ip::v4_mapped, address.to_v6()).to_string();
  }
  return address.to_string();
}

// Targets an agent starts must not inherit its listening socket or its clients'.
void CloseOnExec(int fd) { ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC); }

}  // namespace

// The network thread (an io_context of its own: accepting, every connection's reads and
// writes, the caps) and the workers (a thread pool running httplib's routing).
class HttpFront final : public HttpConnectionHost {
 public:
  explicit HttpFront(const HttpLimits& limits);
  ~HttpFront() override { Stop(); }

  bool UseTls(const std::function<bool(SSL_CTX&)>& setup);
  Result<uint16_t> Bind(const HostPort& listen);
  void Serve();
  void Stop();

  const HttpLimits& limits() const override { return limits_; }
  bool stopping() const override { return stopping_; }
  HttpRoutes& routes() override { return routes_; }
  void Run(std::function<HttpRoutes::Answer()> work,
           std::function<void(HttpRoutes::Answer)> done) override;
  void Closed(HttpConnection* connection, const std::string& address) override;

 private:
  void Accept();
  void Admit(tcp::socket socket);
  // Logs a refused connection: at most one line every 10 s, which counts those not logged.
  void NoteRefusal(const std::string& what);

  const HttpLimits limits_;
  HttpRoutes routes_;
  std::unique_ptr<net::ssl::context> tls_;
  ConnectionCaps caps_;
  std::unordered_map<HttpConnection*, std::weak_ptr<HttpConnection>> live_;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point last_refusal_log_{};
  size_t refusals_not_logged_ = 0;
  std::mutex mu_;  // serving_, stopped_: Serve and Stop may come from any thread
  bool serving_ = false;
  bool stopped_ = false;
  // Destroyed before what its pending handlers' connections use above.
  net::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  net::steady_timer retry_{io_};
  std::unique_ptr<net::thread_pool> pool_;
  std::thread thread_;
};

HttpFront::HttpFront(const HttpLimits& limits)
    : limits_(limits), caps_(limits.max_connections, limits.max_connections_per_address) {
  // What httplib says in its Keep-Alive header, and the body it accepts, are the front's.
  routes_.set_keep_alive_max_count(limits.max_requests_per_connection);
  routes_.set_keep_alive_timeout(std::max<time_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(limits.idle_timeout).count()));
  routes_.set_payload_max_length(limits.max_body_bytes);
}

bool HttpFront::UseTls(const std::function<bool(SSL_CTX&)>& setup) {
  tls_ = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
  tls_->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_compression |
                    net::ssl::context::no_sslv2 | net::ssl::context::no_sslv3 |
                    net::ssl::context::no_tlsv1 | net::ssl::context::no_tlsv1_1);
  SSL_CTX_set_min_proto_version(tls_->native_handle(), TLS1_2_VERSION);
  if (setup(*tls_->native_handle())) return true;
  tls_.reset();
  return false;
}

Result<uint16_t> HttpFront::Bind(const HostPort& listen) {
  const Status unavailable = Status::Unavailable("cannot listen on " + listen.ToString());
  error_code ec;
  tcp::resolver resolver(io_);
  const auto found = resolver.resolve(listen.host, std::to_string(listen.port),
                                      tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec) return unavailable;
  for (const auto& entry : found) {
    const tcp::endpoint endpoint = entry.endpoint();
    tcp::acceptor acceptor(io_);
    if (acceptor.open(endpoint.protocol(), ec)) continue;
    // SO_REUSEADDR binds a port whose old connections linger in TIME_WAIT after a restart;
    // SO_REUSEPORT would let a second coordinator bind the same port and take half its
    // connections, so it is not set.
    acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (endpoint.address().is_v6()) acceptor.set_option(net::ip::v6_only(false), ec);
    if (acceptor.bind(endpoint, ec) ||
        acceptor.listen(net::socket_base::max_listen_connections, ec)) {
      continue;
    }
    CloseOnExec(acceptor.native_handle());
    const uint16_t port = acceptor.local_endpoint(ec).port();
    if (ec) continue;
    acceptor_ = std::move(acceptor);
    return port;
  }
  return unavailable;
}

void HttpFront::Serve() {
  std::lock_guard lock(mu_);
  if (serving_ || stopped_ || !acceptor_.is_open()) return;
  serving_ = true;
  pool_ = std::make_unique<net::thread_pool>(std::max<size_t>(1, limits_.workers));
  Accept();
  thread_ = std::thread([this] { io_.run(); });
}

void HttpFront::Stop() {
  std::lock_guard lock(mu_);
  if (stopped_) return;
  stopped_ = true;
  if (!serving_) {
    error_code ignored;
    acceptor_.close(ignored);
    return;
  }
  net::post(io_, [this] {
    stopping_ = true;
    error_code ignored;
    acceptor_.close(ignored);
    retry_.cancel();
    std::vector<std::shared_ptr<HttpConnection>> open;
    for (auto& [raw, weak] : live_) {
      if (auto connection = weak.lock()) open.push_back(std::move(connection));
    }
    for (auto& connection : open) connection->Shutdown();
  });
  // The network thread ends when no connection is left and no answer is on its way.
  thread_.join();
  pool_->join();
}

void HttpFront::Run(std::function<HttpRoutes::Answer()> work,
                    std::function<void(HttpRoutes::Answer)> done) {
  auto network = net::prefer(io_.get_executor(), net::execution::outstanding_work.tracked);
  net::post(*pool_, [work = std::move(work), done = std::move(done), network]() mutable {
    auto result = work();
    net::post(network, [done = std::move(done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
  });
}

void HttpFront::Closed(HttpConnection* connection, const std::string& address) {
  live_.erase(connection);
  caps_.Release(address);
}

void HttpFront::Accept() {
  acceptor_.async_accept([this](error_code ec, tcp::socket socket) {
    if (!acceptor_.is_open()) return;  // stopping
    if (ec) {
      // Out of descriptors (EMFILE) or the like: try again shortly rather than spin.
      NoteRefusal("cannot accept a connection: " + ec.message());
      retry_.expires_after(std::chrono::milliseconds(100));
      retry_.async_wait([this](error_code waited) {
        if (!waited && acceptor_.is_open()) Accept();
      });
      return;
    }
    Admit(std::move(socket));
    Accept();
  });
}

void HttpFront::Admit(tcp::socket socket) {
  error_code ec;
  const tcp::endpoint remote = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  const tcp::endpoint local = socket.local_endpoint(ec);
  if (ec) return;
  CloseOnExec(socket.native_handle());
  const std::string address = AddressKey(remote.address());
  switch (caps_.Admit(address)) {
    case ConnectionCaps::Admission::kAdmitted:
      break;
    case ConnectionCaps::Admission::kTotalFull:
      NoteRefusal("refused a connection from " + address + ": " +
                  std::to_string(limits_.max_connections) + " connections are open");
      socket.close(ec);
      return;
    case ConnectionCaps::Admission::kAddressFull:
      NoteRefusal("refused a connection from " + address + ": it has " +
                  std::to_string(limits_.max_connections_per_address) + " open");
      socket.close(ec);
      return;
  }
  HttpRoutes::Peer peer{remote.address().to_string(), remote.port(), local.address().to_string(),
                        local.port()};
  auto connection =
      NewHttpConnection(*this, std::move(socket), std::move(peer), address, tls_.get());
  live_.emplace(connection.get(), connection);
  connection->Start();
}

void HttpFront::NoteRefusal(const std::string& what) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_refusal_log_ < std::chrono::seconds(10)) {
    ++refusals_not_logged_;
    return;
  }
  if (refusals_not_logged_ > 0) {
    spdlog::warn("http: {} (and {} more refused since the last such line)", what,
                 refusals_not_logged_);
  } else {
    spdlog::warn("http: {}", what);
  }
  refusals_not_logged_ = 0;
  last_refusal_log_ = now;
}

HttpServer::HttpServer(const HttpLimits& limits) : front_(std::make_unique<HttpFront>(limits)) {}
HttpServer::~HttpServer() { Stop(); }
httplib::Server& HttpServer::routes() { return front_->routes(); }
void HttpServer::SetAnswerHeaders(const httplib::Headers& headers) {
  front_->routes().SetAnswerHeaders(headers);
}
bool HttpServer::UseTls(const std::function<bool(SSL_CTX&)>& setup) {
  return front_->UseTls(setup);
}
Result<uint16_t> HttpServer::Bind(const HostPort& listen) { return front_->Bind(listen); }
void HttpServer::Serve() { front_->Serve(); }
void HttpServer::Stop() { front_->Stop(); }

}  // namespace benchlab
