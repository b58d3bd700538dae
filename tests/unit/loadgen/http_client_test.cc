#include "loadgen/http_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/loadgen/test_http_server.h"

namespace benchlab {
namespace {

using namespace std::chrono_literals;
using Mode = TestHttpServer::Mode;

TEST(HttpClientTest, ReturnsStatusHeadersAndBody) {
  TestHttpServer server(Mode::kOk);
  Result<HttpResponse> r = HttpRoundTrip("127.0.0.1", server.port(), HttpRequest{}, 2000ms);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello");
  ASSERT_EQ(r->headers.size(), 1u);
  EXPECT_EQ(r->headers[0].first, "Content-Length");
  EXPECT_EQ(server.requests(), 1u);
}

TEST(HttpClientTest, ResolvesNamesAndSendsBodies) {
  TestHttpServer server(Mode::kNotFound);
  HttpRequest req;
  req.method = "POST";
  req.path = "/submit";
  req.body = "x=1";
  req.headers = {{"X-Probe", "yes"}};
  Result<HttpResponse> r = HttpRoundTrip("localhost", server.port(), req, 2000ms);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body, "not found");
}

TEST(HttpClientTest, ConnectionRefusedNamesTheAddress) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  const uint16_t port = ntohs(addr.sin_port);
  Result<HttpResponse> r = HttpRoundTrip("127.0.0.1", port, HttpRequest{}, 2000ms);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "connect 127.0.0.1:" + std::to_string(port) + ": Connection refused");
}

TEST(HttpClientTest, SilentServerTimesOut) {
  TestHttpServer server(Mode::kSilent);
  Result<HttpResponse> r = HttpRoundTrip("127.0.0.1", server.port(), HttpRequest{}, 200ms);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r.status().message(),
            "timeout after 200ms reading response from 127.0.0.1:" + std::to_string(server.port()));
}

TEST(HttpClientTest, UnknownHostIsAnError) {
  Result<HttpResponse> r = HttpRoundTrip("no-such-host.invalid", 80, HttpRequest{}, 500ms);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("resolve no-such-host.invalid"), std::string::npos);
}

}  // namespace
}  // namespace benchlab
