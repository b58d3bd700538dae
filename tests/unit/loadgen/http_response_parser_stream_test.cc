// HttpResponseParser on the load path (no capture): streams of pipelined responses, chunked and
// not, cut at every byte boundary and every pair of boundaries; the cache of repeated heads;
// and the streaming comparison with an expected body.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loadgen/http_response_parser.h"

namespace benchlab {
namespace {

using State = HttpResponseParser::State;

struct Outcome {
  State state;
  int status;
  bool keep_alive;
  uint64_t body_bytes;
  bool body_matches;
  size_t end;  // stream offset where the response ended
  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "{state=" << static_cast<int>(o.state) << " status=" << o.status
            << " ka=" << o.keep_alive << " body=" << o.body_bytes << " match=" << o.body_matches
            << " end=" << o.end << "}";
}

// Parses `stream` fed in pieces ending at `cuts` (ascending), as the worker does: one parser,
// Reset after each response, the expectation and HEAD flag set per response.
std::vector<Outcome> ParseStream(const std::string& stream, const std::vector<size_t>& cuts,
                                 const std::string* expected = nullptr,
                                 const std::vector<bool>& head = {}) {
  HttpResponseParser parser(/*capture=*/false);
  parser.set_expected_body(expected);
  std::vector<Outcome> out;
  auto prepare = [&] { parser.set_head_request(out.size() < head.size() && head[out.size()]); };
  prepare();
  size_t pos = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(stream.size());
  for (size_t end : ends) {
    while (pos < end) {
      pos += parser.Feed(stream.data() + pos, end - pos);
      if (parser.state() == State::kIncomplete) continue;
      out.push_back({parser.state(), parser.status(), parser.keep_alive(), parser.body_bytes(),
                     parser.body_matches(), pos});
      if (parser.state() == State::kError) return out;
      parser.Reset();
      prepare();
    }
  }
  // EOF ends a response in progress (a close-delimited body); between responses it is silence.
  if (!out.empty() && out.back().end == pos) return out;
  parser.FeedEof();
  if (parser.state() != State::kIncomplete) {
    out.push_back({parser.state(), parser.status(), parser.keep_alive(), parser.body_bytes(),
                   parser.body_matches(), pos});
  }
  return out;
}

// Every single cut and every pair of cuts gives the outcome of feeding the stream whole.
void ExpectEverySplitAgrees(const std::string& stream, const std::string* expected = nullptr,
                            const std::vector<bool>& head = {}) {
  const std::vector<Outcome> whole = ParseStream(stream, {}, expected, head);
  for (size_t i = 1; i < stream.size(); ++i) {
    ASSERT_EQ(ParseStream(stream, {i}, expected, head), whole) << "cut at " << i;
    for (size_t j = i + 1; j < stream.size(); j += 3) {
      ASSERT_EQ(ParseStream(stream, {i, j}, expected, head), whole) << "cuts " << i << "," << j;
    }
  }
}

const std::string kChunked =
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2;x=1\r\nlo\r\n0\r\n\r\n";
const std::string kLength = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

TEST(ParserStreamTest, PipelinedChunkedResponsesSplitAtEveryBoundary) {
  const std::string stream = kChunked + kChunked + kLength + kChunked;
  const std::vector<Outcome> whole = ParseStream(stream, {});
  ASSERT_EQ(whole.size(), 4u);
  size_t end = 0;
  for (size_t i = 0; i < 4; ++i) {
    end += i == 2 ? kLength.size() : kChunked.size();
    EXPECT_EQ(whole[i], (Outcome{State::kComplete, 200, true, 5, true, end})) << i;
  }
  ExpectEverySplitAgrees(stream);
}

TEST(ParserStreamTest, ChunkedWithTrailersAndSizesInHexSplitAtEveryBoundary) {
  const std::string body(26, 'z');
  const std::string stream = "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n1A\r\n" +
                             body + "\r\n0\r\nX-Trailer: 1\r\n\r\n" + kChunked;
  const std::vector<Outcome> whole = ParseStream(stream, {});
  ASSERT_EQ(whole.size(), 2u);
  EXPECT_EQ(whole[0].status, 201);
  EXPECT_EQ(whole[0].body_bytes, 26u);
  ExpectEverySplitAgrees(stream);
}

TEST(ParserStreamTest, ARepeatedHeadIsRecognisedOnlyWhenIdentical) {
  // Each head differs from the one before in one byte or in its end; the cache must not match.
  const std::string stream =
      kLength + kLength + "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n" + std::string(50, 'x') +
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello" +
      "HTTP/1.1 404 OK\r\nContent-Length: 5\r\n\r\nhello" + kLength;
  const std::vector<Outcome> out = ParseStream(stream, {});
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0].body_bytes, 5u);
  EXPECT_EQ(out[1].body_bytes, 5u);
  EXPECT_EQ(out[2].body_bytes, 50u);
  EXPECT_EQ(out[3].body_bytes, 5u);
  EXPECT_FALSE(out[3].keep_alive);
  EXPECT_EQ(out[4].status, 404);
  EXPECT_TRUE(out[5].keep_alive);
  EXPECT_EQ(out[5].status, 200);
  ExpectEverySplitAgrees(stream);
}

TEST(ParserStreamTest, TheCachedHeadHonoursTheHeadRequestFlag) {
  // The same head answers a GET (with a body) and then a HEAD (without one).
  const std::string stream = kLength + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n" + kLength;
  const std::vector<bool> head = {false, true, false};
  const std::vector<Outcome> out = ParseStream(stream, {}, nullptr, head);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].body_bytes, 5u);
  EXPECT_EQ(out[1].body_bytes, 0u);
  EXPECT_EQ(out[1].end, kLength.size() * 2 - 5);
  EXPECT_EQ(out[2].body_bytes, 5u);
  ExpectEverySplitAgrees(stream, nullptr, head);
}

TEST(ParserStreamTest, ExpectedBodyIsComparedAsItStreams) {
  const std::string hello = "hello";
  const std::string close_delimited = "HTTP/1.1 200 OK\r\n\r\nhello";
  for (const std::string& stream : {kChunked, kLength, kChunked + kLength, close_delimited}) {
    SCOPED_TRACE(stream);
    for (const Outcome& o : ParseStream(stream, {}, &hello)) EXPECT_TRUE(o.body_matches);
    ExpectEverySplitAgrees(stream, &hello);
  }
  for (const std::string want : {"hellO", "hell", "hello!", "", "Hello"}) {
    SCOPED_TRACE(want);
    for (const std::string& stream : {kChunked, kLength, close_delimited}) {
      const std::vector<Outcome> out = ParseStream(stream, {}, &want);
      ASSERT_EQ(out.size(), 1u);
      EXPECT_FALSE(out[0].body_matches) << stream;
      ExpectEverySplitAgrees(stream, &want);
    }
  }
  // Without an expectation every body matches; an empty body matches an empty expectation.
  EXPECT_TRUE(ParseStream(kLength, {})[0].body_matches);
  const std::string empty;
  EXPECT_TRUE(ParseStream("HTTP/1.1 204 No Content\r\n\r\n", {}, &empty)[0].body_matches);
}

}  // namespace
}  // namespace benchlab
