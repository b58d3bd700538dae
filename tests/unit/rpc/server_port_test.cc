#include "rpc/server_port.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "benchlab/v1/agent.grpc.pb.h"

namespace benchlab {
namespace {

// A service whose calls all answer UNIMPLEMENTED: a server needs one to start.
v1::Agent::Service unimplemented;

std::unique_ptr<grpc::Server> Serve(const std::string& address, int* port) {
  grpc::ServerBuilder builder;
  builder.RegisterService(&unimplemented);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), port);
  SetExclusivePort(builder);
  return builder.BuildAndStart();
}

TEST(ServerPortTest, ASecondServerOnAPortInUseDoesNotStart) {
  int first_port = 0;
  auto first = Serve("127.0.0.1:0", &first_port);
  ASSERT_NE(first, nullptr);
  ASSERT_GT(first_port, 0);

  int second_port = 0;
  auto second = Serve("127.0.0.1:" + std::to_string(first_port), &second_port);
  EXPECT_TRUE(second == nullptr || second_port == 0)
      << "a second server bound 127.0.0.1:" << first_port << " beside the first";
  if (second) second->Shutdown();
  first->Shutdown();
}

TEST(ServerPortTest, APortFreedCanBeServedAgain) {
  int port = 0;
  auto first = Serve("127.0.0.1:0", &port);
  ASSERT_NE(first, nullptr);
  first->Shutdown();
  first.reset();
  int again = 0;
  auto second = Serve("127.0.0.1:" + std::to_string(port), &again);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(again, port);
  second->Shutdown();
}

}  // namespace
}  // namespace benchlab
