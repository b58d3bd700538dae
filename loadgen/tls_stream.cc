// TlsClient and TlsStream: OpenSSL over memory BIOs for the load generator.
#include "loadgen/tls_stream.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cmath>

namespace benchlab {

namespace {

// OpenSSL's queued errors, joined, and the queue cleared.
std::string TlsErrorQueue() {
  std::string text;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!text.empty()) text += "; ";
    text += buf;
  }
  return text;
}

// ALPN's wire form: each protocol prefixed by its length.
std::string AlpnWire(const std::vector<std::string>& protocols) {
  std::string wire;
  for (const std::string& p : protocols) {
    wire += static_cast<char>(p.size());
    wire += p;
  }
  return wire;
}

// Adds every certificate of a PEM text to the context's trust store.
Status LoadCaPem(SSL_CTX* ctx, const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return Status::Internal("tls.ca_pem: " + TlsErrorQueue());
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    if (X509_STORE_add_cert(store, cert) == 1) ++added;
    X509_free(cert);
  }
  BIO_free(bio);
  ERR_clear_error();  // the read that ended the loop
  if (added == 0) {
    return Status::InvalidArgument("tls.ca_pem: expected PEM certificates, found none");
  }
  return Status::Ok();
}

int TlsClientIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

}  // namespace

Status ValidateTlsOptions(const TlsLoadOptions& o) {
  if (!(o.resumption >= 0 && o.resumption <= 1)) {
    return Status::InvalidArgument("tls.resumption: expected a share from 0.0 to 1.0");
  }
  if (o.version != "1.3" && o.version != "1.2") {
    return Status::InvalidArgument("tls.version: expected \"1.3\" or \"1.2\", got \"" +
                                   o.version.substr(0, 16) + "\"");
  }
  for (const std::string& p : o.alpn) {
    if (p.empty() || p.size() > 255) {
      return Status::InvalidArgument("tls.alpn: expected protocol names of 1 to 255 bytes");
    }
  }
  // The generator speaks HTTP/1.1 only: a list without it would let the server pick a protocol
  // whose bytes the response parser cannot read.
  if (!o.alpn.empty() && std::find(o.alpn.begin(), o.alpn.end(), "http/1.1") == o.alpn.end()) {
    return Status::InvalidArgument(
        "tls.alpn: expected a list that offers \"http/1.1\" (the protocol the load generator "
        "speaks), or an empty list for no ALPN");
  }
  return Status::Ok();
}

Result<std::unique_ptr<TlsClient>> TlsClient::Create(const TlsLoadOptions& o,
                                                     const std::string& host) {
  BENCHLAB_RETURN_IF_ERROR(ValidateTlsOptions(o));
  std::unique_ptr<TlsClient> client(new TlsClient);
  client->ctx_ = SSL_CTX_new(TLS_client_method());
  if (client->ctx_ == nullptr) {
    return Status::Internal("TLS context: " + TlsErrorQueue());
  }
  SSL_CTX* ctx = client->ctx_;
  const int version = o.version == "1.3" ? TLS1_3_VERSION : TLS1_2_VERSION;
  SSL_CTX_set_min_proto_version(ctx, version);
  SSL_CTX_set_max_proto_version(ctx, version);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (!o.alpn.empty()) {
    const std::string wire = AlpnWire(o.alpn);
    if (SSL_CTX_set_alpn_protos(ctx, reinterpret_cast<const unsigned char*>(wire.data()),
                                static_cast<unsigned>(wire.size())) != 0) {
      return Status::InvalidArgument("tls.alpn: " + TlsErrorQueue());
    }
  }
  if (o.verify) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    if (o.ca_file.empty() && !o.ca_pem.empty()) {
      BENCHLAB_RETURN_IF_ERROR(LoadCaPem(ctx, o.ca_pem));
    } else if (const int loaded = o.ca_file.empty() ? SSL_CTX_set_default_verify_paths(ctx)
                                                    : SSL_CTX_load_verify_locations(
                                                          ctx, o.ca_file.c_str(), nullptr);
               loaded != 1) {
      return Status::InvalidArgument("tls.ca: cannot load \"" + o.ca_file +
                                     "\": " + TlsErrorQueue());
    }
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  }
  // Client-side caching hands every new session (a TLS 1.3 ticket arrives after the handshake)
  // to OnNewSession; nothing is kept in OpenSSL's own cache.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, &TlsClient::OnNewSession);
  SSL_CTX_set_ex_data(ctx, TlsClientIndex(), client.get());
  client->server_name_ = o.server_name.empty() ? host : o.server_name;
  client->resumption_ = o.resumption;
  return client;
}

TlsClient::~TlsClient() {
  if (session_ != nullptr) SSL_SESSION_free(session_);
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

int TlsClient::OnNewSession(SSL* ssl, SSL_SESSION* session) {
  auto* self = static_cast<TlsClient*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), TlsClientIndex()));
  if (self == nullptr) return 0;
  if (self->session_ != nullptr) SSL_SESSION_free(self->session_);
  self->session_ = session;
  return 1;  // the reference is ours
}

bool TlsClient::NextResumes() {
  credit_ += resumption_;
  if (credit_ >= 1 - 1e-9) {
    credit_ -= 1;
    return true;
  }
  return false;
}

TlsStream::TlsStream(TlsClient& client) : client_(client) {}

TlsStream::~TlsStream() {
  if (ssl_ == nullptr) return;
  SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);  // as in Begin
  SSL_free(ssl_);                                                     // frees both BIOs
}

