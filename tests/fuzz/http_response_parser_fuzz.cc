// libFuzzer target for HttpResponseParser: parses the input as a stream of pipelined responses
// twice, once fed whole and once cut at pseudo-random points, and traps if the two disagree (the
// parser must not depend on how bytes arrive: neither its in-place head path nor its cache of
// repeated heads may change an outcome) or if it ever consumes more than it was given. Control
// bytes choose capture, HEAD requests (alternating per response if asked), EOF, an expected
// body, and the largest piece.
// Memory errors and UB are the sanitizers' to catch. Built and run as every fuzz target is
// (docs/fuzzing.md: `make fuzz`), with -max_len=1048576 so that inputs reach body handling and
// with tests/fuzz/http.dict; its seeds (tests/fuzz/corpus/http_response_parser/) are responses
// of nginx, Node.js and Python's http.server captured on loopback, and hand-made streams.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "loadgen/http_response_parser.h"

namespace {

using benchlab::HttpResponseParser;

struct Outcome {
  HttpResponseParser::State state;
  int status;
  bool keep_alive;
  uint64_t body_bytes;
  bool body_matches;
  size_t end;  // stream offset where this response ended; 0 for an error (see record)
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string error;
  bool operator==(const Outcome&) const = default;
};

// Feeds the stream in pieces whose sizes come from next_len, collecting each response's outcome
// until the stream ends (then EOF) or the parser fails.
template <typename NextLen>
std::vector<Outcome> ParseStream(const uint8_t* data, size_t size, bool capture, bool head,
                                 bool alternate, const std::string* expected, bool eof,
                                 NextLen next_len) {
  HttpResponseParser parser(capture);
  parser.set_head_request(head);
  parser.set_expected_body(expected);
  std::vector<Outcome> out;
  // Where an error is noticed may depend on the pieces (a head too long is found whole or line
  // by line) and does not matter: the caller drops the connection. That it is an error, and
  // which, must not depend on them.
  auto record = [&](size_t end) {
    const bool failed = parser.state() == HttpResponseParser::State::kError;
    out.push_back({parser.state(), parser.status(), parser.keep_alive(), parser.body_bytes(),
                   parser.body_matches(), failed ? 0 : end, parser.body(), parser.headers(),
                   parser.error()});
  };
  size_t pos = 0;
  while (pos < size) {
    size_t len = next_len();
    if (len == 0 || len > size - pos) len = size - pos;
    const size_t used = parser.Feed(reinterpret_cast<const char*>(data) + pos, len);
    if (used > len) __builtin_trap();
    pos += used;
    if (parser.state() == HttpResponseParser::State::kError) {
      record(pos);
      return out;
    }
    if (parser.state() == HttpResponseParser::State::kComplete) {
      record(pos);
      if (out.size() > 10000) return out;
      parser.Reset();
      if (alternate) parser.set_head_request(head ^ (out.size() % 2 == 1));
    } else if (used != len) {
      __builtin_trap();  // an incomplete parser must take everything it is given
    }
  }
  if (eof) {
    parser.FeedEof();
    if (parser.state() != HttpResponseParser::State::kIncomplete) record(pos);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const uint8_t flags = data[0];
  uint32_t seed = data[1] | 0x100u;
  const uint8_t more = data[2];
  data += 3;
  size -= 3;
  const bool capture = flags & 1, head = flags & 2, eof = flags & 4;
  const size_t max_piece = (flags >> 3) + 1;  // 1..32 bytes per piece
  const bool alternate = more & 1;
  static const std::string kExpected = "hello";
  const std::string* expected = (more & 2) ? &kExpected : nullptr;

  auto whole =
      ParseStream(data, size, capture, head, alternate, expected, eof, [] { return size_t{0}; });
  auto split = ParseStream(data, size, capture, head, alternate, expected, eof, [&] {
    seed = seed * 1103515245u + 12345u;  // any cheap deterministic sequence will do
    return size_t{(seed >> 16) % max_piece + 1};
  });
  if (!(whole == split)) __builtin_trap();
  return 0;
}
