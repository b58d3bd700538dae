// The one mapping between benchlab's Status (common/status.h) and gRPC's status, for the agent's
// and the coordinator's services and for the coordinator's calls to agents (docs/api.md,
// "Errors").
//
// A handler's status carries a mark in its binary details ("benchlab:<code>"), so a caller can
// tell an error the peer's code returned from one the transport made: UNAVAILABLE from a handler
// (a name that did not resolve, a thread that could not start) is that call's failure, while
// UNAVAILABLE without the mark means the peer could not be reached or went away mid-call. Free
// functions on values: safe from any thread.
#pragma once

#include <grpcpp/support/status.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace benchlab::rpc {

// The most a status message takes once gRPC has encoded it for the wire (grpc-message is
// percent-encoded: a byte outside printable ASCII, and '%', become three). gRPC clients refuse
// metadata over 8 KiB: a longer message, such as a campaign error listing 5,000 targets, reached
// the client as "received initial metadata size exceeds limit" instead of the error.
inline constexpr size_t kMaxStatusMessageBytes = 4096;

// `message` as it may leave: whole when it fits in `limit` encoded bytes, else its beginning,
// cut at a character boundary, and " ... and 12,345 more bytes".
std::string BoundStatusMessage(std::string_view message, size_t limit = kMaxStatusMessageBytes);

// kOk -> OK; kInvalidArgument -> INVALID_ARGUMENT; kNotFound -> NOT_FOUND; kAlreadyExists ->
// ALREADY_EXISTS; kFailedPrecondition -> FAILED_PRECONDITION; kDeadlineExceeded ->
// DEADLINE_EXCEEDED; kUnavailable -> UNAVAILABLE; kResourceExhausted -> RESOURCE_EXHAUSTED;
// kPermissionDenied -> PERMISSION_DENIED; kCancelled -> CANCELLED; kUnauthenticated ->
// UNAUTHENTICATED; kIoError, kInternal -> INTERNAL. The message is kept, bounded by
// BoundStatusMessage; every non-OK status gets the handler mark.
grpc::Status ToGrpcStatus(const Status& status);

// The same, its mark naming also `reason` ("benchlab:<code>/<reason>"): what the caller acts on
// beyond the code, [a-z_]+. kBuildFailedReason: StartTarget's commit did not build
// (docs/agent.md, "Builds"), which the coordinator records as the window's step "build".
inline constexpr std::string_view kBuildFailedReason = "build_failed";
grpc::Status ToGrpcStatus(const Status& status, std::string_view reason);

// The reason a handler's mark names; "" when it names none or the status has no mark.
std::string HandlerReason(const grpc::Status& status);

// A status a call ended with, as a benchlab Status: the handler's own code when it carries the
// mark, else the code mapped back from gRPC's (UNKNOWN and codes without a match: kInternal).
Status FromGrpcStatus(const grpc::Status& status);

// Whether a handler on the peer returned this status (it carries the mark).
bool FromHandler(const grpc::Status& status);

// Whether the call failed because the peer could not be reached or the connection broke:
// UNAVAILABLE without the handler mark.
bool TransportLost(const grpc::Status& status);

// The gRPC code's name as the protocol spells it: "UNAVAILABLE", "DEADLINE_EXCEEDED", ...
const char* GrpcCodeName(grpc::StatusCode code);

}  // namespace benchlab::rpc
