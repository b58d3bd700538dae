#include "rpc/status.h"

#include <gtest/gtest.h>

namespace benchlab::rpc {
namespace {

TEST(RpcStatus, EveryCodeGoesAndComesBack) {
  const StatusCode codes[] = {StatusCode::kInvalidArgument,   StatusCode::kNotFound,
                              StatusCode::kAlreadyExists,     StatusCode::kFailedPrecondition,
                              StatusCode::kDeadlineExceeded,  StatusCode::kUnavailable,
                              StatusCode::kIoError,           StatusCode::kInternal,
                              StatusCode::kResourceExhausted, StatusCode::kPermissionDenied,
                              StatusCode::kCancelled,         StatusCode::kUnauthenticated};
  for (StatusCode code : codes) {
    grpc::Status sent = ToGrpcStatus(Status(code, "why"));
    EXPECT_FALSE(sent.ok());
    EXPECT_EQ(sent.error_message(), "why");
    EXPECT_TRUE(FromHandler(sent));
    Status back = FromGrpcStatus(sent);
    EXPECT_EQ(back.code(), code) << StatusCodeName(code);
    EXPECT_EQ(back.message(), "why");
  }
  EXPECT_TRUE(ToGrpcStatus(Status::Ok()).ok());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
}

TEST(RpcStatus, GrpcCodesAreTheDocumentedOnes) {
  EXPECT_EQ(ToGrpcStatus(Status::Unavailable("x")).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(ToGrpcStatus(Status::IoError("x")).error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(ToGrpcStatus(Status::FailedPrecondition("x")).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(ToGrpcStatus(Status::DeadlineExceeded("x")).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(ToGrpcStatus(Status::Cancelled("x")).error_code(), grpc::StatusCode::CANCELLED);
}

TEST(RpcStatus, UnavailableFromAHandlerIsNotALostPeer) {
  // A name the agent could not resolve: the call's own failure, not the agent gone.
  EXPECT_FALSE(TransportLost(ToGrpcStatus(Status::Unavailable("resolving example: timed out"))));
  // What gRPC itself reports when the peer cannot be reached: no mark.
  grpc::Status transport(grpc::StatusCode::UNAVAILABLE, "failed to connect to all addresses");
  EXPECT_TRUE(TransportLost(transport));
  EXPECT_FALSE(FromHandler(transport));
  EXPECT_EQ(FromGrpcStatus(transport).code(), StatusCode::kUnavailable);
  EXPECT_FALSE(TransportLost(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "late")));
  EXPECT_FALSE(TransportLost(grpc::Status::OK));
}

TEST(RpcStatus, UnmarkedCodesMapBack) {
  EXPECT_EQ(FromGrpcStatus(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "")).code(),
            StatusCode::kDeadlineExceeded);
  EXPECT_EQ(FromGrpcStatus(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "")).code(),
            StatusCode::kInternal);
  EXPECT_EQ(FromGrpcStatus(grpc::Status(grpc::StatusCode::INTERNAL, "")).code(),
            StatusCode::kInternal);
  // A mark with a code this version does not know falls back to the gRPC code.
  EXPECT_EQ(
      FromGrpcStatus(grpc::Status(grpc::StatusCode::NOT_FOUND, "", "benchlab:new_code")).code(),
      StatusCode::kNotFound);
}

TEST(RpcStatus, CodeNames) {
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::UNAVAILABLE), "UNAVAILABLE");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::DEADLINE_EXCEEDED), "DEADLINE_EXCEEDED");
}

}  // namespace
}  // namespace benchlab::rpc
