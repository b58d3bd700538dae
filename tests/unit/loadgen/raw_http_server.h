// RawHttpServer: a loopback (127.0.0.1, port 0) HTTP/1.1 server for hostile-response tests.
// Every connection gets its own thread, which reads request heads (requests with bodies are not
// supported) and answers each with the test's Responder, a function that writes whatever bytes
// it likes to the socket. StreamBody() writes a body of any size from one 64 KiB buffer, so a
// 600 MB response never sits in memory. The server records how many bytes it received (and the
// first kKeptBytes of them) and how many it sent. Destroy to stop: threads and sockets close.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace benchlab {

class RawHttpServer {
 public:
  // Writes one response with Send/StreamBody; false closes the connection after it.
  using Responder = std::function<bool(RawHttpServer& server, int fd)>;

  enum class Framing { kContentLength, kChunked, kClose };

  static constexpr size_t kKeptBytes = 1 << 20;

  explicit RawHttpServer(Responder respond) : respond_(std::move(respond)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
          ::listen(listen_fd_, 64) == 0;
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }

  ~RawHttpServer() {
    stop_.store(true);
    accept_thread_.join();
    for (std::thread& t : conn_threads_) t.join();
    ::close(listen_fd_);
  }

  RawHttpServer(const RawHttpServer&) = delete;
  RawHttpServer& operator=(const RawHttpServer&) = delete;

  bool ok() const { return ok_; }
  uint16_t port() const { return port_; }
  uint64_t accepted() const { return accepted_.load(); }
  uint64_t bytes_received() const { return bytes_received_.load(); }
  uint64_t bytes_sent() const { return bytes_sent_.load(); }
  std::string received() const {
    std::lock_guard<std::mutex> lock(mu_);
    return received_;
  }

  // Writes all of `data`; false when the peer went away (or the server is stopping).
  bool Send(int fd, std::string_view data) {
    while (!data.empty()) {
      if (stop_.load()) return false;
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) continue;
        return false;
      }
      bytes_sent_ += static_cast<uint64_t>(n);
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // A 200 response whose body is `size` bytes of 'x', framed as asked, generated as it is sent.
  // False when the peer went away before the end.
  bool StreamBody(int fd, Framing framing, uint64_t size) {
    static const std::string kPiece(64 * 1024, 'x');
    std::string head = "HTTP/1.1 200 OK\r\n";
    if (framing == Framing::kContentLength) {
      head += "Content-Length: " + std::to_string(size) + "\r\n";
    } else if (framing == Framing::kChunked) {
      head += "Transfer-Encoding: chunked\r\n";
    } else {
      head += "Connection: close\r\n";
    }
    if (!Send(fd, head + "\r\n")) return false;
    for (uint64_t left = size; left > 0;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(left, kPiece.size()));
      if (framing == Framing::kChunked) {
        char line[32];
        std::snprintf(line, sizeof(line), "%zx\r\n", n);
        if (!Send(fd, line)) return false;
      }
      if (!Send(fd, std::string_view(kPiece).substr(0, n))) return false;
      if (framing == Framing::kChunked && !Send(fd, "\r\n")) return false;
      left -= n;
    }
    return framing != Framing::kChunked || Send(fd, "0\r\n\r\n");
  }

 private:
  void AcceptLoop() {
    while (!stop_.load()) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ++accepted_;
      conn_threads_.emplace_back([this, fd] {
        Serve(fd);
        ::close(fd);
      });
    }
  }

  // Reads request heads and answers each; returns when either side closes.
  void Serve(int fd) {
    std::string in;
    char buf[16384];
    while (!stop_.load()) {
      const size_t end = in.find("\r\n\r\n");
      if (end != std::string::npos) {
        in.erase(0, end + 4);
        if (!respond_(*this, fd)) return;
        continue;
      }
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      const ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return;
      if (n < 0) continue;
      bytes_received_ += static_cast<uint64_t>(n);
      in.append(buf, static_cast<size_t>(n));
      std::lock_guard<std::mutex> lock(mu_);
      received_.append(buf, std::min(static_cast<size_t>(n), kKeptBytes - received_.size()));
    }
  }

  const Responder respond_;
  int listen_fd_ = -1;
  bool ok_ = false;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> bytes_received_{0};
  std::atomic<uint64_t> bytes_sent_{0};
  mutable std::mutex mu_;
  std::string received_;
  std::thread accept_thread_;
  std::vector<std::thread> conn_threads_;  // touched by the accept thread only, then joined
};

}  // namespace benchlab
