// HTTPS for both engines (docs/load.md, "HTTPS"). Each connection slot has one TlsStream over
// memory BIOs: the engine reads ciphertext as it reads plain HTTP (recv, or a multishot receive's
// buffer) and hands it to ConsumeTls, which decrypts into one reused plaintext buffer for the
// same parser; requests are encrypted into the stream, and its ciphertext goes out by send or by
// an io_uring send that points at the stream's stable buffer. A connection's handshake starts
// once TCP is up and nothing is dispatched on it before the handshake ends, so its time and
// kind (full, resumed) are counted apart from the requests' latency.
#include <sys/socket.h>

#include <cerrno>

#include "loadgen/tls_stream.h"
#include "loadgen/worker.h"

namespace benchlab {

namespace {

uint64_t HandshakeUs(int64_t ns) { return ns <= 0 ? 0 : static_cast<uint64_t>((ns + 500) / 1000); }

}  // namespace

Status Worker::PrepareTls() {
  if (plan_.tls == nullptr) return Status::Ok();
  BENCHLAB_ASSIGN_OR_RETURN(tls_client_, TlsClient::Create(*plan_.tls, plan_.tls_host));
  tls_streams_.reserve(conns_.size());
  for (Conn& c : conns_) {
    tls_streams_.push_back(std::make_unique<TlsStream>(*tls_client_));
    c.tls = tls_streams_.back().get();
  }
  tls_plain_.reserve(kReadBufferBytes);
  return Status::Ok();
}

void Worker::StartTls(Conn& c, int64_t now) {
  c.handshaking = true;
  c.handshake_start_ns = now;
  c.deadline_ns = now + plan_.timeout_ns;  // Sweep fails a handshake that takes longer
  // The share of resumed handshakes follows the client's sequence; without a session yet (a
  // worker's first connections) the handshake is full whatever the sequence says.
  const bool resume = tls_client_->NextResumes() && tls_client_->session() != nullptr;
  if (!c.tls->Begin(resume).ok()) return FailTls(c, c.tls->error(), now);
  SendTls(c, now);
}

void Worker::FailTls(Conn& c, std::string_view why, int64_t now) {
  if (Counting(now)) ++result_.handshakes_failed;
  if (result_.tls_error.empty()) result_.tls_error = why.empty() ? "TLS handshake failed" : why;
  c.handshaking = false;
  Fail(c, Failure::kConnect, now);
}

void Worker::ConsumeTls(Conn& c, const char* data, size_t n, int64_t now) {
  if (n == 0) {
    if (c.handshaking) return FailTls(c, "the server closed the connection in the handshake", now);
    return ConsumePlain(c, nullptr, 0, now);
  }
  tls_plain_.clear();
  const TlsStream::State state = c.tls->Feed(data, n, tls_plain_);
  if (state == TlsStream::State::kFailed) {
    if (c.handshaking) return FailTls(c, c.tls->error(), now);
    return Fail(c, Failure::kRead, now);
  }
  const uint32_t generation = c.generation;
  auto same_connection = [&] { return c.fd >= 0 && c.generation == generation; };
  if (c.handshaking && state != TlsStream::State::kHandshaking) {
    FinishHandshake(c, now);
    if (!same_connection()) return;
  }
  if (!tls_plain_.empty()) {
    ConsumePlain(c, tls_plain_.data(), tls_plain_.size(), now);
    if (!same_connection()) return;
  }
  if (state == TlsStream::State::kClosed) return ConsumePlain(c, nullptr, 0, now);
  // The handshake's last flight, or a key update: the records OpenSSL wrote while reading.
  if (!c.tls->Outgoing().empty()) SendTls(c, now);
}

void Worker::FinishHandshake(Conn& c, int64_t now) {
  c.handshaking = false;
  const std::string_view alpn = c.tls->alpn();
  if (!alpn.empty() && alpn != "http/1.1") {
    // Offered only when the options list it beside http/1.1; the parser reads HTTP/1.1 only.
    return FailTls(c, "the server chose ALPN \"" + std::string(alpn) + "\"; HTTP/1.1 is needed",
                   now);
  }
  if (result_.tls_alpn.empty() && !alpn.empty()) result_.tls_alpn = alpn;
  if (Counting(now)) {
    ++(c.tls->resumed() ? result_.handshakes_resumed : result_.handshakes_full);
    result_.handshake_us.Record(HandshakeUs(now - c.handshake_start_ns));
  }
  Refill(c, now);
}

void Worker::FlushTls(Conn& c, int64_t now) {
  if (c.fd < 0 || c.connecting) return;
  if (!c.handshaking) {
    // Requests become records as soon as they are dispatched; they have been sent, as far as
    // the request accounting goes, once the stream holds them.
    const uint32_t depth = static_cast<uint32_t>(plan_.depth);
    while (c.written < c.count) {
      InFlight& f = c.ring[(c.head + c.written) % depth];
      if (f.sent_ns == 0) f.sent_ns = now;
      if (!c.tls->Write(plan_.requests[f.request].bytes).ok()) {
        return Fail(c, Failure::kWrite, now);
      }
      ++c.written;
    }
    c.partial = 0;
  }
  SendTls(c, now);
}

void Worker::SendTls(Conn& c, int64_t now) {
  if (uring_) return SendTlsUring(c, now);
  while (true) {
    const std::string_view out = c.tls->Outgoing();
    if (out.empty()) break;
    const ssize_t n = ::send(c.fd, out.data(), out.size(), MSG_NOSIGNAL);
    ++result_.syscalls.writes;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        if (!SetInterest(c, true)) Fail(c, Failure::kWrite, now);
        return;
      }
      return Fail(c, Failure::kWrite, now);
    }
    c.tls->Sent(static_cast<size_t>(n));
  }
  if (c.out_armed && !c.connecting && !SetInterest(c, false)) Fail(c, Failure::kWrite, now);
}

}  // namespace benchlab
