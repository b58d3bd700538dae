#include "agent/conformance.h"

#include <gtest/gtest.h>

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
