// hello-server: the small HTTP/1.1 server bundled with benchlab's examples. One thread, epoll,
// keep-alive, no allocation per request. Routes: GET / -> "hello\n", GET /json -> a small JSON
// object, anything else -> 404. It exists so that `make run` has a second real target beside
// nginx without installing anything.
//
//   hello-server --port 8080 [--host 127.0.0.1] [--work-ns N] [--tls-cert FILE --tls-key FILE]
//
// The port also comes from $PORT when --port is absent. --work-ns N spends N ns of CPU (a
// busy loop, see SpendCpu) on every request before it is answered: the same server
// made slower per request by a known amount, for checking that a comparison finds it.
// --tls-cert and --tls-key (PEM files, given together) serve HTTPS instead, TLS 1.2 and up
// with OpenSSL's session tickets: a target with `tls = true` passes {tls_cert} and {tls_key}.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
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
  bool want_out = false;         // EPOLLOUT armed
  SSL* ssl = nullptr;            // HTTPS: the connection's TLS, over its socket
  bool ssl_wants_write = false;  // TLS must write (a handshake message) before it goes on
};

// A TLS server context for --tls-cert and --tls-key; nullptr (after saying why) when they do not
// load or do not match.
SSL_CTX* ServerTls(const char* cert, const char* key) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx != nullptr) {
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) == 1 &&
        SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) == 1 &&
        SSL_CTX_check_private_key(ctx) == 1) {
      return ctx;
    }
  }
  char reason[256] = "";
  ERR_error_string_n(ERR_get_error(), reason, sizeof(reason));
  std::fprintf(stderr, "hello-server: --tls-cert %s --tls-key %s: %s\n", cert, key, reason);
  SSL_CTX_free(ctx);
  return nullptr;
}

// Reads what the connection has: > 0 bytes, 0 nothing more for now, -1 closed or failed.
ssize_t ReadSome(int fd, Conn& c, char* buf, size_t size) {
  if (c.ssl == nullptr) {
    const ssize_t r = read(fd, buf, size);
    if (r > 0) return r;
    return r < 0 && errno == EAGAIN ? 0 : -1;
  }
  const int r = SSL_read(c.ssl, buf, static_cast<int>(size));
  if (r > 0) return r;
  const int err = SSL_get_error(c.ssl, r);
  if (err == SSL_ERROR_WANT_WRITE) c.ssl_wants_write = true;
  ERR_clear_error();
  return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

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
    if (c.ssl != nullptr) {
      const int n = SSL_write(c.ssl, c.out.data(), static_cast<int>(c.out.size()));
      if (n <= 0) {
        const int err = SSL_get_error(c.ssl, n);
        ERR_clear_error();
        if (err == SSL_ERROR_WANT_WRITE) c.ssl_wants_write = true;
        return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE;
      }
      c.out.erase(0, static_cast<size_t>(n));
      continue;
    }
    ssize_t n = write(fd, c.out.data(), c.out.size());
    if (n < 0) return errno == EAGAIN;
    c.out.erase(0, static_cast<size_t>(n));
  }
  return true;
}

void CloseConn(int fd, Conn& c) {
  SSL_free(c.ssl);
  c.ssl = nullptr;
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  int port = -1;
  long work_ns = 0;
  std::string host = "127.0.0.1";
  const char* tls_cert = nullptr;
  const char* tls_key = nullptr;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--port") == 0)
      port = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--host") == 0)
      host = argv[i + 1];
    else if (std::strcmp(argv[i], "--work-ns") == 0)
      work_ns = std::atol(argv[i + 1]);
    else if (std::strcmp(argv[i], "--tls-cert") == 0)
      tls_cert = argv[i + 1];
    else if (std::strcmp(argv[i], "--tls-key") == 0)
      tls_key = argv[i + 1];
  }
  if ((tls_cert == nullptr) != (tls_key == nullptr)) {
    std::fprintf(stderr, "hello-server: --tls-cert and --tls-key go together\n");
    return 2;
  }
  SSL_CTX* tls = nullptr;
  if (tls_cert != nullptr && (tls = ServerTls(tls_cert, tls_key)) == nullptr) return 2;
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
  std::fprintf(stderr, "hello-server: listening on %s:%d%s\n", host.c_str(), port,
               tls != nullptr ? " (HTTPS)" : "");

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
          Conn& fresh = conns[cfd];
          if (tls != nullptr) {
            fresh.ssl = SSL_new(tls);
            if (fresh.ssl == nullptr || SSL_set_fd(fresh.ssl, cfd) != 1) {
              epoll_ctl(ep, EPOLL_CTL_DEL, cfd, nullptr);
              CloseConn(cfd, fresh);
              conns.erase(cfd);
              continue;
            }
            SSL_set_accept_state(fresh.ssl);
          }
        }
        continue;
      }
      Conn& c = conns[fd];
      bool close_conn = false;
      c.ssl_wants_write = false;
      while (true) {
        const ssize_t r = ReadSome(fd, c, buf, sizeof(buf));
        if (r > 0) {
          c.in.append(buf, static_cast<size_t>(r));
          continue;
        }
        if (r < 0) close_conn = true;
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
      const bool pending = !c.out.empty() || c.ssl_wants_write;
      if (!close_conn && c.want_out != pending) {
        // Ask for writability only while output is pending.
        c.want_out = pending;
        epoll_event cev{};
        cev.events = EPOLLIN | EPOLLRDHUP | (pending ? static_cast<uint32_t>(EPOLLOUT) : 0u);
        cev.data.fd = fd;
        epoll_ctl(ep, EPOLL_CTL_MOD, fd, &cev);
      }
      if (close_conn) {
        epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
        CloseConn(fd, c);
        conns.erase(fd);
      }
    }
  }
  for (auto& [fd, c] : conns) CloseConn(fd, c);
  SSL_CTX_free(tls);
  close(lfd);
  close(ep);
  return 0;
}
