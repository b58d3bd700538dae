#include "loadgen/http_response_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/unit/loadgen/alloc_counter.h"

namespace benchlab {
namespace {

using namespace std::string_literals;
using State = HttpResponseParser::State;
using Headers = std::vector<std::pair<std::string, std::string>>;

struct Parsed {
  State state = State::kIncomplete;
  int status = 0;
  bool keep_alive = false;
  uint64_t body_bytes = 0;
  std::string body;
  Headers headers;
  size_t consumed = 0;
  std::string error;

  bool operator==(const Parsed&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Parsed& p) {
  return os << "{state=" << static_cast<int>(p.state) << " status=" << p.status
            << " keep_alive=" << p.keep_alive << " body_bytes=" << p.body_bytes << " body=\""
            << p.body << "\" consumed=" << p.consumed << " error=\"" << p.error << "\"}";
}

Parsed Snapshot(const HttpResponseParser& parser, size_t consumed) {
  return {
      parser.state(),   parser.status(), parser.keep_alive(), parser.body_bytes(), parser.body(),
      parser.headers(), consumed,        parser.error()};
}

// Feeds `input` cut at `cuts` (ascending offsets) until the response completes or fails, then
// signals EOF if asked and the response is still open.
Parsed ParseCut(std::string_view input, const std::vector<size_t>& cuts, bool eof,
                bool capture = true) {
  HttpResponseParser parser(capture);
  size_t pos = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(input.size());
  for (size_t end : ends) {
    while (pos < end && parser.state() == State::kIncomplete) {
      const size_t used = parser.Feed(input.data() + pos, end - pos);
      EXPECT_LE(used, end - pos);
      pos += used;
      if (used == 0) break;
    }
  }
  if (eof) parser.FeedEof();
  return Snapshot(parser, pos);
}

Parsed ParseWhole(std::string_view input, bool eof = false) { return ParseCut(input, {}, eof); }

Parsed ParseByteByByte(std::string_view input, bool eof) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < input.size(); ++i) cuts.push_back(i);
  return ParseCut(input, cuts, eof);
}

// Any way of splitting the bytes gives the same outcome as feeding them at once.
void ExpectSplitInvariant(std::string_view input, bool eof) {
  const Parsed whole = ParseWhole(input, eof);
  EXPECT_EQ(ParseByteByByte(input, eof), whole) << input;
  for (size_t cut = 0; cut <= input.size(); ++cut) {
    ASSERT_EQ(ParseCut(input, {cut}, eof), whole) << "cut at " << cut << " of " << input;
  }
}

const char* const kWellFormed[] = {
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
    "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 404 Not Found\r\nServer: x\r\nContent-Length: 3\r\nX-Empty:\r\n\r\nno!",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    ("HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n"
     "a;name=value;x\r\n0123456789\r\nA \t;q=\"1\"\r\nabcdefghij\r\n0;last\r\n"
     "Expires: never\r\nX-Sum: 1\r\n\r\n"),
    ("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
     "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"),
    "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n",
    "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n",
    "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx",
    "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi",    // bare LF line ends are tolerated
    "HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx",  // no reason phrase
    "HTTP/1.1 599 Whatever Reason  \r\nContent-Length: 5, 5\r\nContent-Length: 5\r\n\r\nfives",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n",
};

TEST(HttpResponseParserTest, ContentLengthResponse) {
  const Parsed p = ParseWhole("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: t\r\n\r\nhello");
  EXPECT_EQ(p.state, State::kComplete);
  EXPECT_EQ(p.status, 200);
  EXPECT_TRUE(p.keep_alive);
  EXPECT_EQ(p.body, "hello");
  EXPECT_EQ(p.body_bytes, 5u);
  EXPECT_EQ(p.headers, (Headers{{"Content-Length", "5"}, {"Server", "t"}}));
}

TEST(HttpResponseParserTest, EveryByteSplitGivesTheSameResult) {
  for (const char* input : kWellFormed) {
    SCOPED_TRACE(input);
    const Parsed whole = ParseWhole(input);
    EXPECT_EQ(whole.state, State::kComplete) << whole;
    EXPECT_EQ(whole.consumed, std::string_view(input).size());
    ExpectSplitInvariant(input, false);
  }
}

TEST(HttpResponseParserTest, ChunkedBodyExtensionsAndTrailers) {
  const Parsed p = ParseWhole(kWellFormed[4]);
  ASSERT_EQ(p.state, State::kComplete) << p;
  EXPECT_EQ(p.body, "0123456789abcdefghij");
  EXPECT_EQ(p.body_bytes, 20u);
  // Trailers are captured after the head's headers.
  EXPECT_EQ(p.headers,
            (Headers{{"transfer-encoding", "Chunked"}, {"Expires", "never"}, {"X-Sum", "1"}}));
}

TEST(HttpResponseParserTest, InterimResponsesAreSkipped) {
  const Parsed p = ParseWhole(kWellFormed[5]);
  ASSERT_EQ(p.state, State::kComplete) << p;
  EXPECT_EQ(p.status, 201);
  EXPECT_EQ(p.body, "ok");
  EXPECT_EQ(p.headers, (Headers{{"Content-Length", "2"}}));  // the interim ones' are dropped
}

TEST(HttpResponseParserTest, NoBodyStatusesIgnoreFraming) {
  for (int i : {6, 7}) {
    const Parsed p = ParseWhole(kWellFormed[i]);
    EXPECT_EQ(p.state, State::kComplete) << p;
    EXPECT_EQ(p.body_bytes, 0u);
    EXPECT_TRUE(p.keep_alive);
  }
}

TEST(HttpResponseParserTest, HeadRequestHasNoBodyAndSurvivesReset) {
  HttpResponseParser parser;
  parser.set_head_request(true);
  const std::string r = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(parser.Feed(r.data(), r.size()), r.size());
    EXPECT_EQ(parser.state(), State::kComplete);
    EXPECT_EQ(parser.body_bytes(), 0u);
    parser.Reset();
  }
}

