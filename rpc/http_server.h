// Serving an httplib::Server on its own thread: the coordinator's dashboard and API
// (coordinator/server/http_api.h) and an agent's /metrics (agent/server/agent_metrics.h) both
// bind first, so that a port taken or an address not local is an error at start, and then serve.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <thread>

#include "common/parse.h"
#include "common/status.h"

namespace benchlab {

// Binds `server` to `listen`, or to a free port of its host when the port is 0. Returns the port
// bound; Unavailable when the address cannot be bound (in use, also by another benchlab, or not
// an address of this host).
Result<uint16_t> BindHttp(httplib::Server& server, const HostPort& listen);

// Serves a bound `server` on a new thread, stored in `thread`, and returns once it is running, so
// that a stop() right after cannot miss it and leave the thread serving. The caller stops the
// server and joins the thread.
void ServeHttp(httplib::Server& server, std::thread& thread);

}  // namespace benchlab
