// hello-server: the small HTTP/1.1 server bundled with benchlab's examples. One thread, epoll,
// keep-alive, no allocation per request. Routes: GET / -> "hello\n", GET /json -> a small JSON
// object, anything else -> 404. It exists so that `make run` has a second real target beside
// nginx without installing anything.
//
//   hello-server --port 8080 [--host 127.0.0.1] [--work-ns N]
//
// The port also comes from $PORT when --port is absent. --work-ns N spends N ns of CPU (a
// busy loop, see SpendCpu) on every request before it is answered: the same server
// made slower per request by a known amount, for checking that a comparison finds it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>

namespace {

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

constexpr std::string_view kHello =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nhello\n";
constexpr std::string_view kJson =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n"
    "{\"message\":\"hello\"}\n";
constexpr std::string_view kNotFound =
    "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nnot found\n";
constexpr std::string_view kBadRequest =
    "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

struct Conn {
  std::string in;
  std::string out;
  bool want_out = false;  // EPOLLOUT armed
};

// Finds the end of a request head; requests with bodies are answered after Content-Length bytes.
// Returns the request's total length, 0 when incomplete, -1 when malformed.
long RequestLength(const std::string& buf, std::string_view* target, bool* close) {
  size_t end = buf.find("\r\n\r\n");
  if (end == std::string::npos) return buf.size() > 65536 ? -1 : 0;
  size_t sp1 = buf.find(' ');
  size_t sp2 = sp1 == std::string::npos ? sp1 : buf.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || sp2 > end) return -1;
  *target = std::string_view(buf).substr(sp1 + 1, sp2 - sp1 - 1);
  size_t body = 0;
  *close = false;
  size_t pos = buf.find("\r\n") + 2;
  while (pos < end) {
    size_t eol = buf.find("\r\n", pos);
    std::string_view line(buf.data() + pos, eol - pos);
    auto starts = [&](std::string_view name) {
      return line.size() >= name.size() && strncasecmp(line.data(), name.data(), name.size()) == 0;
    };
    if (starts("content-length:")) body = std::strtoul(line.data() + 15, nullptr, 10);
    if (starts("connection:") && line.find("close") != std::string_view::npos) *close = true;
    pos = eol + 2;
  }
  return static_cast<long>(end + 4 + body);
}

// Spins for `ns` nanoseconds. Timed by CLOCK_MONOTONIC, which the vDSO reads in about 30 ns:
// the thread's CPU clock is a system call (1.3 us a call on a 2-core KVM guest), so a spin of
// 1 us timed by it cost 4 us a request. The server is one thread on its own pinned CPU, so the
// time it spins is CPU time, unless the hypervisor steals the CPU meanwhile. Between two clock
// reads it does about 150 ns of arithmetic of its own, so a CPU profile finds the
// time in SpendCpu itself rather than in the vDSO's clock; it is never inlined, so the profile
// names it with its callers (docs/profiles.md).
__attribute__((noinline)) void SpendCpu(long ns) {
  if (ns <= 0) return;
  timespec start{}, now{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  static volatile unsigned sink = 0;
  unsigned x = sink;
  do {
    for (unsigned i = 0; i < 128; ++i) x = x * 2654435761u + i;
    sink = x;
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < ns);
}

bool Flush(int fd, Conn& c) {
  while (!c.out.empty()) {
    ssize_t n = write(fd, c.out.data(), c.out.size());
    if (n < 0) return errno == EAGAIN;
    c.out.erase(0, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int port = -1;
  long work_ns = 0;
  std::string host = "127.0.0.1";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--port") == 0)
      port = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--host") == 0)
      host = argv[i + 1];
    else if (std::strcmp(argv[i], "--work-ns") == 0)
      work_ns = std::atol(argv[i + 1]);
  }
  if (work_ns < 0 || work_ns > 1000000000L) {
    std::fprintf(stderr, "hello-server: --work-ns: expected 0 to 1000000000 ns\n");
    return 2;
  }
  if (port < 0 && std::getenv("PORT")) port = std::atoi(std::getenv("PORT"));
  if (port <= 0 || port > 65535) {
    std::fprintf(stderr, "hello-server: need --port N (1-65535) or $PORT\n");
    return 2;
  }
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  signal(SIGPIPE, SIG_IGN);

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1 ||
      bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(lfd, 1024) != 0) {
    std::fprintf(stderr, "hello-server: listen %s:%d: %s\n", host.c_str(), port,
                 std::strerror(errno));
    return 1;
  }
  std::fprintf(stderr, "hello-server: listening on %s:%d\n", host.c_str(), port);

  int ep = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = lfd;
  epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
  std::unordered_map<int, Conn> conns;
  epoll_event events[256];
  char buf[16384];

  while (!g_stop) {
    int n = epoll_wait(ep, events, 256, 200);
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == lfd) {
        while (true) {
          int cfd = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (cfd < 0) break;
          setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          epoll_event cev{};
          cev.events = EPOLLIN | EPOLLRDHUP;
          cev.data.fd = cfd;
          epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &cev);
          conns[cfd];
        }
        continue;
      }
      Conn& c = conns[fd];
      bool close_conn = false;
      while (true) {
        ssize_t r = read(fd, buf, sizeof(buf));
        if (r > 0) {
          c.in.append(buf, static_cast<size_t>(r));
          continue;
        }
        if (r == 0 || errno != EAGAIN) close_conn = true;
        break;
      }
      bool peer_wants_close = false;
      while (!c.in.empty()) {
        std::string_view target;
        long len = RequestLength(c.in, &target, &peer_wants_close);
        if (len == 0) break;
        if (len < 0) {
          c.out.append(kBadRequest);
          peer_wants_close = true;
          c.in.clear();
          break;
        }
        if (static_cast<size_t>(len) > c.in.size()) break;
        bool get = c.in.compare(0, 4, "GET ") == 0;
        SpendCpu(work_ns);
        if (get && target == "/")
          c.out.append(kHello);
        else if (get && target == "/json")
          c.out.append(kJson);
        else
          c.out.append(kNotFound);
        c.in.erase(0, static_cast<size_t>(len));
        if (peer_wants_close) break;
      }
      if (!Flush(fd, c)) close_conn = true;
      if (peer_wants_close && c.out.empty()) close_conn = true;
      if (!close_conn && c.want_out != !c.out.empty()) {
        // Ask for writability only while output is pending.
        c.want_out = !c.out.empty();
        epoll_event cev{};
        cev.events = EPOLLIN | EPOLLRDHUP | (c.out.empty() ? 0u : static_cast<uint32_t>(EPOLLOUT));
        cev.data.fd = fd;
        epoll_ctl(ep, EPOLL_CTL_MOD, fd, &cev);
      }
      if (close_conn) {
        epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
        close(fd);
        conns.erase(fd);
      }
    }
  }
  for (auto& [fd, c] : conns) close(fd);
  close(lfd);
  close(ep);
  return 0;
}
