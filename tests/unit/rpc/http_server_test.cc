// The HTTP front (rpc/http_server.h) over real loopback sockets: binding, the deadlines that a
// trickling client cannot extend, the connection caps, keep-alive limits, what it refuses by
// itself, HTTPS, and that handlers see the client's own address.
#include "rpc/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "tests/unit/support/eventually.h"
#include "tests/unit/support/slow_clients.h"
#include "tls/ca.h"

namespace benchlab {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class HttpServerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (int fd : fds_) ::close(fd);
    if (server_) server_->Stop();
  }

  // Serves GET /ping, GET /peer (the client's address as the handler sees it) and POST /echo
  // with `limits` on a free loopback port.
  void Serve(const HttpLimits& limits = {}) {
    server_ = std::make_unique<HttpServer>(limits);
    Route(*server_);
    auto port = server_->Bind(HostPort{"127.0.0.1", 0});
    ASSERT_TRUE(port.ok()) << port.status().message();
    port_ = *port;
    server_->Serve();
  }
  static void Route(HttpServer& server) {
    server.routes().Get("/ping", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("pong", "text/plain");
    });
    server.routes().Get("/peer", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.remote_addr + ":" + std::to_string(req.remote_port), "text/plain");
    });
    server.routes().Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.body, "text/plain");
    });
  }
  // A connection the test closes at its end, or -1.
  int Connect(const char* from = nullptr) {
    const int fd = TcpConnect(port_, from);
    if (fd >= 0) fds_.push_back(fd);
    return fd;
  }
  std::string Get(const std::string& path, const std::string& extra = "") {
    return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra + "\r\n";
  }
  // A whole GET /ping on a connection of its own from `from`: its answer's status line start.
  std::string Ping(const char* from = nullptr) {
    const int fd = Connect(from);
    if (fd < 0 || !SendAll(fd, Get("/ping", "Connection: close\r\n"))) return "no connection";
    const std::string answer = ReadAnswer(fd);
    return answer.substr(0, answer.find("\r\n"));
  }

  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  std::vector<int> fds_;
};

TEST_F(HttpServerTest, PortZeroBindsAFreePortThatServes) {
  Serve();
  ASSERT_GT(port_, 0);
  httplib::Client client("127.0.0.1", port_);
  auto res = client.Get("/ping");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "pong");
  auto missing = client.Get("/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST_F(HttpServerTest, APortTakenIsUnavailableAndNamesTheAddress) {
  HttpServer first, second;
  auto taken = first.Bind(HostPort{"127.0.0.1", 0});
  ASSERT_TRUE(taken.ok());
  auto again = second.Bind(HostPort{"127.0.0.1", *taken});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(again.status().message(), "cannot listen on 127.0.0.1:" + std::to_string(*taken));
}

TEST_F(HttpServerTest, AnAddressNotOfThisHostIsUnavailable) {
  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never an address of this host.
  HttpServer server;
  auto port = server.Bind(HostPort{"192.0.2.1", 0});
  EXPECT_FALSE(port.ok());
}

TEST_F(HttpServerTest, StopRightAfterServeEndsItsThreads) {
  HttpServer server;
  auto port = server.Bind(HostPort{"127.0.0.1", 0});
  ASSERT_TRUE(port.ok());
  server.Serve();
  server.Stop();  // hangs here if a thread were left serving
  server.Stop();
  port_ = *port;
  EXPECT_EQ(Connect(), -1) << "nothing listens any more";
}

TEST_F(HttpServerTest, HandlersSeeTheClientsOwnAddressAndPort) {
  Serve();
  const int fd = Connect("127.0.0.2");
  ASSERT_GE(fd, 0);
  sockaddr_in local{};
  socklen_t length = sizeof local;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length), 0);
  ASSERT_TRUE(SendAll(fd, Get("/peer")));
  const std::string answer = ReadAnswer(fd);
  EXPECT_EQ(answer.substr(answer.find("\r\n\r\n") + 4),
            "127.0.0.2:" + std::to_string(ntohs(local.sin_port)))
      << answer;
}

// The head's deadline runs from the connection, and no byte restarts it: a client that sends a
// header line every 50 ms is closed as one that sends nothing is.
TEST_F(HttpServerTest, AHeadNotWholeByItsDeadlineIsClosedHoweverItTrickles) {
  HttpLimits limits;
  limits.head_timeout = milliseconds(300);
  Serve(limits);
  const int silent = Connect();
  const int trickling = Connect();
  ASSERT_GE(silent, 0);
  ASSERT_GE(trickling, 0);
  const auto start = Clock::now();
  ASSERT_TRUE(SendAll(trickling, "GET /ping HTTP/1.1\r\n"));
  bool closed = false;
  while (!closed && Clock::now() - start < std::chrono::seconds(5)) {
    SendAll(trickling, "X-Slow: 1\r\n");
    closed = PeerClosedWithin(trickling, milliseconds(50));
  }
  const auto took = Clock::now() - start;
  EXPECT_TRUE(closed) << "a trickling client kept its connection for 5 s";
  EXPECT_GE(took, milliseconds(250));
  EXPECT_LT(took, std::chrono::seconds(3));
  EXPECT_TRUE(PeerClosedWithin(silent, std::chrono::seconds(3)));
  EXPECT_EQ(Ping(), "HTTP/1.1 200 OK") << "others are still answered";
}

