// TlsHttpServer: a loopback (127.0.0.1, port 0) HTTPS/1.1 server for the load generator's TLS
// tests, on OpenSSL with blocking sockets and a thread per connection. It answers every request
// head with "200 hello" and keeps the connection, and counts what a real server's own counters
// would: handshakes, of which resumed, and responses. Session tickets are on (OpenSSL's default:
// two per TLS 1.3 handshake). Destroy to stop: threads and sockets close.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace benchlab {

class TlsHttpServer {
 public:
  struct Options {
    std::string cert_file;  // PEM chain for 127.0.0.1
    std::string key_file;
    int min_version = TLS1_2_VERSION;
    int max_version = TLS1_3_VERSION;
    // The protocol chosen when the client offers it; else http/1.1 when offered.
    std::string prefer_alpn;
  };

  explicit TlsHttpServer(Options options) : options_(std::move(options)) {
    // OpenSSL writes with write(2): a client gone before a response must not kill the test.
    ::signal(SIGPIPE, SIG_IGN);
    ctx_ = SSL_CTX_new(TLS_server_method());
    ok_ = ctx_ != nullptr &&
          SSL_CTX_use_certificate_chain_file(ctx_, options_.cert_file.c_str()) == 1 &&
          SSL_CTX_use_PrivateKey_file(ctx_, options_.key_file.c_str(), SSL_FILETYPE_PEM) == 1;
    if (!ok_) return;
    SSL_CTX_set_min_proto_version(ctx_, options_.min_version);
    SSL_CTX_set_max_proto_version(ctx_, options_.max_version);
    SSL_CTX_set_alpn_select_cb(ctx_, &TlsHttpServer::SelectAlpn, this);
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
          ::listen(listen_fd_, 256) == 0;
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }

  ~TlsHttpServer() {
    stop_.store(true);
    if (accept_thread_.joinable()) accept_thread_.join();
    for (std::thread& t : threads_) t.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (ctx_ != nullptr) SSL_CTX_free(ctx_);
  }

  TlsHttpServer(const TlsHttpServer&) = delete;
  TlsHttpServer& operator=(const TlsHttpServer&) = delete;

  bool ok() const { return ok_; }
  uint16_t port() const { return port_; }
  uint64_t handshakes() const { return handshakes_.load(); }
  uint64_t resumed() const { return resumed_.load(); }
  uint64_t responses() const { return responses_.load(); }
  uint64_t accepted() const { return accepted_.load(); }

 private:
  static int SelectAlpn(SSL*, const unsigned char** out, unsigned char* outlen,
                        const unsigned char* in, unsigned inlen, void* arg) {
    auto* self = static_cast<TlsHttpServer*>(arg);
    for (const std::string& want : {self->options_.prefer_alpn, std::string("http/1.1")}) {
      if (want.empty()) continue;
      for (unsigned i = 0; i < inlen;) {
        const unsigned n = in[i];
        if (i + 1 + n <= inlen &&
            std::string(reinterpret_cast<const char*>(in + i + 1), n) == want) {
          *out = in + i + 1;
          *outlen = static_cast<unsigned char>(n);
          return SSL_TLSEXT_ERR_OK;
        }
        i += 1 + n;
      }
    }
    return SSL_TLSEXT_ERR_NOACK;
  }

  void AcceptLoop() {
    while (!stop_.load()) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ++accepted_;
      // A read that waits this long returns, so a stop is seen.
      timeval tv{0, 20'000};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      const int one = 1;  // the handshake's flights and the tickets are small writes
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      threads_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  void Serve(int fd) {
    SSL* ssl = SSL_new(ctx_);
    SSL_set_fd(ssl, fd);
    bool open = false;
    while (!stop_.load()) {
      const int rc = SSL_accept(ssl);
      if (rc == 1) {
        open = true;
        break;
      }
      const int err = SSL_get_error(ssl, rc);
      if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) break;
    }
    if (open) {
      ++handshakes_;
      if (SSL_session_reused(ssl) == 1) ++resumed_;
      Answer(ssl);
    }
    ERR_clear_error();
    SSL_free(ssl);
    ::close(fd);
  }

  // Every request head ("\r\n\r\n") gets one response, until the client goes or a stop.
  void Answer(SSL* ssl) {
    static const std::string kResponse = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    std::string pending;
    char buf[16384];
    while (!stop_.load()) {
      const int n = SSL_read(ssl, buf, sizeof(buf));
      if (n <= 0) {
        const int err = SSL_get_error(ssl, n);
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) continue;
        return;  // closed or broken
      }
      pending.append(buf, static_cast<size_t>(n));
      std::string out;
      size_t end;
      while ((end = pending.find("\r\n\r\n")) != std::string::npos) {
        pending.erase(0, end + 4);
        out += kResponse;
        ++responses_;
      }
      if (!out.empty() && SSL_write(ssl, out.data(), static_cast<int>(out.size())) <= 0) return;
    }
  }

  Options options_;
  SSL_CTX* ctx_ = nullptr;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  bool ok_ = false;
  std::atomic<bool> stop_{false};
  std::thread accept_thread_;
  std::vector<std::thread> threads_;  // touched by the accept thread only, until it is joined
  std::atomic<uint64_t> handshakes_{0};
  std::atomic<uint64_t> resumed_{0};
  std::atomic<uint64_t> responses_{0};
  std::atomic<uint64_t> accepted_{0};
};

}  // namespace benchlab
