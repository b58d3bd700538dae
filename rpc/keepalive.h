// gRPC keepalive for every fleet channel and server (docs/fleet.md, "Partitions"): a channel
// pings its peer every kKeepaliveTimeMs and drops the connection when a ping is not answered
// within kKeepaliveTimeoutMs, so a call across a link that went silent fails with UNAVAILABLE
// within their sum rather than at its deadline; after a failed connection attempt it tries again
// at most kMaxReconnectBackoffMs later (gRPC's own cap is 120 s), so a healed link is used again
// within that. Servers must let clients ping that often (SetServerKeepalive), or they answer
// with a `too_many_pings` GOAWAY. Used by the coordinator's channels and server and by the
// agent's channel to the coordinator and its server.
#pragma once

#include <grpcpp/server_builder.h>
#include <grpcpp/support/channel_arguments.h>

namespace benchlab {

inline constexpr int kKeepaliveTimeMs = 2000;
inline constexpr int kKeepaliveTimeoutMs = 5000;
inline constexpr int kMaxReconnectBackoffMs = 2000;

// Adds the keepalive and the reconnect cap above to a channel's arguments.
void AddKeepalive(grpc::ChannelArguments& args);

// Lets the server's clients ping as often as AddKeepalive's channels do (every second at most,
// with or without calls in flight, never counted as abuse), and has the server ping them with
// the same keepalive, so a call whose client vanished is cancelled.
void SetServerKeepalive(grpc::ServerBuilder& builder);

}  // namespace benchlab
