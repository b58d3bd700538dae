// CheckRequestParts and CheckRequestFraming: nothing a caller gives as method, path, headers or
// body can become a second request line or header; and every sender (GenerateLoad, HttpRoundTrip)
// refuses such a request before a byte reaches a socket.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "loadgen/http_client.h"
#include "loadgen/load.h"
#include "loadgen/request.h"
#include "tests/unit/loadgen/test_http_server.h"

namespace benchlab {
namespace {

using namespace std::chrono_literals;
using Headers = std::vector<std::pair<std::string, std::string>>;

Status Check(std::string_view method, std::string_view path, const Headers& headers = {}) {
  return CheckRequestParts("test", method, path, headers);
}

// The message is one short line naming where and what, with the bad bytes escaped.
void ExpectRefused(const Status& st, const std::string& what) {
  ASSERT_FALSE(st.ok()) << what;
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("test: ", 0), 0u) << st.message();
  EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
  EXPECT_LT(st.message().size(), 300u) << st.message();
  for (char c : st.message()) {
    EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "raw byte " << int(static_cast<unsigned char>(c));
  }
}

TEST(CheckRequestPartsTest, AcceptsAGoodRequest) {
  EXPECT_TRUE(Check("GET", "/").ok());
  EXPECT_TRUE(Check("M-SEARCH", "/a/b?q=1&r=%20x#frag", {{"X-Token", "a\tb c\x80\xff"}}).ok());
  EXPECT_TRUE(Check("GET", "/", {{"Empty", ""}}).ok());
  EXPECT_TRUE(Check(std::string(kMaxMethod, 'A'), "/" + std::string(kMaxPath - 1, 'p'),
                    Headers(kMaxHeaders,
                            {std::string(kMaxHeaderName, 'n'), std::string(kMaxHeaderValue, 'v')}))
                  .ok());
}

TEST(CheckRequestPartsTest, RefusesControlBytesInEveryPart) {
  for (const std::string& bad : {std::string("\r"), std::string("\n"), std::string("\0", 1),
                                 std::string("\r\nGET /admin HTTP/1.1\r\nX: ")}) {
    SCOPED_TRACE(testing::PrintToString(bad));
    ExpectRefused(Check("GE" + bad + "T", "/"), "method \"GE\\x");
    ExpectRefused(Check("GET", "/a" + bad), "path \"/a\\x");
    ExpectRefused(Check("GET", "/", {{"X" + bad, "1"}}), "header name \"X\\x");
    ExpectRefused(Check("GET", "/", {{"X", "1" + bad}}), "value \"1\\x");
  }
  ExpectRefused(Check("GET", "/", {{"X", "a\x7f"}}), "value \"a\\x7f\"");
}

TEST(CheckRequestPartsTest, RefusesSpacesAndNonAsciiWhereTokensOrPathsAreExpected) {
  ExpectRefused(Check("G T", "/"), "method \"G T\"");
  ExpectRefused(Check("", "/"), "method \"\"");
  ExpectRefused(Check("G\xc3\xa9T", "/"), "method \"G\\xc3\\xa9T\"");
  ExpectRefused(Check("GET", "/a b"), "path \"/a b\"");
  ExpectRefused(Check("GET", "/a\tb"), "path \"/a\\x09b\"");
  ExpectRefused(Check("GET", "/caf\xc3\xa9"), "percent-encode");
  ExpectRefused(Check("GET", ""), "path \"\"");
  ExpectRefused(Check("GET", "x/"), "expected '/'");
  ExpectRefused(Check("GET", "/", {{"Bad Name", "1"}}), "header name \"Bad Name\"");
  ExpectRefused(Check("GET", "/", {{"X:Y", "1"}}), "header name \"X:Y\"");
  ExpectRefused(Check("GET", "/", {{"", "1"}}), "header name \"\"");
  ExpectRefused(Check("GET", "/", {{"N\xc3\xa9", "1"}}), "header name \"N\\xc3\\xa9\"");
}

TEST(CheckRequestPartsTest, RefusesOverlongPartsAndTooManyHeaders) {
  ExpectRefused(Check(std::string(kMaxMethod + 1, 'A'), "/"), "1 to 32 bytes");
  ExpectRefused(Check("GET", "/" + std::string(kMaxPath, 'p')), "at most 8192 bytes");
  ExpectRefused(Check("GET", "/", {{std::string(kMaxHeaderName + 1, 'n'), "1"}}), "1 to 256 bytes");
  ExpectRefused(Check("GET", "/", {{"X", std::string(kMaxHeaderValue + 1, 'v')}}),
                "at most 8192 bytes");
  ExpectRefused(Check("GET", "/", Headers(kMaxHeaders + 1, {"X", "1"})),
                "101 headers: at most 100");
}

TEST(CheckRequestFramingTest, TheBodyIsFramedByItsLengthAlone) {
  EXPECT_TRUE(CheckRequestFraming("test", {}, "abc").ok());
  EXPECT_TRUE(CheckRequestFraming("test", {{"content-length", "3"}}, "abc").ok());
  EXPECT_TRUE(CheckRequestFraming("test", {{"Content-Length", "0"}}, "").ok());
  ExpectRefused(CheckRequestFraming("test", {{"Content-Length", "0"}}, "GET /x HTTP/1.1\r\n\r\n"),
                "header Content-Length \"0\": expected the body's length, 19");
  ExpectRefused(CheckRequestFraming("test", {{"Content-Length", "03"}}, "abc"), "\"03\"");
  ExpectRefused(CheckRequestFraming("test", {{"Transfer-Encoding", "chunked"}}, "0\r\n\r\n"),
                "header Transfer-Encoding: not allowed");
}

// Every sender refuses before connecting: the server never sees a connection or a byte.
TEST(RequestCheckSendersTest, GenerateLoadRefusesABadRequestBeforeConnecting) {
  TestHttpServer server(TestHttpServer::Mode::kOk);
  ASSERT_TRUE(server.ok());
  LoadOptions base;
  base.port = server.port();
  base.duration = 100ms;
  struct Case {
    const char* name;
    LoadOptions options;
    const char* want;
  };
  std::vector<Case> cases;
  LoadOptions o = base;
  o.method = "GET / HTTP/1.1\r\nHost: x\r\n\r\nDELETE";
  cases.push_back({"method", o, "request: method \"GET / HTTP/1.1\\x0d\\x0a"});
  o = base;
  o.path = "/\r\n";
  cases.push_back({"path", o, "request: path"});
  o = base;
  o.headers = {{"X", "1\r\nInjected: 1"}};
  cases.push_back({"header", o, "request: header \"X\" value"});
  o = base;
  o.body = "abc";
  o.headers = {{"Content-Length", "1"}};
  cases.push_back({"framing", o, "request: header Content-Length"});
  o = base;
  o.mix = {MixRequest{}, MixRequest{}};
  o.mix[1].method = "P\nOST";
  cases.push_back({"mix method", o, "mix entry 2: method"});
  o = base;
  o.mix = {MixRequest{}};
  o.mix[0].path = "/a b";
  cases.push_back({"mix path", o, "mix entry 1: path"});
  o = base;
  o.mix = {MixRequest{}};
  o.mix[0].headers = {{std::string("X\0", 2), "1"}};
  cases.push_back({"mix header", o, "mix entry 1: header name \"X\\x00\""});
  o = base;
  o.mix = {MixRequest{}};
  o.headers = Headers(kMaxHeaders, {"X", "1"});
  o.mix[0].headers = {{"Y", "2"}};  // the run's headers are added: one too many
  cases.push_back({"mix headers", o, "mix entry 1: 101 headers"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<LoadResult> r = GenerateLoad(c.options);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
  }
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(server.accepted(), 0u);
  EXPECT_EQ(server.bytes_received(), 0u);
}

TEST(RequestCheckSendersTest, HttpRoundTripRefusesABadRequestBeforeConnecting) {
  TestHttpServer server(TestHttpServer::Mode::kOk);
  ASSERT_TRUE(server.ok());
  HttpRequest split;
  split.method = "GET / HTTP/1.1\r\nHost: victim\r\n\r\nGET";
  HttpRequest header;
  header.headers = {{"X", "a\nb"}};
  HttpRequest smuggled;
  smuggled.method = "POST";
  smuggled.headers = {{"Content-Length", "0"}};
  smuggled.body = "GET /admin HTTP/1.1\r\n\r\n";
  for (const HttpRequest& req : {split, header, smuggled}) {
    Result<HttpResponse> r = HttpRoundTrip("127.0.0.1", server.port(), req, 1000ms);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind("request: ", 0), 0u) << r.status().message();
  }
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(server.accepted(), 0u);
  EXPECT_EQ(server.bytes_received(), 0u);
}

}  // namespace
}  // namespace benchlab
