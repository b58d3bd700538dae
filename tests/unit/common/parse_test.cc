#include "common/parse.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace benchlab {
namespace {

using std::chrono::nanoseconds;
using namespace std::chrono_literals;

TEST(ParseDurationTest, AcceptsEachUnit) {
  struct Case {
    const char* text;
    nanoseconds want;
  } cases[] = {
      {"7ns", 7ns},
      {"250us", 250us},
      {"500ms", 500ms},
      {"2s", 2s},
      {"1m", 60s},
      {"1.5s", 1500ms},
      {"0.25ms", 250us},
      {"0s", 0ns},
      {"10m", 600s},
      {"0.5us", 500ns},
      {"3600s", std::chrono::hours(1)},
      {"2h", std::chrono::hours(2)},
      {"1.5h", std::chrono::minutes(90)},
      {"1.s", 1s},
      {".5s", 500ms},
  };
  for (const Case& c : cases) {
    Result<nanoseconds> d = ParseDuration(c.text);
    ASSERT_TRUE(d.ok()) << c.text << ": " << d.status().ToString();
    EXPECT_EQ(d->count(), c.want.count()) << c.text;
  }
}

TEST(ParseDurationTest, RejectsBadInput) {
  const char* bad[] = {"",    "10",   "s",    "ten", "-1s", "1 s",   " 1s",
                       "1s ", "1S",   "1sec", "1d",  "1.5", "1..5s", "1.5.5s",
                       ".s",  "1e3s", "ms",   "+1s", "1ss", "1,5s",  "99999999999999999999s"};
  for (const char* text : bad) {
    Result<nanoseconds> d = ParseDuration(text);
    ASSERT_FALSE(d.ok()) << "accepted \"" << text << "\"";
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
    // The message shows an example and echoes the input so a person can fix it.
    EXPECT_NE(d.status().message().find("\"2s\""), std::string::npos) << d.status().message();
    EXPECT_NE(d.status().message().find(std::string("got \"") + text + "\""), std::string::npos)
        << d.status().message();
  }
}

TEST(FormatDurationTest, ShortestExactForm) {
  EXPECT_EQ(FormatDuration(0ns), "0s");
  EXPECT_EQ(FormatDuration(2s), "2s");
  EXPECT_EQ(FormatDuration(1500ms), "1.5s");
  EXPECT_EQ(FormatDuration(500ms), "500ms");
  EXPECT_EQ(FormatDuration(250us), "250us");
  EXPECT_EQ(FormatDuration(2500us), "2.5ms");
  EXPECT_EQ(FormatDuration(7ns), "7ns");
  EXPECT_EQ(FormatDuration(1001ns), "1.001us");
  EXPECT_EQ(FormatDuration(60s), "60s");
  EXPECT_EQ(FormatDuration(1000000001ns), "1.000000001s");
  EXPECT_EQ(FormatDuration(-1500ms), "-1.5s");
}

TEST(FormatDurationTest, RoundTripsThroughParse) {
  for (int64_t ns : {int64_t{1}, int64_t{999}, int64_t{1000}, int64_t{123456789},
                     int64_t{2000000000}, int64_t{1500000}, int64_t{86400000000000}}) {
    const std::string text = FormatDuration(nanoseconds(ns));
    Result<nanoseconds> back = ParseDuration(text);
    ASSERT_TRUE(back.ok()) << text;
    EXPECT_EQ(back->count(), ns) << text;
  }
}

TEST(ParseCpuListTest, AcceptsListsAndRanges) {
  struct Case {
    const char* text;
    std::vector<int> want;
  } cases[] = {
      {"0", {0}},
      {"0-3", {0, 1, 2, 3}},
      {"0,2-3", {0, 2, 3}},
      {"3,1,2", {1, 2, 3}},    // sorted
      {"1,1,0-2", {0, 1, 2}},  // without duplicates
      {"5-5", {5}},
      {"1023", {1023}},
  };
  for (const Case& c : cases) {
    Result<std::vector<int>> cpus = ParseCpuList(c.text);
    ASSERT_TRUE(cpus.ok()) << c.text << ": " << cpus.status().ToString();
    EXPECT_EQ(*cpus, c.want) << c.text;
  }
}

TEST(ParseCpuListTest, RejectsBadInput) {
  const char* bad[] = {"",       ",",   "0,",  ",0",    "0,,1",       "a",  "-1",
                       "1-",     "-",   "3-1", "0-1-2", " 0",         "0 ", "1024",
                       "0-5000", "1.5", "+1",  "0x1",   "99999999999"};
  for (const char* text : bad) {
    Result<std::vector<int>> cpus = ParseCpuList(text);
    ASSERT_FALSE(cpus.ok()) << "accepted \"" << text << "\"";
    EXPECT_EQ(cpus.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(cpus.status().message().find("\"0-3\""), std::string::npos);
  }
}

TEST(FormatCpuListTest, CollapsesRuns) {
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_EQ(FormatCpuList({0}), "0");
  EXPECT_EQ(FormatCpuList({0, 1}), "0-1");
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(FormatCpuList({0, 2, 3}), "0,2-3");
  EXPECT_EQ(FormatCpuList({1, 3, 5}), "1,3,5");
  EXPECT_EQ(FormatCpuList({0, 1, 2, 7, 9, 10}), "0-2,7,9-10");
}

TEST(FormatCpuListTest, RoundTripsThroughParse) {
  for (const char* text : {"0", "0-3", "0,2-3", "1,3,5-7,9"}) {
    Result<std::vector<int>> cpus = ParseCpuList(text);
    ASSERT_TRUE(cpus.ok());
    EXPECT_EQ(FormatCpuList(*cpus), text);
  }
}

TEST(ParseHostPortTest, AcceptsHostsAndLiterals) {
  struct Case {
    const char* text;
    const char* host;
    uint16_t port;
  } cases[] = {
      {"127.0.0.1:8080", "127.0.0.1", 8080},
      {"localhost:0", "localhost", 0},
      {"[::1]:9000", "::1", 9000},
      {"example.com:65535", "example.com", 65535},
      {"[fe80::1%eth0]:80", "fe80::1%eth0", 80},
  };
  for (const Case& c : cases) {
    Result<HostPort> hp = ParseHostPort(c.text);
    ASSERT_TRUE(hp.ok()) << c.text << ": " << hp.status().ToString();
    EXPECT_EQ(hp->host, c.host);
    EXPECT_EQ(hp->port, c.port);
    EXPECT_EQ(hp->ToString(), c.text);
  }
}

TEST(ParseHostPortTest, RejectsBadInput) {
  const char* bad[] = {
      "", "localhost", ":80", "host:", "host:65536", "host:-1", "host:8x", "host: 80", "[::1]",
      "[::1]80", "[]:80", "[::1:80", "host:99999999999",
      // Hosts that would not come back from HostPort::ToString as themselves: an unbracketed
      // ':', spaces, a ']' or a name inside brackets, an empty zone.
      "127.0.0:1:7700", "a b:80", "[1.2.3.4]:80", "[::1]x]:80", "[::1%]:80", "[::g]:80",
      "[a]b:80]:0"};
  for (const char* text : bad) {
    Result<HostPort> hp = ParseHostPort(text);
    ASSERT_FALSE(hp.ok()) << "accepted \"" << text << "\"";
    EXPECT_EQ(hp.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(hp.status().message().find("HOST:PORT"), std::string::npos);
  }
}

TEST(HostPortTest, ToStringBracketsIpv6) {
  EXPECT_EQ((HostPort{"::1", 80}).ToString(), "[::1]:80");
  EXPECT_EQ((HostPort{"10.0.0.1", 7700}).ToString(), "10.0.0.1:7700");
}

TEST(TrimSpaceTest, CutsEveryKindOfWhitespaceAtBothEndsOnly) {
  EXPECT_EQ(TrimSpace(" \t 4 5\r\n"), "4 5");
  EXPECT_EQ(TrimSpace("performance\n"), "performance");
  EXPECT_EQ(TrimSpace(" \n\t"), "");
  EXPECT_EQ(TrimSpace(""), "");
}

TEST(ParseNumberTest, TakesTheWholeTextOrNothing) {
  int64_t n = -1;
  EXPECT_TRUE(ParseNumber("123456789012", n));
  EXPECT_EQ(n, 123456789012);
  uint32_t u = 0;
  EXPECT_FALSE(ParseNumber("", u));
  EXPECT_FALSE(ParseNumber("12 ", u));         // trailing characters
  EXPECT_FALSE(ParseNumber("-1", u));          // a sign T cannot hold
  EXPECT_FALSE(ParseNumber("4294967296", u));  // out of range
  double d = 0;
  EXPECT_TRUE(ParseNumber("0.25", d));
  EXPECT_DOUBLE_EQ(d, 0.25);
}

TEST(StrFormatTest, FormatsAnyLength) {
  EXPECT_EQ(StrFormat("%.1f%%", 12.34), "12.3%");
  EXPECT_EQ(StrFormat("%+.4g%%", 5.0), "+5%");
  EXPECT_EQ(StrFormat("%s", std::string(1000, 'x').c_str()), std::string(1000, 'x'));
  EXPECT_EQ(StrFormat("none"), "none");
}

}  // namespace
}  // namespace benchlab
