// HttpResponseParser: an incremental HTTP/1.1 response parser for the load generator's hot path
// and the conformance checker. It reads status line, headers (Content-Length, Transfer-Encoding:
// chunked, Connection) and the body, across arbitrary splits of the input, without allocating
// unless body capture is turned on (buffers are reused across Reset). Interim 1xx responses are
// skipped. Malformed input is reported as an error state with a message, never a crash.
// One parser per connection; not thread-safe.
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
  // Accumulates one line into line_ (bounded); true once line_ holds a whole line (no CR/LF).
  bool ReadLine(const char* data, size_t len, size_t& consumed, size_t limit);
  void ParseHead();
  void Fail(std::string message);
  void Complete();
  void ResetHead();

  const bool capture_;
  bool head_request_ = false;
  State state_ = State::kIncomplete;
  Phase phase_ = Phase::kHead;
  std::string error_;
  int status_ = 0;
  bool keep_alive_ = true;
  uint64_t body_bytes_ = 0;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::string body_;

  // The head accumulates here until its empty line; cleared, not freed, between responses so
  // the hot path does not allocate once the buffers have grown.
  std::string head_;
  size_t line_start_ = 0;  // where the current unterminated line of head_ begins
  std::string line_;       // a chunk-size or trailer line in progress
  size_t trailer_bytes_ = 0;
  uint64_t remaining_ = 0;  // of the Content-Length body or of the current chunk
};

}  // namespace benchlab
