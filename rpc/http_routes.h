// HttpRoutes: cpp-httplib's Server used for its routing alone. The HTTP front (rpc/http_server.h)
// reads a request whole from its client and Handle runs httplib's parsing, routes, file mounts
// and error handlers on those bytes in memory, returning the answer's bytes; no socket of
// httplib's is ever opened. Handle may run on several threads at once, as httplib's own workers
// did; configure the routes before the first.
#pragma once

#include <httplib.h>

#include <string>

namespace benchlab {

class HttpRoutes : public httplib::Server {
 public:
  // The connection a request came on, as the handlers see it (Request::remote_addr, ...).
  struct Peer {
    std::string remote_ip;
    int remote_port = 0;
    std::string local_ip;
    int local_port = 0;
  };
  struct Answer {
    std::string bytes;        // status line, headers and body
    bool keep_alive = false;  // false: the connection closes after it
  };

  // Headers of every answer: httplib's default headers, and those of Refusal's answers.
  void SetAnswerHeaders(const httplib::Headers& headers);

  // Answers the one complete request in `request` (head and body). With `close` the answer
  // says Connection: close. A request that throws past httplib's handlers is a 500.
  Answer Handle(std::string request, const Peer& peer, bool close);

  // An answer given without routing, for a request that cannot be read whole: `status`, the
  // answer headers, Connection: close and {"error": message}.
  std::string Refusal(int status, const std::string& message) const;

 private:
  httplib::Headers answer_headers_;
};

}  // namespace benchlab
