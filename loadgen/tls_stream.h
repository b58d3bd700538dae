// TLS for the load generator (docs/load.md, "HTTPS"). A TlsClient is one worker's OpenSSL
// context: the version offered, ALPN, verification, and the newest session a server gave, for
// resumption. A TlsStream is one connection's TLS over memory BIOs: the engine moves ciphertext
// with its own reads and writes (recv/send or io_uring's completions) and the worker parses the
// plaintext as it does over plain TCP, so both engines share one TLS path and nothing waits on a
// socket inside OpenSSL. A stream is reused across reconnects (SSL_clear keeps its buffers).
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "loadgen/load.h"

namespace benchlab {

class TlsClient {
 public:
  static Result<std::unique_ptr<TlsClient>> Create(const TlsLoadOptions& options,
                                                   const std::string& host);
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  SSL_CTX* ctx() const { return ctx_; }
  const std::string& server_name() const { return server_name_; }
  // The newest session a server issued on this client's connections, or null.
  SSL_SESSION* session() const { return session_; }
  // Whether the next new connection should resume: a fixed low-discrepancy sequence, so that
  // any run of N connections resumes within one of N x resumption.
  bool NextResumes();

 private:
  TlsClient() = default;
  static int OnNewSession(SSL* ssl, SSL_SESSION* session);

  SSL_CTX* ctx_ = nullptr;
  SSL_SESSION* session_ = nullptr;
  std::string server_name_;
  double resumption_ = 1.0;
  double credit_ = 0;
};

class TlsStream {
 public:
  enum class State { kIdle, kHandshaking, kOpen, kClosed, kFailed };

  explicit TlsStream(TlsClient& client);
  ~TlsStream();
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  // Starts a handshake for a new connection, resuming the client's session when `resume` and
  // there is one; the ClientHello is then Outgoing().
  Status Begin(bool resume);
  // Ciphertext read from the socket. Advances the handshake, then decrypts: the plaintext is
  // appended to `plain`. kFailed (with error()) on a bad record, a refused certificate or an
  // alert; kClosed on the server's close_notify.
  State Feed(const char* data, size_t n, std::string& plain);
  // Encrypts plaintext for the socket (only once kOpen); the records are then Outgoing().
  Status Write(std::string_view plain);
  // Ciphertext to write to the socket: what an earlier call returned and Sent() has not yet
  // accounted for, else every record produced since. Those bytes stay in place until Sent()
  // covers them, so an io_uring send may point at them while Feed and Write produce more.
  std::string_view Outgoing();
  void Sent(size_t n);

  State state() const { return state_; }
  bool resumed() const;
  std::string_view alpn() const;  // the protocol the server chose, or ""
  const std::string& error() const { return error_; }

 private:
  State Fail(std::string what);

  TlsClient& client_;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;       // ciphertext from the server (owned by ssl_)
  BIO* out_bio_ = nullptr;  // ciphertext for the server (owned by ssl_)
  std::string flight_;      // ciphertext handed out by Outgoing(), from flight_head_ not yet Sent()
  size_t flight_head_ = 0;
  State state_ = State::kIdle;
  std::string error_;
};

}  // namespace benchlab