TEST_F(HttpServerTest, AnIdleKeptConnectionClosesAfterTheIdleTimeout) {
  HttpLimits limits;
  limits.idle_timeout = milliseconds(200);
  Serve(limits);
  const int fd = Connect();
  ASSERT_TRUE(SendAll(fd, Get("/ping")));
  const std::string first = ReadAnswer(fd);
  ASSERT_EQ(first.rfind("HTTP/1.1 200", 0), 0u) << first;
  EXPECT_EQ(first.find("Connection: close"), std::string::npos) << first;
  ASSERT_TRUE(SendAll(fd, Get("/ping")));  // kept: a second request on it is answered
  EXPECT_EQ(ReadAnswer(fd).rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_TRUE(PeerClosedWithin(fd, std::chrono::seconds(3)));
}

TEST_F(HttpServerTest, AConnectionClosesAfterItsLastRequest) {
  HttpLimits limits;
  limits.max_requests_per_connection = 2;
  Serve(limits);
  const int fd = Connect();
  // Pipelined: both in one write, answered in order.
  ASSERT_TRUE(SendAll(fd, Get("/ping") + Get("/ping") + Get("/ping")));
  const std::string first = ReadAnswer(fd);
  const std::string second = ReadAnswer(fd);
  EXPECT_EQ(first.rfind("HTTP/1.1 200", 0), 0u) << first;
  EXPECT_NE(first.find("Keep-Alive: timeout=5, max=2"), std::string::npos) << first;
  EXPECT_EQ(second.rfind("HTTP/1.1 200", 0), 0u) << second;
  EXPECT_NE(second.find("Connection: close"), std::string::npos) << second;
  EXPECT_TRUE(PeerClosedWithin(fd, std::chrono::seconds(3))) << "the third is not answered";
}

// Caps of 2 connections per address and 3 in all; the test's clients are several loopback
// addresses.
TEST_F(HttpServerTest, ConnectionsBeyondTheCapsAreClosedAtOnce) {
  HttpLimits limits;
  limits.max_connections_per_address = 2;
  limits.max_connections = 3;
  Serve(limits);
  const int a1 = Connect("127.0.0.1");
  const int a2 = Connect("127.0.0.1");
  ASSERT_GE(a1, 0);
  ASSERT_GE(a2, 0);
  const int a3 = Connect("127.0.0.1");
  ASSERT_GE(a3, 0);
  EXPECT_TRUE(PeerClosedWithin(a3, std::chrono::seconds(3))) << "a third from one address";
  const int b1 = Connect("127.0.0.2");
  ASSERT_GE(b1, 0);
  const int c1 = Connect("127.0.0.3");
  ASSERT_GE(c1, 0);
  EXPECT_TRUE(PeerClosedWithin(c1, std::chrono::seconds(3))) << "a fourth in all";
  for (int held : {a1, a2, b1}) {
    EXPECT_FALSE(PeerClosedWithin(held, milliseconds(100))) << "those within the caps stay";
  }
  // Their requests are answered; a connection that ends makes room for another.
  ASSERT_TRUE(SendAll(b1, Get("/ping")));
  EXPECT_EQ(ReadAnswer(b1).rfind("HTTP/1.1 200", 0), 0u);
  ::shutdown(a1, SHUT_RDWR);
  std::string again;
  for (auto start = Clock::now(); Clock::now() - start < std::chrono::seconds(3);) {
    if ((again = Ping("127.0.0.4")) == "HTTP/1.1 200 OK") break;
  }
  EXPECT_EQ(again, "HTTP/1.1 200 OK");
}

TEST_F(HttpServerTest, AHeadOrBodyTooLargeIsRefusedWithItsLimit) {
  HttpLimits limits;
  limits.max_head_bytes = 1024;
  limits.max_body_bytes = 100;
  Serve(limits);
  const int big_head = Connect();
  ASSERT_TRUE(SendAll(big_head, Get("/ping", "X-Big: " + std::string(2000, 'a') + "\r\n")));
  const std::string head_answer = ReadAnswer(big_head);
  EXPECT_EQ(head_answer.rfind("HTTP/1.1 431", 0), 0u) << head_answer;
  EXPECT_NE(head_answer.find("{\"error\":\"the request's head exceeds 1024 bytes\"}"),
            std::string::npos)
      << head_answer;
  EXPECT_TRUE(PeerClosedWithin(big_head, std::chrono::seconds(5)));

  const int big_body = Connect();
  ASSERT_TRUE(
      SendAll(big_body, "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 200\r\n\r\n" +
                            std::string(200, 'b')));
  const std::string body_answer = ReadAnswer(big_body);
  EXPECT_EQ(body_answer.rfind("HTTP/1.1 413", 0), 0u) << body_answer;
  EXPECT_NE(body_answer.find("the request's body exceeds 100 bytes"), std::string::npos);

  const int garbage = Connect();
  ASSERT_TRUE(SendAll(garbage, "\x01\x02 nonsense\r\n\r\n"));
  EXPECT_EQ(ReadAnswer(garbage).rfind("HTTP/1.1 400", 0), 0u);
}

TEST_F(HttpServerTest, ChunkedBodiesAndExpectContinueReachTheHandlerWhole) {
  Serve();
  const int chunked = Connect();
  ASSERT_TRUE(SendAll(chunked,
                      "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"));
  const std::string answer = ReadAnswer(chunked);
  EXPECT_EQ(answer.substr(answer.find("\r\n\r\n") + 4), "hello world") << answer;

  const int expecting = Connect();
  ASSERT_TRUE(SendAll(expecting,
                      "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n"
                      "Expect: 100-continue\r\n\r\n"));
  EXPECT_EQ(ReadAnswer(expecting, milliseconds(2000)), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(SendAll(expecting, "hi"));
  const std::string reply = ReadAnswer(expecting);
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
  EXPECT_EQ(reply.substr(reply.find("\r\n\r\n") + 4), "hi");
}

TEST_F(HttpServerTest, StopLetsAnAnswerOnItsWayFinish) {
  server_ = std::make_unique<HttpServer>();
  std::atomic<bool> entered{false};
  server_->routes().Get("/slow", [&](const httplib::Request&, httplib::Response& res) {
    entered = true;
    std::this_thread::sleep_for(milliseconds(300));
    res.set_content("done", "text/plain");
  });
  auto port = server_->Bind(HostPort{"127.0.0.1", 0});
  ASSERT_TRUE(port.ok());
  port_ = *port;
  server_->Serve();
  const int fd = Connect();
  const int idle = Connect();
  ASSERT_TRUE(SendAll(fd, Get("/slow")));
  ASSERT_TRUE(Eventually([&] { return entered.load(); }));
  server_->Stop();
  const std::string answer = ReadAnswer(fd, milliseconds(100));
  EXPECT_EQ(answer.substr(answer.find("\r\n\r\n") + 4), "done") << answer;
  EXPECT_TRUE(PeerClosedWithin(idle, milliseconds(100))) << "a connection with no request ends";
}

// A TLS handshake is a slow client's too: one that never finishes is closed by its deadline,
// and HTTPS is served meanwhile.
TEST_F(HttpServerTest, HttpsWithAHandshakeDeadline) {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("benchlab_http_front_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string ca = (dir / "ca").string();
  ASSERT_TRUE(InitCa(ca).ok());
  ASSERT_TRUE(IssueCertificate(ca, {"server", Role::kCoordinator, {"127.0.0.1"}, 30}).ok());
  const CaPaths paths(ca);
  HttpLimits limits;
  limits.handshake_timeout = milliseconds(300);
  server_ = std::make_unique<HttpServer>(limits);
  Route(*server_);
  ASSERT_TRUE(server_->UseTls([&](SSL_CTX& ctx) {
    return SSL_CTX_use_certificate_chain_file(&ctx, paths.Cert("server").c_str()) == 1 &&
           SSL_CTX_use_PrivateKey_file(&ctx, paths.Key("server").c_str(), SSL_FILETYPE_PEM) == 1;
  }));
  auto port = server_->Bind(HostPort{"127.0.0.1", 0});
  ASSERT_TRUE(port.ok());
  port_ = *port;
  server_->Serve();

  const int stalled = Connect();
  ASSERT_TRUE(SendAll(stalled, std::string("\x16\x03\x01\x02\x00\x01", 6)));
  const auto start = Clock::now();
  EXPECT_TRUE(PeerClosedWithin(stalled, std::chrono::seconds(3)));
  EXPECT_GE(Clock::now() - start, milliseconds(200));

  httplib::SSLClient client("127.0.0.1", port_);
  client.set_ca_cert_path(paths.cert.c_str());
  client.enable_server_certificate_verification(true);
  auto res = client.Get("/ping");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->body, "pong");
  HttpServer unloaded;
  EXPECT_FALSE(unloaded.UseTls([](SSL_CTX&) { return false; })) << "a setup that fails says so";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace benchlab
