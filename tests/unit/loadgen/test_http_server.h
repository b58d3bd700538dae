// TestHttpServer: a tiny HTTP/1.1 server on 127.0.0.1 (port 0) for the load generator's tests.
// One thread polls the listener and every connection, parses each request (Content-Length
// bodies included), answers according to its Behavior and counts what it received and fully
// wrote, so tests can check the client's counts against the server's. Pipelined requests are
// answered in one write. Construct, use port(), destroy to stop.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
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
    kChunked,    // 200 with "hello" in two chunks
    kGarbage,    // a malformed status line
  };

  struct Behavior {
    Mode mode = Mode::kOk;
    int close_every = 0;    // >0: every Nth response on a connection says close, then it closes
    int batch = 0;          // >0: answer only once this many requests wait on the connection
    uint64_t stall_at = 0;  // >0: before answering the request with this number (1-based),
    int stall_ms = 0;       //     stop serving everything for this long, once
  };

  explicit TestHttpServer(Mode mode) : TestHttpServer(Behavior{.mode = mode}) {}

  explicit TestHttpServer(const Behavior& behavior) : behavior_(behavior) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ok_ = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
          ::listen(listen_fd_, 1024) == 0;
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
  int max_waiting() const { return max_waiting_.load(); }  // most requests seen waiting at once
  uint64_t bytes_received() const { return bytes_received_.load(); }
  // Connections accepted and not yet closed, plus one if another waits in the listen backlog.
  int open() const { return open_.load() + (accepted_pending_.load() ? 1 : 0); }
  std::map<std::string, uint64_t> paths() const {
    std::lock_guard<std::mutex> lock(mu_);
    return paths_;
  }
  // Waits until every connection was closed by the client and its bytes were read.
  bool WaitQuiet(std::chrono::milliseconds limit = std::chrono::milliseconds(2000)) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (open_.load() != 0 || accepted_pending_.load()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

 private:
  struct Conn {
    int fd;
    std::string in;
    int answered = 0;
    // Closing in stages (RFC 9112 9.6): the write side is shut and what the client still sends
    // is read and dropped until it closes or this time (steady clock) passes. An immediate
    // close with requests unread would reset the connection, and a reset can discard the last
    // response in the client's receive buffer or fail its next write, by timing.
    std::chrono::steady_clock::time_point closing_until{};
    bool closing = false;
  };

  // A HEAD request gets the head alone.
  std::string Response(const std::string& path, bool head, bool close) const {
    std::string full = FullResponse(path, close);
    if (head) full.erase(full.find("\r\n\r\n") + 4);
    return full;
  }

  std::string FullResponse(const std::string& path, bool close) const {
    const char* const connection = close ? "Connection: close\r\n" : "";
    if (path == "/404" || behavior_.mode == Mode::kNotFound) {
      return std::string("HTTP/1.1 404 Not Found\r\n") + connection +
             "Content-Length: 9\r\n\r\nnot found";
    }
    switch (behavior_.mode) {
      case Mode::kChunked:
        return std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n") + connection +
               "\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n";
      case Mode::kGarbage:
        return "HTTP/1.1 2xx Bad\r\nContent-Length: 0\r\n\r\n";
      default:
        return std::string("HTTP/1.1 200 OK\r\n") + connection + "Content-Length: 5\r\n\r\nhello";
    }
  }

  // The length of the whole request at the front of `in` (head and body), or 0 if incomplete.
  static size_t RequestLength(const std::string& in, std::string* path) {
    const size_t end = in.find("\r\n\r\n");
    if (end == std::string::npos) return 0;
    const size_t sp1 = in.find(' ');
    const size_t sp2 = in.find(' ', sp1 + 1);
    *path = in.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t body = 0;
    for (size_t pos = in.find("\r\n") + 2; pos < end;) {
      const size_t eol = in.find("\r\n", pos);
      if (strncasecmp(in.c_str() + pos, "content-length:", 15) == 0) {
        body = std::strtoul(in.c_str() + pos + 15, nullptr, 10);
      }
      pos = eol + 2;
    }
    return in.size() >= end + 4 + body ? end + 4 + body : 0;
  }

  // Serves whatever whole requests have arrived; false when the connection should close.
  bool Serve(Conn& c) {
    struct Request {
      size_t length;
      std::string path;
      bool head;
    };
    std::vector<Request> ready;
    std::string path;
    for (size_t pos = 0, n; (n = RequestLength(c.in.substr(pos), &path)) != 0; pos += n) {
      ready.push_back({n, path, c.in.compare(pos, 5, "HEAD ") == 0});
    }
    if (static_cast<int>(ready.size()) > max_waiting_.load()) {
      max_waiting_.store(static_cast<int>(ready.size()));
    }
    if (ready.empty() || static_cast<int>(ready.size()) < behavior_.batch) return true;
    std::string out;
    bool keep = true;
    for (const Request& r : ready) {
      const std::string& p = r.path;
      c.in.erase(0, r.length);
      const uint64_t number = ++requests_;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++paths_[p];
      }
      if (behavior_.stall_at != 0 && number == behavior_.stall_at) {
        std::this_thread::sleep_for(std::chrono::milliseconds(behavior_.stall_ms));
      }
      if (behavior_.mode == Mode::kSilent) continue;
      ++c.answered;
      const bool close = behavior_.mode == Mode::kCloseEach ||
                         (behavior_.close_every > 0 && c.answered % behavior_.close_every == 0);
      out += Response(p, r.head, close);
      ++pending_responses_;
      if (close) {
        keep = false;  // requests pipelined behind this one are never processed
        break;
      }
    }
    if (!out.empty()) {
      // Counted before the bytes can reach the client, so a test that reads the count right
      // after the client saw the responses never finds it behind; withdrawn if the send fails.
      responses_ += pending_responses_;
      const ssize_t sent = ::send(c.fd, out.data(), out.size(), MSG_NOSIGNAL);
      if (sent != static_cast<ssize_t>(out.size())) responses_ -= pending_responses_;
      pending_responses_ = 0;
      if (sent != static_cast<ssize_t>(out.size())) return false;
    }
    return keep;
  }

  void Drop(std::vector<Conn>& conns, size_t i) {
    ::close(conns[i].fd);
    conns.erase(conns.begin() + static_cast<long>(i));
    --open_;
  }

  void Loop() {
    std::vector<Conn> conns;
    std::vector<pollfd> pfds;
    char buf[16384];
    while (!stop_.load()) {
      pfds.assign(1, pollfd{listen_fd_, POLLIN, 0});
      for (const Conn& c : conns) pfds.push_back(pollfd{c.fd, POLLIN, 0});
      if (::poll(pfds.data(), pfds.size(), 5) <= 0) continue;
      for (size_t i = conns.size(); i-- > 0;) {
        if (pfds[i + 1].revents == 0) continue;
        const ssize_t n = ::recv(conns[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
        bool keep = n > 0 || (n < 0 && errno == EAGAIN);
        if (n > 0 && !conns[i].closing) {
          bytes_received_ += static_cast<uint64_t>(n);
          conns[i].in.append(buf, static_cast<size_t>(n));
          if (!Serve(conns[i])) {
            ::shutdown(conns[i].fd, SHUT_WR);
            conns[i].closing = true;
            conns[i].closing_until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
          }
        }
        if (!keep) Drop(conns, i);
      }
      const auto now = std::chrono::steady_clock::now();
      for (size_t i = conns.size(); i-- > 0;) {
        if (conns[i].closing && now >= conns[i].closing_until) Drop(conns, i);
      }
      if (pfds[0].revents & POLLIN) {
        int fd;
        while ((fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0) {
          ++accepted_;
          ++open_;
          conns.push_back(Conn{fd, {}, 0});
        }
      }
      // A connection may still sit in the listen backlog right after the client closed it.
      pollfd lp{listen_fd_, POLLIN, 0};
      accepted_pending_.store(::poll(&lp, 1, 0) > 0);
    }
    for (const Conn& c : conns) ::close(c.fd);
  }

  const Behavior behavior_;
  int listen_fd_ = -1;
  bool ok_ = false;
  uint16_t port_ = 0;
  uint64_t pending_responses_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> responses_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> bytes_received_{0};
  std::atomic<int> open_{0};
  std::atomic<bool> accepted_pending_{false};
  std::atomic<int> max_waiting_{0};
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> paths_;
  std::thread thread_;
};

}  // namespace benchlab
