#include "rpc/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

namespace benchlab {
namespace {

class HttpServerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (auto* server : {&first_, &second_}) server->stop();
    for (auto* thread : {&first_thread_, &second_thread_}) {
      if (thread->joinable()) thread->join();
    }
  }

  httplib::Server first_, second_;
  std::thread first_thread_, second_thread_;
};

TEST_F(HttpServerTest, PortZeroBindsAFreePortThatServes) {
  first_.Get("/ping", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("pong", "text/plain");
  });
  auto port = BindHttp(first_, HostPort{"127.0.0.1", 0});
  ASSERT_TRUE(port.ok()) << port.status().message();
  ASSERT_GT(*port, 0);
  ServeHttp(first_, first_thread_);
  EXPECT_TRUE(first_.is_running());

  httplib::Client client("127.0.0.1", *port);
  auto res = client.Get("/ping");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "pong");
}

TEST_F(HttpServerTest, APortTakenIsUnavailableAndNamesTheAddress) {
  auto taken = BindHttp(first_, HostPort{"127.0.0.1", 0});
  ASSERT_TRUE(taken.ok());
  auto again = BindHttp(second_, HostPort{"127.0.0.1", *taken});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(again.status().message(), "cannot listen on 127.0.0.1:" + std::to_string(*taken));
}

TEST_F(HttpServerTest, AnAddressNotOfThisHostIsUnavailable) {
  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never an address of this host.
  auto port = BindHttp(first_, HostPort{"192.0.2.1", 0});
  EXPECT_FALSE(port.ok());
}

TEST_F(HttpServerTest, StopRightAfterServeEndsTheThread) {
  ASSERT_TRUE(BindHttp(first_, HostPort{"127.0.0.1", 0}).ok());
  ServeHttp(first_, first_thread_);
  first_.stop();
  first_thread_.join();  // hangs here if stop() came before the server ran
  EXPECT_FALSE(first_.is_running());
}

}  // namespace
}  // namespace benchlab
