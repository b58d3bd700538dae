#include "loadgen/http_response_parser.h"

#include <cstring>

namespace benchlab {

namespace {

constexpr size_t kMaxChunkLineBytes = 4096;

bool IsTokenChar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return c != 0 && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls fn(element) for each non-empty, trimmed element of a comma-separated header value.
template <typename Fn>
void ForEachListElement(std::string_view value, Fn fn) {
  while (true) {
    const size_t comma = value.find(',');
    std::string_view element = Trim(value.substr(0, comma));
    if (!element.empty()) fn(element);
    if (comma == std::string_view::npos) return;
    value.remove_prefix(comma + 1);
  }
}

// Shows untrusted bytes in an error message: bounded, with control bytes escaped.
std::string Quote(std::string_view s) {
  constexpr size_t kShown = 60;
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < kShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (s.size() > kShown) out += "...";
  return out + "\"";
}

// "Name: value" with a token name and no control bytes in the value (HTAB aside).
bool SplitHeader(std::string_view line, std::string_view& name, std::string_view& value) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  name = line.substr(0, colon);
  for (char c : name) {
    if (!IsTokenChar(static_cast<unsigned char>(c))) return false;
  }
  value = Trim(line.substr(colon + 1));
  for (char c : value) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && u != '\t') || u == 0x7f) return false;
  }
  return true;
}

// Strict decimal without sign or spaces; false on overflow.
bool ParseLength(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = Lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

HttpResponseParser::HttpResponseParser(bool capture) : capture_(capture) {
  head_.reserve(1024);
  line_.reserve(64);
}

void HttpResponseParser::Reset() {
  state_ = State::kIncomplete;
  phase_ = Phase::kHead;
  error_.clear();
  keep_alive_ = true;
  body_bytes_ = 0;
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
    ParseHead();
  } else {
    line_start_ = head_.size();
  }
  return take;
}

void HttpResponseParser::ParseHead() {
  std::string_view rest(head_);
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
  status_ = status;
  keep_alive_ = http10 ? (ka && !close) : !close;
  if (has_te && has_length) {
    // A response with both is malformed and a classic smuggling vector; trust neither.
    return Fail("response has both Transfer-Encoding and Content-Length");
  }
  if (status == 101) {
    keep_alive_ = false;  // the connection now speaks another protocol
    return Complete();
  }
  if (status == 204 || status == 304 || head_request_) return Complete();
  if (has_te && chunked) {
    phase_ = Phase::kChunkSize;
  } else if (has_length) {
    remaining_ = length;
    if (length == 0) return Complete();
    phase_ = Phase::kBodyLength;
  } else {
    keep_alive_ = false;  // delimited by close: the connection ends with the body
    phase_ = Phase::kBodyClose;
  }
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
      if (capture_) body_.append(data, n);
      body_bytes_ += n;
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
      if (capture_) body_.append(data, len);
      body_bytes_ += len;
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
