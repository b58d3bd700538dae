// httplib's routing on a request in memory (rpc/http_routes.h), without a socket.
#include "rpc/http_routes.h"

#include <gtest/gtest.h>

#include <string>

namespace benchlab {
namespace {

class HttpRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    routes_.Get("/peer", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.remote_addr + ":" + std::to_string(req.remote_port) + " to " +
                          req.local_addr + ":" + std::to_string(req.local_port),
                      "text/plain");
    });
    routes_.Get("/throw", [](const httplib::Request&, httplib::Response&) {
      throw std::runtime_error("boom");
    });
    routes_.SetAnswerHeaders({{"X-Frame-Options", "DENY"}});
  }
  static std::string Body(const std::string& answer) {
    return answer.substr(answer.find("\r\n\r\n") + 4);
  }

  HttpRoutes routes_;
  const HttpRoutes::Peer peer_{"10.1.2.3", 40000, "10.1.2.4", 8080};
};

TEST_F(HttpRoutesTest, AnswersWithThePeerAndTheAnswerHeaders) {
  auto answer = routes_.Handle("GET /peer HTTP/1.1\r\nHost: x\r\n\r\n", peer_, false);
  EXPECT_EQ(answer.bytes.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer.bytes;
  EXPECT_EQ(Body(answer.bytes), "10.1.2.3:40000 to 10.1.2.4:8080");
  EXPECT_NE(answer.bytes.find("\r\nX-Frame-Options: DENY\r\n"), std::string::npos);
  EXPECT_TRUE(answer.keep_alive);
}

TEST_F(HttpRoutesTest, SaysWhenTheConnectionCloses) {
  EXPECT_FALSE(routes_.Handle("GET /peer HTTP/1.1\r\nHost: x\r\n\r\n", peer_, true).keep_alive);
  auto asked =
      routes_.Handle("GET /peer HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", peer_, false);
  EXPECT_FALSE(asked.keep_alive);
  EXPECT_NE(asked.bytes.find("\r\nConnection: close\r\n"), std::string::npos);
  EXPECT_FALSE(routes_.Handle("GET /peer HTTP/1.0\r\n\r\n", peer_, false).keep_alive);
  EXPECT_FALSE(routes_.Handle("", peer_, false).keep_alive) << "nothing to answer";
}

TEST_F(HttpRoutesTest, AnExceptionIsA500AndARefusalCarriesTheAnswerHeaders) {
  auto thrown = routes_.Handle("GET /throw HTTP/1.1\r\nHost: x\r\n\r\n", peer_, false);
  EXPECT_EQ(thrown.bytes.rfind("HTTP/1.1 500", 0), 0u) << thrown.bytes;
  const std::string refusal = routes_.Refusal(431, "the request's head exceeds 10 bytes");
  EXPECT_EQ(refusal.rfind("HTTP/1.1 431 Request Header Fields Too Large\r\n", 0), 0u);
  EXPECT_NE(refusal.find("\r\nX-Frame-Options: DENY\r\n"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("\r\nConnection: close\r\n"), std::string::npos) << refusal;
  EXPECT_EQ(Body(refusal), R"({"error":"the request's head exceeds 10 bytes"})");
  EXPECT_NE(refusal.find("Content-Length: " + std::to_string(Body(refusal).size()) + "\r\n"),
            std::string::npos);
}

}  // namespace
}  // namespace benchlab
