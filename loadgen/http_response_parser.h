// HttpResponseParser: an incremental HTTP/1.1 response parser for the load generator's hot path
// and the conformance checker. It reads status line, headers (Content-Length, Transfer-Encoding:
// chunked, Connection) and the body, across arbitrary splits of the input, without allocating
// unless body capture is turned on (buffers are reused across Reset). A head that arrives whole in
// one Feed is parsed in place, without copying, and a head identical to the last one (the usual
// case under load) costs one memcmp. Interim 1xx responses are skipped. Malformed input
// is reported as an error state with a message, never a crash. The body can be compared against
// an expected one as it streams past, at memcmp cost. A body larger than set_max_body() is an
// error of its own (body_too_large()), found before the bytes past the limit are taken: from
// the Content-Length, a chunk's size or the bytes of a body delimited by close, so a captured
// body never exceeds the limit. One parser per connection; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace benchlab {

class HttpResponseParser {
 public:
  enum class State { kIncomplete, kComplete, kError };

  // capture: keep headers and body (conformance); off on the load path.
  explicit HttpResponseParser(bool capture = false);

  // Consumes bytes of the stream. Returns the number consumed; stops right after a complete
  // response (the rest belongs to the next one, for pipelining) or at an error.
  size_t Feed(const char* data, size_t len);
  // The peer closed: completes a response delimited by close (no length, no chunking).
  void FeedEof();

  State state() const { return state_; }
  const std::string& error() const { return error_; }
  int status() const { return status_; }
  bool keep_alive() const { return keep_alive_; }
  uint64_t body_bytes() const { return body_bytes_; }
  // Captured only with capture = true. Header names as received.
  const std::vector<std::pair<std::string, std::string>>& headers() const { return headers_; }
  const std::string& body() const { return body_; }

  // Ready for the next response on the same connection. Keeps buffers (and the HEAD setting).
  void Reset();

  // The request this response answers was HEAD, so the response has no body whatever its
  // headers say. A per-connection setting that survives Reset().
  void set_head_request(bool head) { head_request_ = head; }
  // Compares the (decoded) body with *expected as it arrives; nullptr turns it off. The string
  // must outlive the parser's use of it. Survives Reset().
  void set_expected_body(const std::string* expected) { expected_body_ = expected; }
  // Bodies (decoded) of more than `bytes` bytes are an error, with body_too_large() set; 0 means
  // no limit, the default. Survives Reset().
  void set_max_body(uint64_t bytes) { max_body_ = bytes == 0 ? UINT64_MAX : bytes; }
  // After kError: the error is a body over the set_max_body() limit.
  bool body_too_large() const { return body_too_large_; }
  // After kComplete: false when an expected body was set and the body differed from it.
  bool body_matches() const {
    return expected_body_ == nullptr || (!body_differs_ && body_bytes_ == expected_body_->size());
  }

  // Upper bound on a response head (status line and headers) and on a trailer section.
  static constexpr size_t kMaxHeadBytes = 64 * 1024;

 private:
  enum class Phase : uint8_t {
    kHead,          // status line and headers, up to the empty line
    kBodyLength,    // Content-Length bytes
    kBodyClose,     // everything until FeedEof
    kChunkSize,     // "1a;ext=1" line
    kChunkData,     // the chunk's bytes
    kChunkDataEnd,  // the CRLF after a chunk
    kTrailers,      // trailer lines after the last chunk, up to the empty line
    kDone,
  };

  size_t FeedHead(const char* data, size_t len);
  size_t FeedBody(const char* data, size_t len);
  void TakeBody(const char* data, size_t n);
  void Capture(const char* data, size_t n);
  // Accumulates one line into line_ (bounded); true once line_ holds a whole line (no CR/LF).
  bool ReadLine(const char* data, size_t len, size_t& consumed, size_t limit);
  // What a final response's head decides; a head seen again gets it from the cache.
  struct Framing {
    int status;
    bool keep_alive;
    Phase next;  // kDone when there is no body
    uint64_t length;
  };

  void ParseHead(std::string_view head);
  void Frame(const Framing& framing);
  void Fail(std::string message);
  void FailBodyTooLarge(const std::string& what);
  void Complete();
  void ResetHead();

  const bool capture_;
  bool head_request_ = false;
  bool body_differs_ = false;
  bool body_too_large_ = false;
  uint64_t max_body_ = UINT64_MAX;
  const std::string* expected_body_ = nullptr;
  State state_ = State::kIncomplete;
  Phase phase_ = Phase::kHead;
  std::string error_;
  int status_ = 0;
  bool keep_alive_ = true;
  uint64_t body_bytes_ = 0;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::string body_;
  // A captured body grows by doubling up to this many bytes, then to max_body_ (see Capture).
  static constexpr uint64_t kCaptureStep = 1 << 20;

  // The head accumulates here until its empty line; cleared, not freed, between responses so
  // the hot path does not allocate once the buffers have grown.
  std::string head_;
  size_t line_start_ = 0;  // where the current unterminated line of head_ begins
  std::string line_;       // a chunk-size or trailer line in progress
  size_t trailer_bytes_ = 0;
  uint64_t remaining_ = 0;  // of the Content-Length body or of the current chunk

  // The last final head parsed (without capture), and what it decided. Survives Reset().
  static constexpr size_t kMaxCachedHead = 512;
  std::string cache_;
  Framing cached_{};
  bool cached_head_request_ = false;
};

}  // namespace benchlab
