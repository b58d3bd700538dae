#include "rpc/server_port.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

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

// Holds every DescribeHost call until released (or 10 s have passed).
class HeldService final : public v1::Agent::Service {
 public:
  grpc::Status DescribeHost(grpc::ServerContext*, const v1::DescribeHostRequest*,
                            v1::DescribeHostReply*) override {
    std::unique_lock lock(mu_);
    ++held_;
    cv_.notify_all();
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return released_; });
    return grpc::Status::OK;
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  int held() {
    std::lock_guard lock(mu_);
    return held_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int held_ = 0;
  bool released_ = false;
};

long Threads() {
  return std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                       std::filesystem::directory_iterator());
}

// 40 calls that each hold a thread: with the cap, the server runs at most 8 threads and answers
// the calls it has no thread for with RESOURCE_EXHAUSTED; without it, it started one per call.
TEST(ServerPortTest, ThreadsAreCappedAndCallsBeyondAreRefused) {
  constexpr int kCap = 8;
  constexpr int kCalls = 40;
  HeldService service;
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  LimitServerThreads(builder, kCap);
  auto server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto stub = v1::Agent::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  // The channel connects before the count starts, so its own threads are in the baseline.
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::StopTargetReply reply;
    stub->StopTarget(&ctx, {}, &reply);  // UNIMPLEMENTED, once the channel is up
  }
  const long before = Threads();

  grpc::CompletionQueue cq;
  struct Call {
    grpc::ClientContext ctx;
    v1::DescribeHostReply reply;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<v1::DescribeHostReply>> rpc;
  };
  std::vector<std::unique_ptr<Call>> calls;
  for (int i = 0; i < kCalls; ++i) {
    auto call = std::make_unique<Call>();
    call->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    call->rpc = stub->AsyncDescribeHost(&call->ctx, {}, &cq);
    call->rpc->Finish(&call->reply, &call->status, call.get());
    calls.push_back(std::move(call));
  }
  // Every call has either reached a thread or been refused.
  int done = 0;
  long most = Threads();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (service.held() + done < kCalls && std::chrono::steady_clock::now() < until) {
    void* tag = nullptr;
    bool ok = false;
    if (cq.AsyncNext(&tag, &ok, std::chrono::system_clock::now() + std::chrono::milliseconds(20)) ==
        grpc::CompletionQueue::GOT_EVENT) {
      ++done;
    }
    most = std::max(most, Threads());
  }
  const int held = service.held();
  service.Release();
  while (done < kCalls) {
    void* tag = nullptr;
    bool ok = false;
    ASSERT_TRUE(cq.Next(&tag, &ok));
    ++done;
  }
  int refused = 0;
  for (const auto& c : calls) {
    if (c->status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++refused;
    } else {
      EXPECT_TRUE(c->status.ok()) << c->status.error_message();
    }
  }
  EXPECT_LE(most - before, kCap) << held << " calls held at once";
  EXPECT_LT(held, kCap);
  EXPECT_EQ(refused, kCalls - held);
  server->Shutdown();
  cq.Shutdown();
}

}  // namespace
}  // namespace benchlab
