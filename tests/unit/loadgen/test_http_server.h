// TestHttpServer: a tiny HTTP/1.1 server on 127.0.0.1 (port 0) for the load generator's tests.
// One thread polls the listener and every connection, answers each request head according to
// its Mode and counts the responses it fully wrote, so tests can check the client never counts
// a response the server did not send. Construct, use port(), destroy to stop.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace benchlab {

class TestHttpServer {
 public:
  enum class Mode {
    kOk,         // 200 with "hello", keep-alive
    kNotFound,   // 404, keep-alive
    kCloseEach,  // 200 with "Connection: close", then closes
    kSilent,     // reads requests and never answers
  };

  explicit TestHttpServer(Mode mode) : mode_(mode) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ok_ = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
          ::listen(listen_fd_, 128) == 0;
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }

  ~TestHttpServer() {
    stop_.store(true);
    thread_.join();
    ::close(listen_fd_);
  }

  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  bool ok() const { return ok_; }
  uint16_t port() const { return port_; }
  uint64_t responses() const { return responses_.load(); }
  uint64_t requests() const { return requests_.load(); }
  uint64_t accepted() const { return accepted_.load(); }

 private:
  struct Conn {
    int fd;
    std::string in;
  };

  std::string Response() const {
    switch (mode_) {
      case Mode::kOk:
        return "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
      case Mode::kNotFound:
        return "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found";
      case Mode::kCloseEach:
        return "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello";
      case Mode::kSilent:
        break;
    }
    return "";
  }

  // Serves whatever whole requests have arrived; false when the connection should close.
  bool Serve(Conn& c) {
    const std::string response = Response();
    size_t end;
    while ((end = c.in.find("\r\n\r\n")) != std::string::npos) {
      c.in.erase(0, end + 4);
      ++requests_;
      if (mode_ == Mode::kSilent) continue;
      if (::send(c.fd, response.data(), response.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(response.size())) {
        return false;
      }
      ++responses_;
      if (mode_ == Mode::kCloseEach) return false;
    }
    return true;
  }

  void Loop() {
    std::vector<Conn> conns;
    std::vector<pollfd> pfds;
    char buf[4096];
    while (!stop_.load()) {
      pfds.assign(1, pollfd{listen_fd_, POLLIN, 0});
      for (const Conn& c : conns) pfds.push_back(pollfd{c.fd, POLLIN, 0});
      if (::poll(pfds.data(), pfds.size(), 10) <= 0) continue;
      for (size_t i = conns.size(); i-- > 0;) {
        if (pfds[i + 1].revents == 0) continue;
        const ssize_t n = ::recv(conns[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
        bool keep = n > 0 || (n < 0 && errno == EAGAIN);
        if (n > 0) {
          conns[i].in.append(buf, static_cast<size_t>(n));
          keep = Serve(conns[i]);
        }
        if (!keep) {
          ::close(conns[i].fd);
          conns.erase(conns.begin() + static_cast<long>(i));
        }
      }
      if (pfds[0].revents & POLLIN) {
        int fd;
        while ((fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0) {
          ++accepted_;
          conns.push_back(Conn{fd, {}});
        }
      }
    }
    for (const Conn& c : conns) ::close(c.fd);
  }

  const Mode mode_;
  int listen_fd_ = -1;
  bool ok_ = false;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> responses_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> accepted_{0};
  std::thread thread_;
};

}  // namespace benchlab
