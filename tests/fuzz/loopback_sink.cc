#include "tests/fuzz/loopback_sink.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

namespace benchlab::fuzz {
namespace {

std::mutex g_mu;
std::string* g_response = nullptr;  // guarded by g_mu; never freed (the sink outlives main)
std::atomic<int> g_port4{0};        // the sink's ports, 0 until it listens
std::atomic<int> g_port6{0};
std::atomic<unsigned long> g_refused{0};

bool IsLoopback4(const in_addr& a) { return (ntohl(a.s_addr) >> 24) == 127; }

bool IsLoopback6(const in6_addr& a) {
  if (IN6_IS_ADDR_LOOPBACK(&a)) return true;
  return IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127;
}

int Listen(int family, int* port) {
  int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof(*a);
  } else {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    len = sizeof(*a);
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(fd, 128) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
    ::close(fd);
    return -1;
  }
  *port = family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port)
                            : ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return fd;
}

// One connection: read until the end of a request head (or 64 KiB, or 200 ms of silence), answer,
// close.
void Serve(int fd) {
  std::string head;
  char buf[4096];
  while (head.size() < 65536 && head.find("\r\n\r\n") == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) break;
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    head.append(buf, static_cast<size_t>(n));
  }
  std::string response;
  {
    std::lock_guard lock(g_mu);
    response = *g_response;
  }
  size_t sent = 0;
  while (sent < response.size()) {
    ssize_t n = ::send(fd, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
}

// Accepts on both listeners; each connection is served on a thread of its own (up to 64 at once,
// then in turn), so that an idle one does not hold up the others.
void Loop(int fd4, int fd6) {
  static std::atomic<int> serving{0};
  pollfd fds[2] = {{fd4, POLLIN, 0}, {fd6, POLLIN, 0}};
  while (true) {
    if (::poll(fds, 2, -1) < 0) continue;
    for (const pollfd& p : fds) {
      if (p.fd < 0 || !(p.revents & POLLIN)) continue;
      int conn = ::accept4(p.fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) continue;
      if (serving.load() >= 64) {
        Serve(conn);
        continue;
      }
      ++serving;
      std::thread([conn] {
        Serve(conn);
        --serving;
      }).detach();
    }
  }
}

using ConnectFn = int (*)(int, const sockaddr*, socklen_t);
using GetaddrinfoFn = int (*)(const char*, const char*, const addrinfo*, addrinfo**);

template <typename Fn>
Fn Next(const char* name) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

int Refuse() {
  g_refused.fetch_add(1);
  errno = ENETUNREACH;
  return -1;
}

}  // namespace

void StartLoopbackSink() {
  static std::once_flag once;
  std::call_once(once, [] {
    {
      std::lock_guard lock(g_mu);
      g_response = new std::string(DefaultSinkResponse());
    }
    int port4 = 0, port6 = 0;
    int fd4 = Listen(AF_INET, &port4);
    int fd6 = Listen(AF_INET6, &port6);  // -1 on a machine without IPv6: ::1 is refused then
    std::thread(Loop, fd4, fd6).detach();
    g_port4 = port4;
    g_port6 = port6;
  });
}

void SetSinkResponse(std::string bytes) {
  std::lock_guard lock(g_mu);
  if (g_response != nullptr) *g_response = std::move(bytes);
}

const std::string& DefaultSinkResponse() {
  static const std::string kResponse =
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
  return kResponse;
}

unsigned long RefusedConnects() { return g_refused.load(); }

}  // namespace benchlab::fuzz

// The interposed libc calls (see the header). Both are exported from the fuzz executable, so
// they also take the place of libc's for the shared libraries it loads (gRPC's included).
extern "C" int connect(int fd, const sockaddr* addr, socklen_t len) {
  using namespace benchlab::fuzz;
  static const ConnectFn real = Next<ConnectFn>("connect");
  if (addr == nullptr || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)) {
    return real(fd, addr, len);
  }
  int type = 0;
  socklen_t type_len = sizeof(type);
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) != 0 || type != SOCK_STREAM) {
    return Refuse();
  }
  if (addr->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
    sockaddr_in to;
    std::memcpy(&to, addr, sizeof(to));
    if (!IsLoopback4(to.sin_addr) || g_port4 == 0) return Refuse();
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(static_cast<uint16_t>(g_port4.load()));
    return real(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
  }
  if (addr->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    sockaddr_in6 to;
    std::memcpy(&to, addr, sizeof(to));
    if (!IsLoopback6(to.sin6_addr)) return Refuse();
    if (IN6_IS_ADDR_V4MAPPED(&to.sin6_addr)) {
      if (g_port4 == 0) return Refuse();
      to.sin6_port = htons(static_cast<uint16_t>(g_port4.load()));
      const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
      std::memcpy(to.sin6_addr.s6_addr, mapped, sizeof(mapped));
    } else {
      if (g_port6 == 0) return Refuse();
      to.sin6_port = htons(static_cast<uint16_t>(g_port6.load()));
    }
    return real(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
  }
  return Refuse();
}

extern "C" int getaddrinfo(const char* node, const char* service, const addrinfo* hints,
                           addrinfo** res) {
  using namespace benchlab::fuzz;
  static const GetaddrinfoFn real = Next<GetaddrinfoFn>("getaddrinfo");
  if (node != nullptr && std::strcmp(node, "localhost") != 0) {
    unsigned char scratch[sizeof(in6_addr)];
    if (::inet_pton(AF_INET, node, scratch) != 1 && ::inet_pton(AF_INET6, node, scratch) != 1) {
      return EAI_NONAME;
    }
  }
  return real(node, service, hints, res);
}
