#include "loadgen/http_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

#include "loadgen/http_response_parser.h"
#include "loadgen/request.h"

namespace benchlab {

namespace {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// Our own deadline passing, told apart from a kernel ETIMEDOUT.
constexpr int kDeadlinePassed = -1;

// Waits for `events` on fd until the deadline. 0 when ready, kDeadlinePassed, or an errno.
int WaitFor(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left < 0) return kDeadlinePassed;
    pollfd p{fd, events, 0};
    // Round up so a sub-millisecond remainder still waits rather than spinning.
    const int n = ::poll(&p, 1, static_cast<int>(left) + 1);
    if (n > 0) return 0;
    if (n == 0) {
      if (Clock::now() >= deadline) return kDeadlinePassed;
      continue;
    }
    if (errno != EINTR) return errno;
  }
}

// Connects to one resolved address without blocking past the deadline. 0, kDeadlinePassed or
// an errno.
int ConnectOne(const addrinfo* ai, Clock::time_point deadline, Fd& fd) {
  fd.reset(
      ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
  if (fd.get() < 0) return errno;
  if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  if (int err = WaitFor(fd.get(), POLLOUT, deadline); err != 0) return err;
  int err = 0;
  socklen_t len = sizeof(err);
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

struct SslCtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
struct SslFree {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;
using SslPtr = std::unique_ptr<SSL, SslFree>;

// OpenSSL's queued errors joined with "; " (the queue cleared); `fallback` when it holds none.
std::string ProbeSslErrors(const std::string& fallback) {
  std::string text;
  std::array<char, 256> buf{};
  while (unsigned long code = ERR_get_error()) {
    ERR_error_string_n(code, buf.data(), buf.size());
    if (!text.empty()) text += "; ";
    text += buf.data();
  }
  return text.empty() ? fallback : text;
}

// A client context trusting only the certificates of `ca_pem`, verifying the peer, TLS 1.2 up.
Result<SslCtxPtr> ProbeContext(const ProbeTls& tls) {
  SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return Status::Internal("TLS: " + ProbeSslErrors("cannot make a context"));
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  // A server that closes after its response without close_notify ends the response as a plain
  // one would (the parser judges whether the body is complete).
  SSL_CTX_set_options(ctx.get(), SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  BIO* bio = BIO_new_mem_buf(tls.ca_pem.data(), static_cast<int>(tls.ca_pem.size()));
  int added = 0;
  while (bio != nullptr) {
    X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    if (cert == nullptr) break;
    if (X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx.get()), cert) == 1) ++added;
    X509_free(cert);
  }
  BIO_free(bio);
  ERR_clear_error();
  if (added == 0) {
    return Status::InvalidArgument("TLS: the CA given holds no PEM certificate to trust");
  }
  return ctx;
}

// What the last failed SSL call on `ssl` means, for a message.
std::string ProbeSslFailure(SSL* ssl, int ret) {
  const long verified = SSL_get_verify_result(ssl);
  if (verified != X509_V_OK) {
    ERR_clear_error();
    return std::string("certificate refused: ") + X509_verify_cert_error_string(verified);
  }
  const int err = SSL_get_error(ssl, ret);
  if (err == SSL_ERROR_ZERO_RETURN) return ProbeSslErrors("the server closed the connection");
  if (err == SSL_ERROR_SYSCALL) {
    return ProbeSslErrors(errno != 0 ? std::strerror(errno) : "the server closed the connection");
  }
  return ProbeSslErrors("TLS error " + std::to_string(err));
}

// One connection's bytes, as they are or through TLS once Handshake has succeeded.
class ProbeChannel {
 public:
  explicit ProbeChannel(int fd) : fd_(fd) {}

  // Connects TLS on the connected socket within the deadline; "" when done, else why not.
  std::string Handshake(SSL_CTX* ctx, const ProbeTls& tls, Clock::time_point deadline) {
    ssl_.reset(SSL_new(ctx));
    if (!ssl_ || SSL_set_fd(ssl_.get(), fd_) != 1) return ProbeSslErrors("cannot start TLS");
    unsigned char ip[16];
    const bool is_ip = inet_pton(AF_INET, tls.server_name.c_str(), ip) == 1 ||
                       inet_pton(AF_INET6, tls.server_name.c_str(), ip) == 1;
    if (is_ip) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_.get()), tls.server_name.c_str());
    } else {
      SSL_set_tlsext_host_name(ssl_.get(), tls.server_name.c_str());
      SSL_set1_host(ssl_.get(), tls.server_name.c_str());
    }
    while (true) {
      ERR_clear_error();
      errno = 0;
      const int ret = SSL_connect(ssl_.get());
      if (ret == 1) return "";
      const int err = SSL_get_error(ssl_.get(), ret);
      short events = 0;
      if (err == SSL_ERROR_WANT_READ) events = POLLIN;
      if (err == SSL_ERROR_WANT_WRITE) events = POLLOUT;
      if (events == 0) return ProbeSslFailure(ssl_.get(), ret);
      if (int e = WaitFor(fd_, events, deadline); e != 0) {
        return e == kDeadlinePassed ? "no handshake before the deadline" : std::strerror(e);
      }
    }
  }

  // Moves bytes: n > 0 done, 0 end of stream (Recv), -1 wait for `wait_events`, -2 failed
  // (`error` says why). EINTR is retried.
  ssize_t Send(const char* data, size_t size) { return Move(data, size, true); }
  ssize_t Recv(char* data, size_t size) { return Move(data, size, false); }
  short wait_events = 0;
  std::string error;

 private:
  ssize_t Move(const char* data, size_t size, bool sending) {
    if (!ssl_) {
      while (true) {
        const ssize_t n = sending ? ::send(fd_, data, size, MSG_NOSIGNAL)
                                  : ::recv(fd_, const_cast<char*>(data), size, 0);
        if (n >= 0) return n;
        if (errno == EINTR) continue;
        if (errno == EAGAIN) {
          wait_events = sending ? POLLOUT : POLLIN;
          return -1;
        }
        error = std::strerror(errno);
        return -2;
      }
    }
    ERR_clear_error();
    errno = 0;
    size_t moved = 0;
    const int ret = sending ? SSL_write_ex(ssl_.get(), data, size, &moved)
                            : SSL_read_ex(ssl_.get(), const_cast<char*>(data), size, &moved);
    if (ret == 1) return static_cast<ssize_t>(moved);
    const int err = SSL_get_error(ssl_.get(), ret);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      wait_events = err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
      return -1;
    }
    if (err == SSL_ERROR_ZERO_RETURN && !sending) {
      ERR_clear_error();
      return 0;
    }
    error = ProbeSslFailure(ssl_.get(), ret);
    return -2;
  }

  int fd_;
  SslPtr ssl_;
};

}  // namespace

