// gRPC channels with benchlab's message limit and keepalive. gRPC refuses messages over 4 MiB by
// default, less than the report (GetReport) or the window list (ListWindows) of a long campaign,
// and than the figures of a long window; benchlab's channels and the coordinator's server take
// messages up to kMaxGrpcMessageBytes both ways (docs/api.md, "Message size").
//
// Keepalive (docs/fleet.md, "Partitions"): a channel pings its peer every kKeepaliveTimeMs and
// drops the connection when a ping is not answered within kKeepaliveTimeoutMs, so a call across
// a link that went silent fails with UNAVAILABLE within their sum rather than at its deadline;
// after a failed connection attempt it tries again at most kMaxReconnectBackoffMs later (gRPC's
// own cap is 120 s), so a healed link is used again within that. Servers must let clients ping
// that often (SetServerKeepalive), or they answer with a `too_many_pings` GOAWAY.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/server_builder.h>

#include <memory>
#include <string>

namespace benchlab {

inline constexpr int kMaxGrpcMessageBytes = 64 << 20;
inline constexpr int kKeepaliveTimeMs = 2000;
inline constexpr int kKeepaliveTimeoutMs = 5000;
inline constexpr int kMaxReconnectBackoffMs = 2000;

// A channel to HOST:PORT that sends and receives messages up to kMaxGrpcMessageBytes, with
// keepalive and the reconnect cap above, over `credentials` (mutual TLS, rpc/tls.h), or in
// plaintext when they are null.
std::shared_ptr<grpc::Channel> MakeChannel(
    const std::string& address, std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr);

// Lets the server's clients ping as often as MakeChannel's channels do (every second at most,
// with or without calls in flight, never counted as abuse), and has the server ping them with
// the same keepalive, so a call whose client vanished is cancelled.
void SetServerKeepalive(grpc::ServerBuilder& builder);

}  // namespace benchlab
