// gRPC channels with benchlab's message limit and keepalive. gRPC refuses messages over 4 MiB by
// default, less than the report (GetReport) or the window list (ListWindows) of a long campaign,
// and than the figures of a long window; benchlab's channels and the coordinator's server take
// messages up to kMaxGrpcMessageBytes both ways (docs/api.md, "Message size").
// Every channel has the fleet's keepalive (rpc/keepalive.h).
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>

#include "rpc/keepalive.h"

namespace benchlab {

inline constexpr int kMaxGrpcMessageBytes = 64 << 20;

// A channel to HOST:PORT that sends and receives messages up to kMaxGrpcMessageBytes, with
// keepalive and the reconnect cap (rpc/keepalive.h), over `credentials` (mutual TLS, rpc/tls.h), or
// in plaintext when they are null.
std::shared_ptr<grpc::Channel> MakeChannel(
    const std::string& address, std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr);

}  // namespace benchlab
