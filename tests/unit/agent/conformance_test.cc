#include "agent/conformance.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "tests/unit/loadgen/raw_http_server.h"
#include "tests/unit/support/temp_dir.h"
#include "tls/ca.h"

namespace benchlab {
namespace {

ContractCase Hello() {
  ContractCase c;
  c.name = "hello";
  c.expect_status = 200;
  c.expect_body = "hello\n";
  return c;
}

HttpResponse Response(int status, std::string body,
                      std::vector<std::pair<std::string, std::string>> headers = {}) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  return r;
}

TEST(ConformanceTest, MatchingResponseHasNoDiff) {
  EXPECT_EQ(DiffResponse(Hello(), Response(200, "hello\n")), "");
}

TEST(ConformanceTest, StatusDiffComesFirst) {
  EXPECT_EQ(DiffResponse(Hello(), Response(404, "nope")),
            "scenario \"hello\": status: expected 200, got 404");
}

TEST(ConformanceTest, BodyDiffNamesTheFirstDifferingByte) {
  EXPECT_EQ(DiffResponse(Hello(), Response(200, "help\n")),
            "scenario \"hello\": body differs at byte 3: expected \"hello\\n\" (6 bytes), got "
            "\"help\\n\" (5 bytes)");
  EXPECT_EQ(DiffResponse(Hello(), Response(200, "hello\n!")),
            "scenario \"hello\": body differs at byte 6: expected \"hello\\n\" (6 bytes), got "
            "\"hello\\n!\" (7 bytes)");
}

TEST(ConformanceTest, BodyUncheckedWhenNotExpected) {
  ContractCase c = Hello();
  c.negative = true;
  c.name = "missing";
  c.expect_status = 404;
  c.expect_body.reset();
  EXPECT_EQ(DiffResponse(c, Response(404, "anything")), "");
  EXPECT_EQ(DiffResponse(c, Response(200, "hello\n")),
            "negative \"missing\": status: expected 404, got 200");
}

TEST(ConformanceTest, NamedHeadersMatchCaseInsensitivelyByName) {
  ContractCase c = Hello();
  c.expect_headers = {{"content-type", "text/plain"}};
  EXPECT_EQ(DiffResponse(c, Response(200, "hello\n", {{"Content-Type", "text/plain"}})), "");
  EXPECT_EQ(DiffResponse(c, Response(200, "hello\n", {{"Content-Type", "text/html"}})),
            "scenario \"hello\": header content-type: expected \"text/plain\", got \"text/html\"");
  EXPECT_EQ(DiffResponse(c, Response(200, "hello\n")),
            "scenario \"hello\": header content-type: expected \"text/plain\", missing");
}

TEST(ConformanceTest, QuoteBytesEscapesAndCuts) {
  EXPECT_EQ(QuoteBytes(std::string("a\"\\\r\n\t\x01", 7)), "\"a\\\"\\\\\\r\\n\\t\\x01\"");
  EXPECT_EQ(QuoteBytes(std::string(100, 'x'), 4), "\"xxxx...\"");
  // The limit counts escaped characters: an escape that does not fit is left out whole.
  EXPECT_EQ(QuoteBytes(std::string(100, '\x01'), 10), "\"\\x01\\x01...\"");
  EXPECT_EQ(QuoteBytes(std::string(100, '\xff')).size(), 60u + 5u);
}

// Bytes no diff line may hold, and its bound.
void ExpectShortAndPrintable(const std::string& line) {
  EXPECT_LT(line.size(), kMaxDiffLine) << line;
  for (char c : line) {
    const unsigned char u = static_cast<unsigned char>(c);
    ASSERT_TRUE(u >= 0x20 && u < 0x7f) << "raw byte " << int(u) << " in " << line.substr(0, 400);
  }
}

// Every byte value, CR/LF runs and a quote, repeated to `size` bytes.
std::string Hostile(size_t size) {
  std::string out;
  while (out.size() < size) {
    for (int b = 0; b < 256; ++b) out += static_cast<char>(b);
    out += "\r\nHTTP/1.1 200 OK\r\n\"\\";
  }
  out.resize(size);
  return out;
}

TEST(ConformanceTest, DiffsOfAHostileResponseAreShortAndEscaped) {
  ContractCase c = Hello();
  c.name = Hostile(5000);  // names come from the caller, but are quoted the same way
  c.expect_headers = {{"X-Probe", "yes"}};
  const std::string huge = Hostile(1 << 20);
  const std::vector<std::string> diffs = {
      DiffResponse(c, Response(200, "hello\n", {{"X-Probe", huge}})),
      DiffResponse(c, Response(200, "hello\n")),
      DiffResponse(Hello(), Response(200, huge)),
      DiffResponse(Hello(), Response(200, "hello" + huge)),
      DiffResponse(c, Response(999, huge, {{huge, huge}})),
  };
  for (const std::string& d : diffs) {
    ASSERT_FALSE(d.empty());
    ExpectShortAndPrintable(d);
  }
  EXPECT_NE(diffs[0].find("got \"\\x00\\x01"), std::string::npos) << diffs[0];
  EXPECT_NE(diffs[2].find("(1048576 bytes)"), std::string::npos) << diffs[2];
  EXPECT_NE(diffs[3].find("body differs at byte 5"), std::string::npos) << diffs[3];
}

// One case against a server whose every response is `response`.
std::vector<std::string> AgainstServer(const std::string& response, ContractCase c = Hello(),
                                       uint64_t max_body = LoadOptions::kDefaultMaxBody) {
  RawHttpServer server([response](RawHttpServer& s, int fd) {
    s.Send(fd, response);
    return false;
  });
  return CheckContract("127.0.0.1", server.port(), {c}, std::chrono::milliseconds(10000), max_body);
}

TEST(ConformanceTest, CheckContractQuotesHostileResponsesShortAndEscaped) {
  const std::string huge = Hostile(60000);
  std::string obs_text(60000, '\xfe');  // a legal header value, every byte escaped
  ContractCase wants_header = Hello();
  wants_header.expect_headers = {{"X-Probe", "yes"}};
  const std::vector<std::vector<std::string>> runs = {
      AgainstServer("HTTP/1.1 200 OK\r\nX-Bad: " + huge + "\r\n\r\n"),  // a bad header line
      AgainstServer("HTTP/1.1 200 OK\r\nX-Probe: " + obs_text +
                        "\r\nContent-Length: 6\r\n\r\n"
                        "hello\n",
                    wants_header),
      AgainstServer("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + huge),
      AgainstServer(huge),  // not even a status line
      AgainstServer("HTTP/1.1 200 OK\r\n" + std::string(100000, 'h') + "\r\n\r\n"),
  };
  for (const auto& diffs : runs) {
    ASSERT_EQ(diffs.size(), 1u);
    ExpectShortAndPrintable(diffs[0]);
  }
  EXPECT_NE(runs[1][0].find("got \"\\xfe\\xfe"), std::string::npos) << runs[1][0];
  EXPECT_NE(runs[2][0].find("(60000 bytes)"), std::string::npos) << runs[2][0];
}

TEST(ConformanceTest, BodyOverTheLimitIsADifference) {
  const std::vector<std::string> diffs = AgainstServer(
      "HTTP/1.1 200 OK\r\nContent-Length: 2048\r\n\r\n" + std::string(2048, 'x'), Hello(), 1024);
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_NE(diffs[0].find("response body larger than 1 KiB"), std::string::npos) << diffs[0];
  // The default limit is 16 MiB: a 600 MB body is refused at its Content-Length.
  const std::vector<std::string> huge =
      AgainstServer("HTTP/1.1 200 OK\r\nContent-Length: 629145600\r\n\r\n");
  ASSERT_EQ(huge.size(), 1u);
  EXPECT_NE(huge[0].find("response body larger than 16 MiB (Content-Length 629145600)"),
            std::string::npos)
      << huge[0];
}

TEST(ConformanceTest, AMalformedRequestNeverReachesTheTarget) {
  RawHttpServer server([](RawHttpServer& s, int fd) {
    s.Send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n");
    return false;
  });
  ContractCase split = Hello();
  split.request.method = "GET / HTTP/1.1\r\nHost: other\r\n\r\nGET";
  ContractCase header = Hello();
  header.name = "header";
  header.request.headers = {{"X", "1\r\nInjected: yes"}};
  const auto diffs = CheckContract("127.0.0.1", server.port(), {split, header, Hello()},
                                   std::chrono::milliseconds(2000));
  ASSERT_EQ(diffs.size(), 2u);
  EXPECT_EQ(diffs[0].rfind("scenario \"hello\": request: method \"GET / HTTP/1.1\\x0d\\x0a", 0), 0u)
      << diffs[0];
  EXPECT_EQ(diffs[1].rfind("scenario \"header\": request: header \"X\" value", 0), 0u) << diffs[1];
  for (const std::string& d : diffs) ExpectShortAndPrintable(d);
  // Only the well-formed case reached the server.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(server.accepted(), 1u);
  EXPECT_EQ(server.received().find("Injected"), std::string::npos);
  EXPECT_EQ(server.received().rfind("GET / HTTP/1.1\r\n", 0), 0u) << server.received();
}

TEST(ConformanceTest, OverTlsAPlainServerIsADifferenceAtTheDeadline) {
  // A plain HTTP server waits for a request head that a ClientHello never completes: the
  // handshake gives up at the case's timeout and says so, rather than hanging.
  RawHttpServer server([](RawHttpServer& s, int fd) {
    s.Send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n");
    return false;
  });
  TempDir dir;
  auto ca = MakeTargetTls(dir.path(), {});
  ASSERT_TRUE(ca.ok()) << ca.status().ToString();
  const ProbeTls tls{*ca, "localhost"};
  const auto begin = std::chrono::steady_clock::now();
  auto diffs = CheckContract("127.0.0.1", server.port(), {Hello()}, std::chrono::milliseconds(300),
                             LoadOptions::kDefaultMaxBody, &tls);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(2));
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0], "scenario \"hello\": TLS handshake with 127.0.0.1:" +
                          std::to_string(server.port()) + ": no handshake before the deadline");
  // The same server over plain HTTP conforms: the difference is TLS's alone.
  EXPECT_EQ(CheckContract("127.0.0.1", server.port(), {Hello()}, std::chrono::milliseconds(2000)),
            std::vector<std::string>{});

  // A CA that holds no certificate trusts nothing: refused before connecting.
  const ProbeTls unusable{"-----BEGIN CERTIFICATE-----\n", "localhost"};
  auto refused =
      CheckContract("127.0.0.1", server.port(), {Hello()}, std::chrono::milliseconds(300),
                    LoadOptions::kDefaultMaxBody, &unusable);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(refused[0].find("the CA given holds no PEM certificate"), std::string::npos)
      << refused[0];
}

TEST(ConformanceTest, UnreachableTargetIsOneDiffPerCase) {
  // Port 1 on loopback has no listener here; each case reports the connection failure.
  ContractCase missing = Hello();
  missing.name = "missing";
  auto diffs = CheckContract("127.0.0.1", 1, {Hello(), missing}, std::chrono::milliseconds(500));
  ASSERT_EQ(diffs.size(), 2u);
  EXPECT_EQ(diffs[0].rfind("scenario \"hello\": ", 0), 0u) << diffs[0];
  EXPECT_EQ(diffs[1].rfind("scenario \"missing\": ", 0), 0u) << diffs[1];
}

}  // namespace
}  // namespace benchlab
