#include "rpc/http_server.h"

#include <sys/socket.h>

#include <chrono>

namespace benchlab {

Result<uint16_t> BindHttp(httplib::Server& server, const HostPort& listen) {
  // httplib's default sets SO_REUSEPORT as well, with which a second server binds a port already
  // listening and the kernel shares its connections between the two: a second coordinator on the
  // same --http port would answer half the dashboard's requests. SO_REUSEADDR alone still binds
  // a port whose old connections linger in TIME_WAIT after a restart.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  int port = listen.port;
  if (port == 0) {
    port = server.bind_to_any_port(listen.host);
  } else if (!server.bind_to_port(listen.host, port)) {
    port = -1;
  }
  if (port <= 0) return Status::Unavailable("cannot listen on " + listen.ToString());
  return static_cast<uint16_t>(port);
}

void ServeHttp(httplib::Server& server, std::thread& thread) {
  thread = std::thread([&server] { server.listen_after_bind(); });
  // httplib's stop() only stops a server that is running: wait until it is (2 s at most).
  for (int i = 0; i < 2000 && !server.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace benchlab
