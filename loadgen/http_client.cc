#include "loadgen/http_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

}  // namespace

Result<HttpResponse> HttpRoundTrip(const std::string& host, uint16_t port, const HttpRequest& req,
                                   std::chrono::milliseconds timeout, uint64_t max_body) {
  BENCHLAB_RETURN_IF_ERROR(CheckRequestParts("request", req.method, req.path, req.headers));
  BENCHLAB_RETURN_IF_ERROR(CheckRequestFraming("request", req.headers, req.body));
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

  const std::string bytes = BuildRequest({.method = req.method,
                                          .path = req.path,
                                          .host = host,
                                          .port = port,
                                          .headers = &req.headers,
                                          .body = req.body,
                                          .connection_close = true});
  for (size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = ::send(fd.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN) {
      return Status::IoError("send request to " + where + ": " + std::strerror(errno));
    }
    if (int e = WaitFor(fd.get(), POLLOUT, deadline); e != 0) {
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
    const ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
    if (n > 0) {
      parser.Feed(buf, static_cast<size_t>(n));  // bytes after the response are ignored
    } else if (n == 0) {
      parser.FeedEof();
    } else if (errno == EAGAIN) {
      if (int e = WaitFor(fd.get(), POLLIN, deadline); e != 0) {
        if (e == kDeadlinePassed) {
          return Status::DeadlineExceeded(after + "reading response from " + where);
        }
        return Status::IoError("read response from " + where + ": " + std::strerror(e));
      }
    } else if (errno != EINTR) {
      return Status::IoError("read response from " + where + ": " + std::strerror(errno));
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
