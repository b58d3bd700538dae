// MakeChannel and SetServerKeepalive across a link that goes silent, as a partition leaves it:
// no FIN, no RST, the bytes just stop. Keepalive must break the call long before its deadline.
#include "coordinator/server/channel.h"

#include <arpa/inet.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "benchlab/v1/agent.grpc.pb.h"
#include "tests/unit/support/eventually.h"

namespace benchlab {
namespace {

using std::chrono::milliseconds;

int ListenLoopback(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd, 8) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// A TCP relay on 127.0.0.1 to `upstream` that can be cut: from then on it neither forwards nor
// closes anything, so neither end hears of the cut from TCP.
class SilentLink {
 public:
  explicit SilentLink(int upstream) : upstream_(upstream) {
    listen_fd_ = ListenLoopback(&port_);
    thread_ = std::thread([this] { Relay(); });
  }
  ~SilentLink() {
    stop_ = true;
    thread_.join();
    for (const auto& [fd, peer] : peers_) close(fd);
    close(listen_fd_);
  }
  int port() const { return port_; }
  void Cut() { cut_ = true; }

 private:
  void Relay() {
    while (!stop_) {
      if (cut_) {
        std::this_thread::sleep_for(milliseconds(20));
        continue;
      }
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
      for (const auto& [fd, peer] : peers_) fds.push_back({fd, POLLIN, 0});
      if (poll(fds.data(), fds.size(), 20) <= 0) continue;
      if (fds[0].revents & POLLIN) Accept();
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents & (POLLIN | POLLHUP)) Forward(fds[i].fd);
      }
    }
  }
  void Accept() {
    const int client = accept(listen_fd_, nullptr, nullptr);
    const int server = ConnectLoopback(upstream_);
    if (client < 0 || server < 0) {
      if (client >= 0) close(client);
      if (server >= 0) close(server);
      return;
    }
    peers_[client] = server;
    peers_[server] = client;
  }
  void Forward(int fd) {
    auto it = peers_.find(fd);
    if (it == peers_.end()) return;
    char buf[16384];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) {
      const int peer = it->second;
      close(fd);
      close(peer);
      peers_.erase(fd);
      peers_.erase(peer);
      return;
    }
    for (ssize_t sent = 0; sent < n;) {
      const ssize_t w = write(it->second, buf + sent, static_cast<size_t>(n - sent));
      if (w <= 0) return;
      sent += w;
    }
  }

  const int upstream_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> cut_{false};
  std::atomic<bool> stop_{false};
  std::map<int, int> peers_;  // of the relay thread only
  std::thread thread_;
};

// An agent whose load runs until the call is cancelled, sending nothing meanwhile.
class EndlessLoad final : public v1::Agent::Service {
 public:
  grpc::Status RunLoad(grpc::ServerContext* ctx, const v1::RunLoadRequest*,
                       grpc::ServerWriter<v1::RunLoadEvent>*) override {
    running = true;
    while (!ctx->IsCancelled()) std::this_thread::sleep_for(milliseconds(20));
    cancelled = true;
    return grpc::Status::CANCELLED;
  }
  std::atomic<bool> running{false};
  std::atomic<bool> cancelled{false};
};

TEST(ChannelTest, ACallAcrossALinkThatWentSilentFailsSoonNotAtItsDeadline) {
  EndlessLoad agent;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  SetServerKeepalive(builder);
  builder.RegisterService(&agent);
  auto server = builder.BuildAndStart();
  ASSERT_TRUE(server != nullptr && port > 0);
  SilentLink link(port);
  auto stub = v1::Agent::NewStub(MakeChannel("127.0.0.1:" + std::to_string(link.port())));

  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  auto stream = stub->RunLoad(&ctx, v1::RunLoadRequest());
  ASSERT_TRUE(Eventually([&] { return agent.running.load(); }));
  // Several keepalive periods with the link up: pings are answered, never refused. The time
  // passing is what is under test.
  std::this_thread::sleep_for(milliseconds(3 * kKeepaliveTimeMs));
  ASSERT_FALSE(agent.cancelled) << "the server refused the client's pings";

  link.Cut();
  const auto cut = std::chrono::steady_clock::now();
  v1::RunLoadEvent event;
  while (stream->Read(&event)) {
  }
  const grpc::Status status = stream->Finish();
  const auto took = std::chrono::steady_clock::now() - cut;
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  // Keepalive sees it within kKeepaliveTimeMs + kKeepaliveTimeoutMs (7 s); a generous margin
  // for a loaded machine, still far from the 60 s deadline.
  EXPECT_LT(took, std::chrono::seconds(20));
  // The server pings too: its handler learns that its client is gone and is cancelled.
  EXPECT_TRUE(Eventually([&] { return agent.cancelled.load(); }, milliseconds(20000)))
      << "the load of a vanished coordinator runs on";
  server->Shutdown(std::chrono::system_clock::now());
}

}  // namespace
}  // namespace benchlab
