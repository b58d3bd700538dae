// Clients that hold an HTTP server's connections without finishing a request, for tests of its
// front (rpc/http_server.h): SlowClients opens `count` connections to a loopback port, sends
// `start` on each and then `trickle` on each every `period` from a thread of its own, so that a
// read timeout restarted by every byte never fires. TcpConnect, SendAll, ReadAnswer and
// PeerClosedWithin are the raw steps. Not thread-safe: one test thread owns a SlowClients.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace benchlab {

// A connected socket to 127.0.0.1:port, or -1; from the loopback address `from` when given
// (all of 127.0.0.0/8 is this host's), so that a test can be several clients.
inline int TcpConnect(uint16_t port, const char* from = nullptr) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (from != nullptr) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &local.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends all of `bytes`, never raising SIGPIPE; false when the peer is gone.
inline bool SendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// True when the peer closes `fd` (end of stream or reset) within `timeout`; whatever it sends
// before that is read and dropped.
inline bool PeerClosedWithin(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return true;
  }
}

// One HTTP answer read from `fd`: its head and a body of its Content-Length; what came when the
// peer closed or `timeout` passed first.
inline std::string ReadAnswer(int fd, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string answer;
  char byte;
  auto complete = [&] {
    const size_t head = answer.find("\r\n\r\n");
    if (head == std::string::npos) return false;
    const size_t length = answer.find("Content-Length: ");
    if (length == std::string::npos || length > head) return true;
    return answer.size() >= head + 4 + std::stoul(answer.substr(length + 16));
  };
  while (!complete()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    if (::recv(fd, &byte, 1, 0) != 1) break;  // byte by byte: never past this answer
    answer += byte;
  }
  return answer;
}

class SlowClients {
 public:
  SlowClients(uint16_t port, int count, std::string start, std::string trickle,
              std::chrono::milliseconds period = std::chrono::milliseconds(100))
      : trickle_(std::move(trickle)), period_(period) {
    for (int i = 0; i < count; ++i) {
      const int fd = TcpConnect(port);
      if (fd < 0) continue;
      SendAll(fd, start);
      fds_.push_back(fd);
    }
    thread_ = std::thread([this] { Run(); });
  }
  ~SlowClients() {
    stop_ = true;
    thread_.join();
    for (int fd : fds_) ::close(fd);
  }
  SlowClients(const SlowClients&) = delete;
  SlowClients& operator=(const SlowClients&) = delete;

  // Connections made.
  size_t connected() const { return fds_.size(); }
  // Connections still open at the end of the last round (a send that failed closed it).
  size_t open() const { return open_; }
  // Waits until every connection has been sent `rounds` trickles (or failed).
  void WaitRounds(int rounds) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return rounds_ >= rounds; });
  }

 private:
  void Run() {
    std::vector<bool> alive(fds_.size(), true);
    while (!stop_) {
      size_t open = 0;
      for (size_t i = 0; i < fds_.size(); ++i) {
        if (alive[i]) alive[i] = SendAll(fds_[i], trickle_);
        open += alive[i] ? 1 : 0;
      }
      open_ = open;
      {
        std::lock_guard lock(mu_);
        ++rounds_;
      }
      cv_.notify_all();
      std::this_thread::sleep_for(period_);
    }
  }

  const std::string trickle_;
  const std::chrono::milliseconds period_;
  std::vector<int> fds_;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> open_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  int rounds_ = 0;
  std::thread thread_;
};

}  // namespace benchlab