TEST(HttpResponseParserTest, CloseDelimitedBodyEndsAtEof) {
  const std::string input = "HTTP/1.1 200 OK\r\nServer: x\r\n\r\nuntil the end";
  const Parsed open = ParseWhole(input, /*eof=*/false);
  EXPECT_EQ(open.state, State::kIncomplete);
  EXPECT_EQ(open.consumed, input.size());
  const Parsed p = ParseWhole(input, /*eof=*/true);
  ASSERT_EQ(p.state, State::kComplete) << p;
  EXPECT_EQ(p.body, "until the end");
  EXPECT_FALSE(p.keep_alive);
  ExpectSplitInvariant(input, true);
  // A transfer coding other than chunked last also means "until close".
  const Parsed gz =
      ParseWhole("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nzz", true);
  EXPECT_EQ(gz.state, State::kComplete) << gz;
  EXPECT_EQ(gz.body, "zz");
}

TEST(HttpResponseParserTest, EofBeforeTheEndIsAnError) {
  struct Case {
    const char* input;
    const char* message;
  } cases[] = {
      {"", "before the response began"},
      {"HTTP/1.1 200 OK\r\nContent-Le", "in the response head"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", "3 body bytes, 7 short"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "chunked body"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n", "chunked body"},
  };
  for (const Case& c : cases) {
    const Parsed p = ParseWhole(c.input, /*eof=*/true);
    EXPECT_EQ(p.state, State::kError) << c.input;
    EXPECT_NE(p.error.find(c.message), std::string::npos) << p.error;
  }
}

