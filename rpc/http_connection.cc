#include "rpc/http_connection.h"

#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <optional>
#include <sstream>
#include <type_traits>
#include <utility>
#include <vector>

namespace benchlab {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// The bytes httplib reads: the request as parsed, its body de-chunked, without the Expect that
// the connection has answered already.
std::string RequestText(http::request<http::string_body> request) {
  request.erase(http::field::expect);
  if (request.chunked()) {
    request.chunked(false);
    request.content_length(request.body().size());
  }
  std::ostringstream out;
  out << request;
  return std::move(out).str();
}

// A parse error of the request, which gets a 400, rather than a connection ending or failing.
bool IsBadRequest(const error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category() &&
         ec != http::error::end_of_stream && ec != http::error::partial_message &&
         ec != http::error::short_read;
}

// A connection over PlainStream or TlsStream, kept alive by the handler of its pending
// operation (or of its answer on a worker).
template <typename Stream>
class Session final : public HttpConnection, public std::enable_shared_from_this<Session<Stream>> {
 public:
  template <typename... StreamArgs>
  Session(HttpConnectionHost& front, std::string address, HttpRoutes::Peer peer,
          StreamArgs&&... args)
      : front_(front),
        address_(std::move(address)),
        peer_(std::move(peer)),
        stream_(std::forward<StreamArgs>(args)...) {}
  ~Session() override { front_.Closed(this, address_); }

  void Start() override {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      state_ = State::kHandshake;
      Lowest().expires_after(limits().handshake_timeout);
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = this->shared_from_this()](error_code ec) {
                                if (self->state_ == State::kClosed) return;
                                if (ec) return self->Close();
                                self->ReadHead();
                              });
    } else {
      ReadHead();
    }
  }

  void Shutdown() override {
    closing_ = true;
    if (state_ != State::kHandling && state_ != State::kWriting) Close();
  }

 private:
  enum class State { kHandshake, kIdle, kHead, kBody, kHandling, kWriting, kLingering, kClosed };

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }
  const HttpLimits& limits() const { return front_.limits(); }

  void Close() {
    if (state_ == State::kClosed) return;
    state_ = State::kClosed;
    error_code ignored;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Lowest().close();
  }

  // A kept connection: the next request's first byte within the idle timeout, then its head.
  void WaitForRequest() {
    if (buffer_.size() > 0) return ReadHead();  // pipelined: already here
    state_ = State::kIdle;
    Lowest().expires_after(limits().idle_timeout);
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = this->shared_from_this()](error_code ec, size_t n) {
                              if (self->state_ == State::kClosed) return;
                              if (ec) return self->Close();
                              self->buffer_.commit(n);
                              self->ReadHead();
                            });
  }

  void ReadHead() {
    state_ = State::kHead;
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(limits().max_head_bytes));
    parser_->body_limit(limits().max_body_bytes);
    Lowest().expires_after(limits().head_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](error_code ec, size_t) {
                              if (self->state_ == State::kClosed) return;
                              if (ec) return self->Failed(ec);
                              self->ReadBody();
                            });
  }

  void ReadBody() {
    if (parser_->is_done()) return Dispatch();
    state_ = State::kBody;
    Lowest().expires_after(limits().body_timeout);
    auto read = [self = this->shared_from_this()] {
      http::async_read(self->stream_, self->buffer_, *self->parser_, [self](error_code ec, size_t) {
        if (self->state_ == State::kClosed) return;
        if (ec) return self->Failed(ec);
        self->Dispatch();
      });
    };
    // The client waits for this before it sends the body (RFC 9110, 10.1.1).
    if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      net::async_write(stream_, net::buffer(kContinue, sizeof kContinue - 1),
                       [self = this->shared_from_this(), read](error_code ec, size_t) {
                         if (self->state_ == State::kClosed) return;
                         if (ec) return self->Close();
                         read();
                       });
      return;
    }
    read();
  }

  void Failed(const error_code& ec) {
    if (ec == http::error::header_limit) {
      return Refuse(
          431, "the request's head exceeds " + std::to_string(limits().max_head_bytes) + " bytes");
    }
    if (ec == http::error::body_limit) {
      return Refuse(
          413, "the request's body exceeds " + std::to_string(limits().max_body_bytes) + " bytes");
    }
    if (IsBadRequest(ec)) return Refuse(400, "bad request: " + ec.message());
    Close();  // a deadline passed, the client left, or the front stops
  }

  void Dispatch() {
    state_ = State::kHandling;
    Lowest().expires_never();
    const bool close =
        closing_ || front_.stopping() || ++served_ >= limits().max_requests_per_connection;
    std::string request = RequestText(parser_->release());
    parser_.reset();
    // The worker gets copies, not the connection: only the network thread may end it.
    front_.Run([routes = &front_.routes(), peer = peer_, request = std::move(request),
                close]() mutable { return routes->Handle(std::move(request), peer, close); },
               [self = this->shared_from_this()](HttpRoutes::Answer answer) {
                 if (self->state_ == State::kClosed) return;
                 self->Write(std::move(answer.bytes), answer.keep_alive);
               });
  }

  void Write(std::string bytes, bool keep_alive) {
    state_ = State::kWriting;
    answer_ = std::move(bytes);
    Lowest().expires_after(limits().write_timeout);
    net::async_write(stream_, net::buffer(answer_),
                     [self = this->shared_from_this(), keep_alive](error_code ec, size_t) {
                       if (self->state_ == State::kClosed) return;
                       self->answer_ = std::string();
                       if (ec || !keep_alive || self->closing_) return self->Close();
                       self->WaitForRequest();
                     });
  }

  // Answers a request that was not read whole, then lingers and closes.
  void Refuse(int status, const std::string& message) {
    state_ = State::kWriting;
    answer_ = front_.routes().Refusal(status, message);
    Lowest().expires_after(limits().write_timeout);
    net::async_write(stream_, net::buffer(answer_),
                     [self = this->shared_from_this()](error_code ec, size_t) {
                       if (self->state_ == State::kClosed) return;
                       if (ec || self->closing_) return self->Close();
                       self->Linger();
                     });
  }

  // Closing with unread input would reset the connection, and the client could lose the
  // refusal: say that nothing more comes, and drop what still arrives for a while.
  void Linger() {
    state_ = State::kLingering;
    error_code ignored;
    Lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    Lowest().expires_after(limits().linger_timeout);
    scratch_.resize(4096);
    Drain();
  }
  void Drain() {
    Lowest().async_read_some(net::buffer(scratch_),
                             [self = this->shared_from_this()](error_code ec, size_t) {
                               if (self->state_ == State::kClosed) return;
                               if (ec) return self->Close();
                               self->Drain();
                             });
  }

  static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";

  HttpConnectionHost& front_;
  const std::string address_;
  const HttpRoutes::Peer peer_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string answer_;
  std::vector<char> scratch_;
  State state_ = State::kHead;
  bool closing_ = false;
  size_t served_ = 0;
};

}  // namespace

std::shared_ptr<HttpConnection> NewHttpConnection(HttpConnectionHost& host, tcp::socket socket,
                                                  HttpRoutes::Peer peer, std::string address,
                                                  net::ssl::context* tls) {
  if (tls != nullptr) {
    return std::make_shared<Session<TlsStream>>(host, std::move(address), std::move(peer),
                                                std::move(socket), *tls);
  }
  return std::make_shared<Session<PlainStream>>(host, std::move(address), std::move(peer),
                                                std::move(socket));
}

}  // namespace benchlab
