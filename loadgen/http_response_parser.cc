#include "loadgen/http_response_parser.h"

#include <algorithm>
#include <cstring>

#include "loadgen/http_syntax.h"

namespace benchlab {

namespace {

using http_syntax::ForEachListElement;
using http_syntax::FormatSize;
using http_syntax::HexDigit;
using http_syntax::IEquals;
using http_syntax::ParseLength;
using http_syntax::Quote;
using http_syntax::SplitHeader;

constexpr size_t kMaxChunkLineBytes = 4096;

}  // namespace

HttpResponseParser::HttpResponseParser(bool capture) : capture_(capture) {
  head_.reserve(1024);
  line_.reserve(64);
  if (!capture_) cache_.reserve(kMaxCachedHead);
}

void HttpResponseParser::Reset() {
  state_ = State::kIncomplete;
  phase_ = Phase::kHead;
  error_.clear();
  keep_alive_ = true;
  body_bytes_ = 0;
  body_differs_ = false;
  body_too_large_ = false;
  body_.clear();
  ResetHead();
  line_.clear();
  trailer_bytes_ = 0;
  remaining_ = 0;
}

void HttpResponseParser::ResetHead() {
  head_.clear();
  line_start_ = 0;
  status_ = 0;
  headers_.clear();
}

void HttpResponseParser::Fail(std::string message) {
  state_ = State::kError;
  error_ = std::move(message);
}

void HttpResponseParser::FailBodyTooLarge(const std::string& what) {
  body_too_large_ = true;
  Fail("response body larger than " + FormatSize(max_body_) + " (" + what + ")");
}

void HttpResponseParser::Complete() {
  state_ = State::kComplete;
  phase_ = Phase::kDone;
}

size_t HttpResponseParser::Feed(const char* data, size_t len) {
  size_t used = 0;
  // Each step consumes at least one byte or leaves kIncomplete, so the loop terminates.
  while (used < len && state_ == State::kIncomplete) {
    used += phase_ == Phase::kHead ? FeedHead(data + used, len - used)
                                   : FeedBody(data + used, len - used);
  }
  return used;
}

void HttpResponseParser::FeedEof() {
  if (state_ != State::kIncomplete) return;
  switch (phase_) {
    case Phase::kBodyClose:
      Complete();
      return;
    case Phase::kHead:
      Fail(head_.empty() ? "connection closed before the response began"
                         : "connection closed in the response head");
      return;
    case Phase::kBodyLength:
      Fail("connection closed after " + std::to_string(body_bytes_) + " body bytes, " +
           std::to_string(remaining_) + " short of Content-Length");
      return;
    default:
      Fail("connection closed in a chunked body after " + std::to_string(body_bytes_) + " bytes");
      return;
  }
}

size_t HttpResponseParser::FeedHead(const char* data, size_t len) {
  if (head_.empty()) {
    // Under load a server answers with the same head again and again. A piece that begins with
    // the last head parsed (which ends at its empty line) begins with that very head.
    if (!cache_.empty() && cached_head_request_ == head_request_ && len >= cache_.size() &&
        std::memcmp(data, cache_.data(), cache_.size()) == 0) {
      Frame(cached_);
      return cache_.size();
    }
    // Otherwise, usually, the whole head is in this piece. Find its empty line and parse it where
    // it lies. The limit matches the slow path's: a head of at most kMaxHeadBytes.
    const size_t limit = len < kMaxHeadBytes ? len : kMaxHeadBytes;
    size_t pos = 0;
    while (pos < limit) {
      const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', limit - pos));
      if (nl == nullptr) break;
      const size_t line_len = static_cast<size_t>(nl - data) - pos;
      const size_t next = static_cast<size_t>(nl - data) + 1;
      if (line_len == 0 || (line_len == 1 && data[pos] == '\r')) {
        ParseHead(std::string_view(data, next));
        return next;
      }
      pos = next;
    }
  }
  // The head spans pieces: accumulate it line by line.
  const char* nl = static_cast<const char*>(std::memchr(data, '\n', len));
  const size_t take = nl ? static_cast<size_t>(nl - data) + 1 : len;
  if (head_.size() + take > kMaxHeadBytes) {
    Fail("response head exceeds " + std::to_string(kMaxHeadBytes) + " bytes");
    return take;
  }
  head_.append(data, take);
  if (!nl) return take;
  size_t line_len = head_.size() - 1 - line_start_;
  if (line_len > 0 && head_[head_.size() - 2] == '\r') --line_len;
  if (line_len == 0) {
    ParseHead(head_);
  } else {
    line_start_ = head_.size();
  }
  return take;
}

void HttpResponseParser::ParseHead(std::string_view head) {
  std::string_view rest = head;
  auto next_line = [&rest] {
    const size_t nl = rest.find('\n');  // every line of a complete head ends in LF
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  };

  // "HTTP/1.1 200 OK": version, one space, three digits, then the end or a space and a reason.
  const std::string_view status_line = next_line();
  const std::string_view sl = status_line;
  if (sl.size() < 12 || sl.substr(0, 5) != "HTTP/" || sl[5] < '0' || sl[5] > '9' || sl[6] != '.' ||
      sl[7] < '0' || sl[7] > '9' || sl[8] != ' ' || sl[9] < '1' || sl[9] > '9' || sl[10] < '0' ||
      sl[10] > '9' || sl[11] < '0' || sl[11] > '9' || (sl.size() > 12 && sl[12] != ' ')) {
    return Fail("bad status line " + Quote(status_line));
  }
  if (sl[5] != '1') return Fail("unsupported HTTP version in " + Quote(status_line));
  const bool http10 = sl[7] == '0';
  const int status = (sl[9] - '0') * 100 + (sl[10] - '0') * 10 + (sl[11] - '0');

  bool has_length = false, has_te = false, chunked = false, close = false, ka = false;
  uint64_t length = 0;
  while (true) {
    const std::string_view line = next_line();
    if (line.empty()) break;
    if (line.front() == ' ' || line.front() == '\t') {
      return Fail("obsolete line folding in the response head at " + Quote(line));
    }
    std::string_view name, value;
    if (!SplitHeader(line, name, value)) return Fail("bad header line " + Quote(line));
    if (IEquals(name, "content-length")) {
      bool ok = true, any = false;
      ForEachListElement(value, [&](std::string_view element) {
        uint64_t n = 0;
        if (!ParseLength(element, n) || (has_length && n != length)) ok = false;
        has_length = any = true;
        length = n;
      });
      if (!ok || !any) return Fail("bad or conflicting Content-Length " + Quote(value));
    } else if (IEquals(name, "transfer-encoding")) {
      // Only the final coding decides the framing; a later header field continues the list.
      has_te = true;
      ForEachListElement(value,
                         [&](std::string_view coding) { chunked = IEquals(coding, "chunked"); });
    } else if (IEquals(name, "connection")) {
      ForEachListElement(value, [&](std::string_view option) {
        if (IEquals(option, "close")) close = true;
        if (IEquals(option, "keep-alive")) ka = true;
      });
    }
    if (capture_) headers_.emplace_back(name, value);
  }

  if (status < 200 && status != 101) {
    // An interim response (100 Continue, 103 Early Hints): the final one follows.
    ResetHead();
    return;
  }
  bool keep_alive = http10 ? (ka && !close) : !close;
  if (has_te && has_length) {
    // A response with both is malformed and a classic smuggling vector; trust neither.
    status_ = status;
    keep_alive_ = keep_alive;
    return Fail("response has both Transfer-Encoding and Content-Length");
  }
  Phase next;
  if (status == 101) {
    keep_alive = false;  // the connection now speaks another protocol
    next = Phase::kDone;
  } else if (status == 204 || status == 304 || head_request_) {
    next = Phase::kDone;
  } else if (has_te && chunked) {
    next = Phase::kChunkSize;
  } else if (has_length) {
    next = length == 0 ? Phase::kDone : Phase::kBodyLength;
  } else {
    keep_alive = false;  // delimited by close: the connection ends with the body
    next = Phase::kBodyClose;
  }
  const Framing framing{status, keep_alive, next, length};
  if (!capture_ && head.size() <= kMaxCachedHead) {
    cache_.assign(head);  // within the capacity reserved at construction: no allocation
    cached_ = framing;
    cached_head_request_ = head_request_;
  }
  Frame(framing);
}

void HttpResponseParser::Frame(const Framing& f) {
  status_ = f.status;
  keep_alive_ = f.keep_alive;
  if (f.next == Phase::kDone) return Complete();
  if (f.next == Phase::kBodyLength && f.length > max_body_) {
    return FailBodyTooLarge("Content-Length " + std::to_string(f.length));
  }
  phase_ = f.next;
  remaining_ = f.length;
}

void HttpResponseParser::Capture(const char* data, size_t n) {
  const size_t need = body_.size() + n;
  if (need > body_.capacity()) {
    // Doubling, as append would, but never past the limit (need is within it: FeedBody checked).
    // Past kCaptureStep, a limited buffer goes to the limit at once: one allocation whose
    // untouched pages cost nothing, where further doublings would leave freed buffers that the
    // allocator may keep resident (about twice the body).
    uint64_t want = std::max<uint64_t>(2 * body_.capacity(), need);
    if (want > kCaptureStep && max_body_ != UINT64_MAX) want = max_body_;
    body_.reserve(static_cast<size_t>(std::min(want, max_body_)));
  }
  body_.append(data, n);
}

void HttpResponseParser::TakeBody(const char* data, size_t n) {
  if (capture_) Capture(data, n);
  if (expected_body_ != nullptr && !body_differs_) {
    const std::string& want = *expected_body_;
    body_differs_ =
        body_bytes_ + n > want.size() || std::memcmp(want.data() + body_bytes_, data, n) != 0;
  }
  body_bytes_ += n;
}

bool HttpResponseParser::ReadLine(const char* data, size_t len, size_t& consumed, size_t limit) {
  const char* nl = static_cast<const char*>(std::memchr(data, '\n', len));
  consumed = nl ? static_cast<size_t>(nl - data) + 1 : len;
  if (line_.size() + consumed > limit) {
    Fail(phase_ == Phase::kChunkSize ? "chunk-size line exceeds " + std::to_string(limit) + " bytes"
                                     : "trailer line exceeds " + std::to_string(limit) + " bytes");
    return false;
  }
  line_.append(data, consumed);
  if (!nl) return false;
  line_.pop_back();
  if (!line_.empty() && line_.back() == '\r') line_.pop_back();
  return true;
}

size_t HttpResponseParser::FeedBody(const char* data, size_t len) {
  switch (phase_) {
    case Phase::kBodyLength:
    case Phase::kChunkData: {
      const size_t n = remaining_ < len ? static_cast<size_t>(remaining_) : len;
      TakeBody(data, n);
      remaining_ -= n;
      if (remaining_ == 0) {
        if (phase_ == Phase::kBodyLength) {
          Complete();
        } else {
          phase_ = Phase::kChunkDataEnd;
        }
      }
      return n;
    }
    case Phase::kBodyClose:
      if (len > max_body_ - body_bytes_) {
        FailBodyTooLarge("delimited by close, " + std::to_string(body_bytes_ + len) +
                         " bytes so far");
        return 0;
      }
      TakeBody(data, len);
      return len;
    case Phase::kChunkSize: {
      size_t used = 0;
      if (!ReadLine(data, len, used, kMaxChunkLineBytes)) return used;
      // chunk-size [ BWS ";" chunk-ext ]: hex digits, then optional whitespace and extensions.
      std::string_view line(line_);
      uint64_t size = 0;
      size_t i = 0;
      for (; i < line.size() && HexDigit(line[i]) >= 0; ++i) {
        if (size >> 60) {
          Fail("chunk size too large " + Quote(line));
          return used;
        }
        size = size * 16 + static_cast<uint64_t>(HexDigit(line[i]));
      }
      const size_t digits = i;
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (digits == 0 || (i < line.size() && line[i] != ';')) {
        Fail("bad chunk size " + Quote(line));
        return used;
      }
      if (size > max_body_ - body_bytes_) {
        FailBodyTooLarge("chunked, a chunk of " + std::to_string(size) + " bytes after " +
                         std::to_string(body_bytes_));
        return used;
      }
      line_.clear();
      remaining_ = size;
      phase_ = size == 0 ? Phase::kTrailers : Phase::kChunkData;
      return used;
    }
    case Phase::kChunkDataEnd: {
      size_t used = 0;
      if (!ReadLine(data, len, used, kMaxChunkLineBytes)) return used;
      if (!line_.empty()) {
        Fail("expected CRLF after chunk data, got " + Quote(line_));
        return used;
      }
      phase_ = Phase::kChunkSize;
      return used;
    }
    case Phase::kTrailers: {
      size_t used = 0;
      const bool whole = ReadLine(data, len, used, kMaxHeadBytes);
      trailer_bytes_ += used;
      if (state_ != State::kIncomplete) return used;
      if (trailer_bytes_ > kMaxHeadBytes) {
        Fail("trailer section exceeds " + std::to_string(kMaxHeadBytes) + " bytes");
        return used;
      }
      if (!whole) return used;
      if (line_.empty()) {
        Complete();
        return used;
      }
      std::string_view name, value;
      if (!SplitHeader(line_, name, value)) {
        Fail("bad trailer line " + Quote(line_));
        return used;
      }
      if (capture_) headers_.emplace_back(name, value);
      line_.clear();
      return used;
    }
    case Phase::kHead:
    case Phase::kDone:
      break;
  }
  return 0;  // unreachable: Feed only calls here in a body phase while incomplete
}

}  // namespace benchlab
