// A daemon's gRPC port is its own, and its threads are counted.
//
// On Linux gRPC sets SO_REUSEPORT on its listening sockets by default: a second coordinator (or
// agent) started on an address already served would bind it without error, and the kernel would
// share the agents' connections between the two daemons and their databases. Their HTTP servers
// get the same from HttpServer::Bind (rpc/http_server.h).
//
// gRPC's synchronous server runs every call on a thread of its own and starts threads as calls
// come, without a bound: a client opening 2,000 streams on one channel made the coordinator run
// 2,022 threads. LimitServerThreads caps them with a ResourceQuota; a call that finds every
// thread busy is answered RESOURCE_EXHAUSTED ("Server Threadpool Exhausted") by gRPC itself.
// Used by the coordinator's and the agent's servers.
#pragma once

#include <grpcpp/server_builder.h>

namespace benchlab {

// Turns SO_REUSEPORT off for the builder's ports, so BuildAndStart fails on a port in use.
void SetExclusivePort(grpc::ServerBuilder& builder);

// gRPC's own log lines (a bind that failed, with gRPC's internal error chain: some 600
// characters) go to benchlab's log at level debug with gRPC's file:line, instead of straight to
// stderr: the daemon says what failed once, in words and in its log format (docs/logging.md),
// and `--log-format json` leaves nothing but JSON on stderr. Process-wide; call once, before the
// first gRPC call (RunBenchlab does).
void RouteGrpcLogging();

// At most `max_threads` threads serve the builder's calls, its polling threads included
// (at least 2: one polls while another runs a call).
void LimitServerThreads(grpc::ServerBuilder& builder, int max_threads);

}  // namespace benchlab
