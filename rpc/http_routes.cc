#include "rpc/http_routes.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <utility>

#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

// A request in memory for httplib to read, and the answer it writes.
class Exchange final : public httplib::Stream {
 public:
  Exchange(std::string request, const HttpRoutes::Peer& peer)
      : request_(std::move(request)), peer_(peer) {}

  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, request_.size() - read_);
    std::memcpy(ptr, request_.data() + read_, n);
    read_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    answer_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = peer_.remote_ip;
    port = peer_.remote_port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = peer_.local_ip;
    port = peer_.local_port;
  }
  // No socket: httplib only compares it with FD_SETSIZE before it would select() on it, which
  // it never does for this stream.
  socket_t socket() const override { return INVALID_SOCKET; }

  std::string& answer() { return answer_; }

 private:
  const std::string request_;
  size_t read_ = 0;
  const HttpRoutes::Peer& peer_;
  std::string answer_;
};

const char* Reason(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

}  // namespace

void HttpRoutes::SetAnswerHeaders(const httplib::Headers& headers) {
  answer_headers_ = headers;
  set_default_headers(headers);
}

HttpRoutes::Answer HttpRoutes::Handle(std::string request, const Peer& peer, bool close) {
  Exchange exchange(std::move(request), peer);
  bool closed = false;
  try {
    const bool answered = process_request(exchange, close, closed, nullptr);
    return Answer{std::move(exchange.answer()), answered && !closed && !close};
  } catch (const std::exception& e) {
    spdlog::warn("http: a request from {}:{} failed: {}", peer.remote_ip, peer.remote_port,
                 e.what());
  } catch (...) {
    spdlog::warn("http: a request from {}:{} failed", peer.remote_ip, peer.remote_port);
  }
  return Answer{Refusal(500, "internal error"), false};
}

std::string HttpRoutes::Refusal(int status, const std::string& message) const {
  const std::string body = nlohmann::json{{"error", message}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) + "\r\n";
  for (const auto& [name, value] : answer_headers_) out += name + ": " + value + "\r\n";
  out += "Cache-Control: no-store\r\nConnection: close\r\nContent-Type: application/json\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  return out;
}

}  // namespace benchlab
