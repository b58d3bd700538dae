// A daemon's gRPC port is its own. On Linux gRPC sets SO_REUSEPORT on its listening sockets by
// default: a second coordinator (or agent) started on an address already served would bind it
// without error, and the kernel would share the agents' connections between the two daemons and
// their databases. Used by the coordinator's and the agent's servers; their HTTP servers get the
// same from HttpServer::Bind (rpc/http_server.h).
#pragma once

#include <grpcpp/server_builder.h>

namespace benchlab {

// Turns SO_REUSEPORT off for the builder's ports, so BuildAndStart fails on a port in use.
void SetExclusivePort(grpc::ServerBuilder& builder);

}  // namespace benchlab