Result<HttpResponse> HttpRoundTrip(const std::string& host, uint16_t port, const HttpRequest& req,
                                   std::chrono::milliseconds timeout, uint64_t max_body,
                                   const ProbeTls* tls) {
  BENCHLAB_RETURN_IF_ERROR(CheckRequestParts("request", req.method, req.path, req.headers));
  BENCHLAB_RETURN_IF_ERROR(CheckRequestFraming("request", req.headers, req.body));
  SslCtxPtr ctx;
  if (tls != nullptr) {
    auto made = ProbeContext(*tls);
    if (!made.ok()) return made.status();
    ctx = std::move(made).value();
  }
  const std::string where =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  const std::string after = "timeout after " + std::to_string(timeout.count()) + "ms ";
  const Clock::time_point deadline = Clock::now() + timeout;

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addrs = nullptr;
  const std::string port_text = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), port_text.c_str(), &hints, &addrs); rc != 0) {
    return Status::Unavailable("resolve " + host + ": " + ::gai_strerror(rc));
  }
  Fd fd;
  int err = ENOENT;
  for (const addrinfo* ai = addrs; ai != nullptr; ai = ai->ai_next) {
    err = ConnectOne(ai, deadline, fd);
    if (err == 0 || err == kDeadlinePassed) break;
  }
  ::freeaddrinfo(addrs);
  if (err == kDeadlinePassed) return Status::DeadlineExceeded(after + "connecting to " + where);
  if (err != 0) return Status::Unavailable("connect " + where + ": " + std::strerror(err));
  ProbeChannel channel(fd.get());
  if (tls != nullptr) {
    if (std::string failed = channel.Handshake(ctx.get(), *tls, deadline); !failed.empty()) {
      return Status::Unavailable("TLS handshake with " + where + ": " + failed);
    }
  }

  const std::string bytes = BuildRequest({.method = req.method,
                                          .path = req.path,
                                          .host = host,
                                          .port = port,
                                          .headers = &req.headers,
                                          .body = req.body,
                                          .connection_close = true});
  for (size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = channel.Send(bytes.data() + sent, bytes.size() - sent);
    if (n >= 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n == -2) return Status::IoError("send request to " + where + ": " + channel.error);
    if (int e = WaitFor(fd.get(), channel.wait_events, deadline); e != 0) {
      if (e == kDeadlinePassed) {
        return Status::DeadlineExceeded(after + "sending request to " + where);
      }
      return Status::IoError("send request to " + where + ": " + std::strerror(e));
    }
  }

  HttpResponseParser parser(/*capture=*/true);
  parser.set_head_request(req.method == "HEAD");
  parser.set_max_body(max_body);
  char buf[16384];
  while (parser.state() == HttpResponseParser::State::kIncomplete) {
    const ssize_t n = channel.Recv(buf, sizeof(buf));
    if (n > 0) {
      parser.Feed(buf, static_cast<size_t>(n));  // bytes after the response are ignored
    } else if (n == 0) {
      parser.FeedEof();
    } else if (n == -1) {
      if (int e = WaitFor(fd.get(), channel.wait_events, deadline); e != 0) {
        if (e == kDeadlinePassed) {
          return Status::DeadlineExceeded(after + "reading response from " + where);
        }
        return Status::IoError("read response from " + where + ": " + std::strerror(e));
      }
    } else {
      return Status::IoError("read response from " + where + ": " + channel.error);
    }
  }
  if (parser.body_too_large()) {
    return Status::ResourceExhausted("read response from " + where + ": " + parser.error());
  }
  if (parser.state() == HttpResponseParser::State::kError) {
    return Status::IoError("bad response from " + where + ": " + parser.error());
  }
  HttpResponse resp;
  resp.status = parser.status();
  resp.headers = parser.headers();
  resp.body = parser.body();
  return resp;
}

}  // namespace benchlab
