// RpcMetrics on a real gRPC server in process: every call is counted by method and status code
// and timed; names the server does not know become "unknown", so labels stay a fixed set.
#include "rpc/metrics_interceptor.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <string>

#include "benchlab/v1/coordinator.grpc.pb.h"

namespace benchlab {
namespace {

std::string Text(const prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

TEST(RpcMetricsTest, CountsAndTimesEachCallByMethodAndCode) {
  prometheus::Registry registry;
  RpcMetrics metrics(registry);
  v1::Coordinator::Service unimplemented;  // every method answers UNIMPLEMENTED
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&unimplemented);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> counted;
  counted.push_back(metrics.Factory());
  builder.experimental().SetInterceptorCreators(std::move(counted));
  auto server = builder.BuildAndStart();
  ASSERT_TRUE(server);
  auto stub = v1::Coordinator::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  for (int i = 0; i < 2; ++i) {
    grpc::ClientContext context;
    v1::ListAgentsReply reply;
    EXPECT_EQ(stub->ListAgents(&context, {}, &reply).error_code(), grpc::StatusCode::UNIMPLEMENTED);
  }
  server->Shutdown();
  server->Wait();

  const std::string text = Text(registry);
  EXPECT_NE(text.find("grpc_server_handled_total{grpc_code=\"Unimplemented\",grpc_method="
                      "\"ListAgents\",grpc_service=\"benchlab.v1.Coordinator\",grpc_type="
                      "\"unary\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("grpc_server_handling_seconds_count{grpc_method=\"ListAgents\","
                      "grpc_service=\"benchlab.v1.Coordinator\",grpc_type=\"unary\"} 2\n"),
            std::string::npos)
      << text;
}

TEST(RpcMetricsTest, AMethodTheServerDoesNotHaveIsUnknown) {
  prometheus::Registry registry;
  RpcMetrics metrics(registry);
  metrics.Record(grpc::experimental::ServerRpcInfo::Type::UNARY, "/made.Up/Anything",
                 grpc::StatusCode::UNIMPLEMENTED, 0.001);
  metrics.Record(grpc::experimental::ServerRpcInfo::Type::UNARY, "garbage",
                 grpc::StatusCode::UNIMPLEMENTED, 0.001);
  const std::string text = Text(registry);
  EXPECT_NE(text.find("grpc_server_handled_total{grpc_code=\"Unimplemented\",grpc_method="
                      "\"unknown\",grpc_service=\"unknown\",grpc_type=\"unary\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("Made"), std::string::npos) << text;
  EXPECT_EQ(text.find("Anything"), std::string::npos) << text;
}

TEST(RpcMetricsTest, CodesAreSpelledAsGoSpellsThem) {
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::OK), "OK");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::CANCELLED), "Canceled");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::DEADLINE_EXCEEDED), "DeadlineExceeded");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::RESOURCE_EXHAUSTED), "ResourceExhausted");
}

}  // namespace
}  // namespace benchlab