Status TlsStream::Begin(bool resume) {
  if (ssl_ == nullptr) {
    ssl_ = SSL_new(client_.ctx());
    if (ssl_ == nullptr) return Status::Internal("TLS connection: " + TlsErrorQueue());
    in_ = BIO_new(BIO_s_mem());
    out_bio_ = BIO_new(BIO_s_mem());
    if (in_ == nullptr || out_bio_ == nullptr) {
      BIO_free(in_);
      BIO_free(out_bio_);
      in_ = out_bio_ = nullptr;
      return Status::Internal("TLS buffers: " + TlsErrorQueue());
    }
    BIO_set_mem_eof_return(in_, -1);  // empty means "more to come", not end of stream
    SSL_set_bio(ssl_, in_, out_bio_);
  } else {
    // A connection ends without close_notify when the load generator closes it; unmarked,
    // OpenSSL would take that as a broken session and stop it from being resumed.
    SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_clear(ssl_);
    BIO_reset(in_);
    BIO_reset(out_bio_);
  }
  flight_.clear();
  flight_head_ = 0;
  error_.clear();
  SSL_set_connect_state(ssl_);
  const std::string& name = client_.server_name();
  SSL_set_tlsext_host_name(ssl_, name.c_str());
  if (SSL_get_verify_mode(ssl_) != SSL_VERIFY_NONE) SSL_set1_host(ssl_, name.c_str());
  // SSL_clear keeps the last connection's session: a full handshake must drop it.
  // A connection resumes from its own copy: OpenSSL may mark the session of a connection it
  // handled not resumable (against nginx, one resumption in eight fell back to a full
  // handshake when connections shared it), and the worker's newest session must stay usable.
  SSL_SESSION* session =
      resume && client_.session() != nullptr ? SSL_SESSION_dup(client_.session()) : nullptr;
  SSL_set_session(ssl_, session);
  SSL_SESSION_free(session);  // the connection holds its own reference
  state_ = State::kHandshaking;
  const int rc = SSL_do_handshake(ssl_);
  if (rc <= 0 && SSL_get_error(ssl_, rc) != SSL_ERROR_WANT_READ) {
    Fail("TLS handshake");
    return Status::Unavailable(error_);
  }
  return Status::Ok();
}

TlsStream::State TlsStream::Fail(std::string what) {
  const long verify = ssl_ != nullptr ? SSL_get_verify_result(ssl_) : X509_V_OK;
  std::string why = TlsErrorQueue();
  if (verify != X509_V_OK) why = X509_verify_cert_error_string(verify);
  error_ = std::move(what) + (why.empty() ? "" : ": " + why);
  state_ = State::kFailed;
  return state_;
}

TlsStream::State TlsStream::Feed(const char* data, size_t n, std::string& plain) {
  if (state_ != State::kHandshaking && state_ != State::kOpen) return state_;
  if (n > 0 && BIO_write(in_, data, static_cast<int>(n)) != static_cast<int>(n)) {
    return Fail("TLS buffer");
  }
  if (state_ == State::kHandshaking) {
    const int rc = SSL_do_handshake(ssl_);
    if (rc <= 0) {
      if (SSL_get_error(ssl_, rc) == SSL_ERROR_WANT_READ) return state_;
      return Fail("TLS handshake");
    }
    state_ = State::kOpen;
  }
  char buf[16 * 1024];
  while (true) {
    const int got = SSL_read(ssl_, buf, sizeof(buf));
    if (got > 0) {
      plain.append(buf, static_cast<size_t>(got));
      continue;
    }
    const int err = SSL_get_error(ssl_, got);
    if (err == SSL_ERROR_WANT_READ) return state_;
    if (err == SSL_ERROR_ZERO_RETURN) {
      state_ = State::kClosed;
      return state_;
    }
    return Fail("TLS read");
  }
}

Status TlsStream::Write(std::string_view plain) {
  if (state_ != State::kOpen) return Status::FailedPrecondition("TLS write before the handshake");
  while (!plain.empty()) {
    const int put = SSL_write(ssl_, plain.data(), static_cast<int>(plain.size()));
    if (put <= 0) {
      Fail("TLS write");
      return Status::Unavailable(error_);
    }
    plain.remove_prefix(static_cast<size_t>(put));
  }
  return Status::Ok();
}

std::string_view TlsStream::Outgoing() {
  if (flight_head_ == flight_.size()) {
    flight_.clear();
    flight_head_ = 0;
    char* data = nullptr;
    const long n = out_bio_ == nullptr ? 0 : BIO_get_mem_data(out_bio_, &data);
    if (n > 0) {
      flight_.assign(data, static_cast<size_t>(n));
      BIO_reset(out_bio_);
    }
  }
  return std::string_view(flight_).substr(flight_head_);
}

void TlsStream::Sent(size_t n) { flight_head_ = std::min(flight_.size(), flight_head_ + n); }

bool TlsStream::resumed() const { return ssl_ != nullptr && SSL_session_reused(ssl_) == 1; }

std::string_view TlsStream::alpn() const {
  if (ssl_ == nullptr) return {};
  const unsigned char* proto = nullptr;
  unsigned len = 0;
  SSL_get0_alpn_selected(ssl_, &proto, &len);
  return proto == nullptr ? std::string_view()
                          : std::string_view(reinterpret_cast<const char*>(proto), len);
}

}  // namespace benchlab
