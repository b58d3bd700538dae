// The engine allocates nothing per request: a run of thousands of requests allocates a bounded
// number of times (threads, buffers, histograms and their serialised form at the end). The
// target is the bundled hello-server in its own process, so only the generator's allocations
// are counted.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>

#include "loadgen/load.h"
#include "tests/unit/loadgen/alloc_counter.h"
#include "tests/unit/loadgen/engine_param.h"

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

long benchlab::test_alloc::Allocations() { return g_allocations.load(); }

// GCC sees free() of what it inlined as operator new and warns; the pairing here is deliberate.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

extern char** environ;

namespace benchlab {
namespace {

using namespace std::chrono_literals;

uint16_t FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool Accepts(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

class HelloServer {
 public:
  HelloServer() : port_(FreePort()) {
    const std::string exe = std::string(BENCHLAB_BINARY_DIR) + "/bin/hello-server";
    const std::string port = std::to_string(port_);
    char* argv[] = {const_cast<char*>(exe.c_str()), const_cast<char*>("--port"),
                    const_cast<char*>(port.c_str()), nullptr};
    ok_ = ::posix_spawn(&pid_, exe.c_str(), nullptr, nullptr, argv, environ) == 0;
    for (int i = 0; ok_ && i < 200 && !Accepts(port_); ++i) std::this_thread::sleep_for(10ms);
  }
  ~HelloServer() {
    if (!ok_) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  bool ok() const { return ok_ && Accepts(port_); }
  uint16_t port() const { return port_; }

 private:
  uint16_t port_;
  pid_t pid_ = 0;
  bool ok_ = false;
};

class AllocationTest : public EngineParamTest {};
INSTANTIATE_TEST_SUITE_P(Engines, AllocationTest, kEngines, EngineParamName);

TEST_P(AllocationTest, TheEngineAllocatesNothingPerRequest) {
  HelloServer server;
  ASSERT_TRUE(server.ok());
  for (const auto& [depth, rate] : {std::pair{1, 0.0}, std::pair{8, 0.0}, std::pair{1, 20000.0}}) {
    SCOPED_TRACE("depth " + std::to_string(depth) + ", rate " + std::to_string(rate));
    LoadOptions o;
    o.port = server.port();
    o.connections = 4;
    o.threads = 2;
    o.depth = depth;
    o.rate = rate;
    o.duration = 300ms;
    o.engine = GetParam();
    const long before = test_alloc::Allocations();
    Result<LoadResult> r = GenerateLoad(o);
    const long allocations = test_alloc::Allocations() - before;
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_GT(r->requests, 2000u);
    // About a hundred, whatever the number of requests; one per request would be thousands.
    EXPECT_LT(allocations, 400) << r->requests << " requests";
  }
}

}  // namespace
}  // namespace benchlab
