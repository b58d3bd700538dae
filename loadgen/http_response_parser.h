// HttpResponseParser: an incremental HTTP/1.1 response parser for the load generator's hot path
// and the conformance checker. It reads status line, headers (Content-Length, Transfer-Encoding:
// chunked, Connection) and the body, across arbitrary splits of the input, without allocating
// unless body capture is turned on. Malformed input is reported as an error state, never a
// crash. One parser per connection; not thread-safe.
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

  // Ready for the next response on the same connection.
  void Reset();

 private:
  // Implementation-defined state machine members.
  size_t FeedHead(const char* data, size_t len);
  size_t FeedBody(const char* data, size_t len);
  bool ParseHead();
  void Fail(std::string message);
  void Complete();

  bool capture_;
  State state_ = State::kIncomplete;
  std::string error_;
  int status_ = 0;
  bool keep_alive_ = true;
  uint64_t body_bytes_ = 0;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::string body_;

  // Head accumulation: a fixed-capacity buffer reused across responses.
  std::string head_;
  int phase_ = 0;
  bool chunked_ = false;
  bool until_close_ = false;
  uint64_t remaining_ = 0;
  std::string chunk_line_;
  bool head_request_ = false;
};

}  // namespace benchlab