TEST(HttpResponseParserTest, KeepAliveFlags) {
  struct Case {
    const char* head;
    bool keep_alive;
  } cases[] = {
      {"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true},
      {"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false},
      {"HTTP/1.1 200 OK\r\nCONNECTION: Close\r\nContent-Length: 0\r\n\r\n", false},
      {"HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n", false},
      {"HTTP/1.1 200 OK\r\nConnection: upgrade\r\nContent-Length: 0\r\n\r\n", true},
      {"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false},
      {"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", true},
      {"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nConnection: close\r\n"
       "Content-Length: 0\r\n\r\n",
       false},
      {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", false},
  };
  for (const Case& c : cases) {
    const Parsed p = ParseWhole(c.head);
    ASSERT_EQ(p.state, State::kComplete) << c.head << p;
    EXPECT_EQ(p.keep_alive, c.keep_alive) << c.head;
  }
}

TEST(HttpResponseParserTest, PipelinedResponsesStopAtEachBoundary) {
  const std::string a = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
  const std::string b =
      "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nno\r\n0\r\n\r\n";
  const std::string c =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n";
  const std::string stream = a + b + c;
  for (size_t step : {stream.size(), size_t{1}, size_t{7}}) {
    HttpResponseParser parser(true);
    std::vector<int> statuses;
    std::vector<size_t> boundaries;
    size_t pos = 0;
    while (pos < stream.size()) {
      const size_t len = std::min(step, stream.size() - pos);
      pos += parser.Feed(stream.data() + pos, len);
      ASSERT_NE(parser.state(), State::kError) << parser.error();
      if (parser.state() == State::kComplete) {
        statuses.push_back(parser.status());
        boundaries.push_back(pos);
        EXPECT_EQ(parser.Feed(stream.data() + pos, stream.size() - pos), 0u);  // until Reset
        parser.Reset();
      }
    }
    EXPECT_EQ(statuses, (std::vector<int>{200, 404, 503})) << "step " << step;
    EXPECT_EQ(boundaries, (std::vector<size_t>{a.size(), a.size() + b.size(), stream.size()}));
  }
}

TEST(HttpResponseParserTest, ResetClearsTheLastResponse) {
  HttpResponseParser parser(true);
  const std::string bad = "HTTP/1.1 abc\r\n\r\n";
  parser.Feed(bad.data(), bad.size());
  ASSERT_EQ(parser.state(), State::kError);
  parser.Reset();
  EXPECT_EQ(parser.state(), State::kIncomplete);
  EXPECT_EQ(parser.error(), "");
  const std::string good = "HTTP/1.0 202 Accepted\r\nContent-Length: 1\r\n\r\nk";
  EXPECT_EQ(parser.Feed(good.data(), good.size()), good.size());
  EXPECT_EQ(parser.state(), State::kComplete);
  EXPECT_EQ(parser.status(), 202);
  EXPECT_FALSE(parser.keep_alive());
  EXPECT_EQ(parser.body(), "k");
  EXPECT_EQ(parser.headers().size(), 1u);
}

TEST(HttpResponseParserTest, MalformedInputIsAnErrorWithAMessage) {
  struct Case {
    std::string input;
    const char* message;
  } cases[] = {
      {"HTTP/1.1 2000 OK\r\n\r\n", "bad status line"},
      {"HTTP/1.1 20 OK\r\n\r\n", "bad status line"},
      {"HTTP/1.1  200 OK\r\n\r\n", "bad status line"},
      {"HTTP/1.1 200OK\r\n\r\n", "bad status line"},
      {"HTTP/1.1 099 Low\r\n\r\n", "bad status line"},
      {"HTTP/x.1 200 OK\r\n\r\n", "bad status line"},
      {"HTTP/2.0 200 OK\r\n\r\n", "unsupported HTTP version"},
      {"http/1.1 200 OK\r\n\r\n", "bad status line"},
      {"\r\nHTTP/1.1 200 OK\r\n\r\n", "bad status line"},
      {"GET / HTTP/1.1\r\n\r\n", "bad status line"},
      {"HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n", "bad header line"},
      {"HTTP/1.1 200 OK\r\n: empty name\r\n\r\n", "bad header line"},
      {"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "bad header line"},
      {"HTTP/1.1 200 OK\r\nName : x\r\n\r\n", "bad header line"},
      {"HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n"s, "bad header line"},
      {"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", "bad header line"},
      {"HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n", "obsolete line folding"},
      {"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", "Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n", "Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", "Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", "Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", "conflicting"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n", "conflicting"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
       "both Transfer-Encoding and Content-Length"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", "bad chunk size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", "bad chunk size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 x\r\n", "bad chunk size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\n", "bad chunk size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\n",
       "chunk size too large"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(5000, '0'),
       "chunk-size line exceeds"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n",
       "expected CRLF after chunk data"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbad trailer\r\n\r\n",
       "bad trailer line"},
      {"HTTP/1.1 200 OK\r\nX: " + std::string(70000, 'a'), "response head exceeds 65536"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input.substr(0, 80));
    const Parsed whole = ParseWhole(c.input);
    EXPECT_EQ(whole.state, State::kError) << whole;
    EXPECT_NE(whole.error.find(c.message), std::string::npos) << whole.error;
    if (c.input.size() < 200) {
      EXPECT_EQ(ParseByteByByte(c.input, false), whole);
    }
  }
}

TEST(HttpResponseParserTest, OversizedTrailersAreAnError) {
  std::string input = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n";
  for (int i = 0; i < 2000; ++i) input += "X-Trailer-Field: " + std::string(20, 'v') + "\r\n";
  const Parsed p = ParseWhole(input);
  EXPECT_EQ(p.state, State::kError);
  EXPECT_NE(p.error.find("trailer section exceeds"), std::string::npos) << p.error;
}

// Feeds `input` whole (then EOF) to a capturing parser limited to `max_body` bytes of body.
HttpResponseParser Limited(std::string_view input, uint64_t max_body) {
  HttpResponseParser parser(/*capture=*/true);
  parser.set_max_body(max_body);
  size_t pos = 0;
  while (pos < input.size() && parser.state() == State::kIncomplete) {
    const size_t used = parser.Feed(input.data() + pos, input.size() - pos);
    if (used == 0) break;
    pos += used;
  }
  parser.FeedEof();
  return parser;
}

TEST(HttpResponseParserTest, BodiesUpToTheLimitComplete) {
  for (const char* input : {"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd",
                            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                            "2\r\nab\r\n2\r\ncd\r\n0\r\n\r\n",
                            "HTTP/1.1 200 OK\r\n\r\nabcd"}) {
    const HttpResponseParser p = Limited(input, 4);
    EXPECT_EQ(p.state(), State::kComplete) << input << ": " << p.error();
    EXPECT_EQ(p.body(), "abcd");
    EXPECT_FALSE(p.body_too_large());
  }
}

TEST(HttpResponseParserTest, BodiesOverTheLimitAreTheirOwnError) {
  struct Case {
    std::string input;
    const char* want;
  } cases[] = {
      // Refused at the head: nothing of the body is read.
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde",
       "response body larger than 4 bytes (Content-Length 5)"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n",
       "response body larger than 4 bytes (Content-Length 99999999999)"},
      // Chunked: refused at the chunk that would cross the limit.
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n3\r\ncde\r\n0\r\n\r\n",
       "response body larger than 4 bytes (chunked, a chunk of 3 bytes after 2)"},
      // Delimited by close: refused at the read that crosses it.
      {"HTTP/1.1 200 OK\r\n\r\nabcde", "response body larger than 4 bytes (delimited by close, 5 "},
  };
  for (const Case& c : cases) {
    const HttpResponseParser p = Limited(c.input, 4);
    EXPECT_EQ(p.state(), State::kError) << c.input;
    EXPECT_TRUE(p.body_too_large()) << c.input;
    EXPECT_NE(p.error().find(c.want), std::string::npos) << p.error();
    EXPECT_LE(p.body().size(), 4u);
  }
  // Other errors are not body_too_large, and Reset clears it.
  HttpResponseParser p = Limited("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 4);
  EXPECT_TRUE(p.body_too_large());
  p.Reset();
  EXPECT_FALSE(p.body_too_large());
  const char bad[] = "HTTP/1.1 2x0 OK\r\n\r\n";
  p.Feed(bad, sizeof(bad) - 1);
  EXPECT_EQ(p.state(), State::kError);
  EXPECT_FALSE(p.body_too_large());
}

TEST(HttpResponseParserTest, ACapturedBodyNeverHoldsMoreThanTheLimit) {
  // Fed in 16 KiB reads, as the one-shot client does: the buffer grows by doubling, but not
  // past the limit, so 1 MiB of body never costs 2 MiB of memory.
  constexpr size_t kLimit = 1 << 20;
  HttpResponseParser p(/*capture=*/true);
  p.set_max_body(kLimit);
  const std::string head = "HTTP/1.1 200 OK\r\n\r\n";
  p.Feed(head.data(), head.size());
  const std::string piece(16384, 'x');
  while (p.state() == State::kIncomplete) p.Feed(piece.data(), piece.size());
  EXPECT_TRUE(p.body_too_large());
  EXPECT_EQ(p.body().size(), kLimit);
  EXPECT_LE(p.body().capacity(), kLimit);
}

TEST(HttpResponseParserTest, TheLimitIsKeptAcrossResetAndZeroMeansNone) {
  const std::string twice = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde";
  HttpResponseParser p(/*capture=*/false);
  p.set_max_body(5);
  EXPECT_EQ(p.Feed(twice.data(), twice.size()), twice.size());
  EXPECT_EQ(p.state(), State::kComplete);
  p.Reset();
  p.set_max_body(4);
  p.Feed(twice.data(), twice.size());  // the head is cached now: the limit still applies
  EXPECT_TRUE(p.body_too_large());
  p.Reset();
  p.set_max_body(0);
  EXPECT_EQ(p.Feed(twice.data(), twice.size()), twice.size());
  EXPECT_EQ(p.state(), State::kComplete);
}

TEST(HttpResponseParserTest, ErrorMessagesEscapeUntrustedBytes) {
  const Parsed p = ParseWhole(std::string("HTTP/1.1 2x0 \x01\"\xff OK\r\n\r\n"));
  ASSERT_EQ(p.state, State::kError);
  EXPECT_NE(p.error.find("\\x01\\x22\\xff"), std::string::npos) << p.error;
  // However hostile, a quote in a message stays short: escapes count towards its bound.
  const Parsed binary =
      ParseWhole("HTTP/1.1 200 OK\r\nX: " + std::string(5000, '\x01') + "\r\n\r\n");
  ASSERT_EQ(binary.state, State::kError);
  EXPECT_LT(binary.error.size(), 100u) << binary.error;
}

TEST(HttpResponseParserTest, WithoutCaptureNothingIsKeptAndNothingAllocated) {
  const std::string stream =
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: bench\r\n\r\nhello"
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\n"
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
  HttpResponseParser parser(/*capture=*/false);
  auto run = [&](size_t step) {
    size_t pos = 0, responses = 0;
    while (pos < stream.size()) {
      pos += parser.Feed(stream.data() + pos, std::min(step, stream.size() - pos));
      if (parser.state() == State::kComplete) {
        EXPECT_TRUE(parser.headers().empty());
        EXPECT_TRUE(parser.body().empty());
        ++responses;
        parser.Reset();
      }
      if (parser.state() == State::kError) break;
    }
    return responses;
  };
  ASSERT_EQ(run(stream.size()), 3u);  // warms the reusable buffers
  const long before = test_alloc::Allocations();
  size_t responses = 0;
  for (int i = 0; i < 100; ++i) responses += run(i % 9 + 1) + run(stream.size());
  EXPECT_EQ(responses, 600u);
  EXPECT_EQ(test_alloc::Allocations() - before, 0);
  // The counter itself works: capturing a header does allocate.
  HttpResponseParser capturing(/*capture=*/true);
  const long before_capture = test_alloc::Allocations();
  capturing.Feed(stream.data(), stream.size());
  EXPECT_GT(test_alloc::Allocations() - before_capture, 0);
}

}  // namespace
}  // namespace benchlab
