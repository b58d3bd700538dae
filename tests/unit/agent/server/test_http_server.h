// A small HTTP/1.1 server on loopback for the agent's tests: every request (no body) is answered
// "200 hello\n"; it counts the connections it holds open, so a test can see when a load
// generator lets go of them, and keeps the last request head it read. It listens on 127.0.0.1
// and, on the same port where the machine allows, on ::1 (so "localhost" reaches it whichever
// address it resolves to first). One thread per connection; for a handful of them.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace benchlab::test_support {

class CountingHttpServer {
 public:
  using Clock = std::chrono::steady_clock;

  CountingHttpServer() {
    sockaddr_in v4{};
    v4.sin_family = AF_INET;
    v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = Listen(reinterpret_cast<sockaddr*>(&v4), sizeof(v4), AF_INET);
    socklen_t len = sizeof(v4);
    getsockname(fd, reinterpret_cast<sockaddr*>(&v4), &len);
    port_ = ntohs(v4.sin_port);
    sockaddr_in6 v6{};
    v6.sin6_family = AF_INET6;
    v6.sin6_addr = in6addr_loopback;
    v6.sin6_port = htons(port_);
    Listen(reinterpret_cast<sockaddr*>(&v6), sizeof(v6), AF_INET6);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }

  ~CountingHttpServer() {
    stopping_ = true;
    acceptor_.join();
    for (int fd : listeners_) close(fd);
    std::vector<std::thread> workers;
    {
      std::lock_guard lock(mu_);
      workers.swap(workers_);
    }
    for (auto& worker : workers) worker.join();
  }

  uint16_t port() const { return port_; }
  int accepted() {
    std::lock_guard lock(mu_);
    return accepted_;
  }
  std::string last_head() {
    std::lock_guard lock(mu_);
    return last_head_;
  }

  // Waits until `n` connections are open at once (false after `limit`).
  bool WaitOpen(int n, std::chrono::milliseconds limit) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return open_ >= n; });
  }
  // Waits until no connection is open and returns when the last one closed;
  // Clock::time_point::max() when some are still open after `limit`.
  Clock::time_point WaitAllClosed(std::chrono::milliseconds limit) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, limit, [&] { return open_ == 0; })) return Clock::time_point::max();
    return last_close_;
  }

 private:
  int Listen(const sockaddr* addr, socklen_t len, int family) {
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, addr, len) != 0 || listen(fd, 128) != 0) {
      close(fd);
      return -1;
    }
    listeners_.push_back(fd);
    return fd;
  }

  void AcceptLoop() {
    std::vector<pollfd> polled;
    for (int fd : listeners_) polled.push_back({fd, POLLIN, 0});
    while (!stopping_) {
      if (poll(polled.data(), polled.size(), 20) <= 0) continue;
      for (const pollfd& p : polled) {
        if ((p.revents & POLLIN) == 0) continue;
        int fd = accept4(p.fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        std::lock_guard lock(mu_);
        ++accepted_;
        ++open_;
        cv_.notify_all();
        workers_.emplace_back([this, fd] { Serve(fd); });
      }
    }
  }

  void Serve(int fd) {
    static constexpr char kReply[] = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n";
    std::string pending;
    char buf[16384];
    bool failed = false;
    while (!stopping_ && !failed) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 20) == 0) continue;
      ssize_t n = read(fd, buf, sizeof(buf));
      if (n <= 0) break;
      pending.append(buf, static_cast<size_t>(n));
      for (size_t end; (end = pending.find("\r\n\r\n")) != std::string::npos;) {
        {
          std::lock_guard lock(mu_);
          last_head_ = pending.substr(0, end);
        }
        pending.erase(0, end + 4);
        if (write(fd, kReply, sizeof(kReply) - 1) < 0) failed = true;
      }
    }
    close(fd);
    std::lock_guard lock(mu_);
    --open_;
    last_close_ = Clock::now();
    cv_.notify_all();
  }

  std::vector<int> listeners_;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> workers_;
  int accepted_ = 0;
  int open_ = 0;
  Clock::time_point last_close_;
  std::string last_head_;
};

}  // namespace benchlab::test_support
