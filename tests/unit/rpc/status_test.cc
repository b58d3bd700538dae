#include "rpc/status.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <string>

#include "benchlab/v1/agent.grpc.pb.h"
#include "common/parse.h"

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

TEST(RpcStatus, AReasonRidesWithTheMarkAndKeepsTheCode) {
  grpc::Status sent =
      ToGrpcStatus(Status::FailedPrecondition("build of abc failed"), kBuildFailedReason);
  EXPECT_EQ(sent.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(FromHandler(sent));
  EXPECT_EQ(HandlerReason(sent), "build_failed");
  EXPECT_EQ(FromGrpcStatus(sent).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(FromGrpcStatus(sent).message(), "build of abc failed");
  // No reason, an unmarked status (a reason-looking text from elsewhere), OK: none.
  EXPECT_EQ(HandlerReason(ToGrpcStatus(Status::FailedPrecondition("x"))), "");
  EXPECT_EQ(HandlerReason(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "x",
                                       "other:failed_precondition/build_failed")),
            "");
  EXPECT_TRUE(ToGrpcStatus(Status::Ok(), kBuildFailedReason).ok());
  EXPECT_EQ(HandlerReason(grpc::Status::OK), "");
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

size_t Encoded(const std::string& message) {
  size_t n = 0;
  for (char c : message) {
    const auto u = static_cast<unsigned char>(c);
    n += u >= 0x20 && u <= 0x7e && u != '%' ? 1 : 3;
  }
  return n;
}

TEST(RpcStatus, ALongMessageIsCutWithACount) {
  const std::string fits(kMaxStatusMessageBytes, 'x');
  EXPECT_EQ(BoundStatusMessage(fits), fits);
  std::string names;
  for (int i = 0; i < 5000; ++i) names += (i == 0 ? "" : ", ") + ("t" + std::to_string(i));
  const std::string cut = BoundStatusMessage("expected one of (" + names + ")");
  EXPECT_LE(Encoded(cut), kMaxStatusMessageBytes);
  EXPECT_EQ(cut.rfind("expected one of (t0, t1, t2, ", 0), 0u);
  const size_t kept = cut.find(" ... and ");
  ASSERT_NE(kept, std::string::npos);
  const size_t total = names.size() + 18;
  EXPECT_EQ(cut.substr(kept), " ... and " + FormatCount(total - kept) + " more bytes");
  EXPECT_GT(kept, kMaxStatusMessageBytes - 64);
}

// Percent-encoding makes each byte of "é" three: the bound counts what goes on the wire, and never
// cuts inside a character.
TEST(RpcStatus, TheBoundCountsEncodedBytesAndKeepsCharactersWhole) {
  std::string accents;
  for (int i = 0; i < 3000; ++i) accents += "\xc3\xa9";
  const std::string cut = BoundStatusMessage(accents);
  EXPECT_LE(Encoded(cut), kMaxStatusMessageBytes);
  const size_t kept = cut.find(" ... and ");
  ASSERT_NE(kept, std::string::npos);
  EXPECT_EQ(kept % 2, 0u) << "cut inside a character";
  EXPECT_GT(kept, 600u);
  EXPECT_EQ(BoundStatusMessage("100% sure"), "100% sure");
}

// Answers every Mark with a 60 KB error, as a campaign listing 5,000 names would make.
class VerboseService final : public v1::Agent::Service {
 public:
  grpc::Status Mark(grpc::ServerContext*, const v1::MarkRequest*, v1::MarkReply*) override {
    std::string names;
    for (int i = 0; i < 5000; ++i) names += ", target-" + std::to_string(i);
    return ToGrpcStatus(Status::InvalidArgument("campaign.toml:3: unknown" + names));
  }
};

// The client gets the handler's error, cut, where it used to get RESOURCE_EXHAUSTED "received
// initial metadata size exceeds limit" from its own gRPC.
TEST(RpcStatus, ALongErrorReachesTheClientReadable) {
  VerboseService service;
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  auto server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto stub = v1::Agent::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::MarkReply reply;
  grpc::Status status = stub->Mark(&ctx, {}, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(status.error_message().rfind("campaign.toml:3: unknown, target-0, target-1", 0), 0u)
      << status.error_message().substr(0, 200);
  EXPECT_NE(status.error_message().find(" more bytes"), std::string::npos);
  EXPECT_EQ(FromGrpcStatus(status).code(), StatusCode::kInvalidArgument);
  server->Shutdown();
}

TEST(RpcStatus, CodeNames) {
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::UNAVAILABLE), "UNAVAILABLE");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::DEADLINE_EXCEEDED), "DEADLINE_EXCEEDED");
}

}  // namespace
}  // namespace benchlab::rpc
