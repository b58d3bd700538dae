// A fake agent for tests of the scheduler: AnsweringAgent answers the calls of a window at once
// (a fixed self-test, conformance ok, stops, campaign ends and acknowledgements accepted), and a
// test's agent overrides what it measures or records. LoadResultEvent is RunLoad's RESULT event
// for a given load; Served serves an agent on a loopback port of its own.
#pragma once

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include <cstdint>
#include <memory>
#include <string>

#include "benchlab/v1/agent.grpc.pb.h"
#include "common/histogram.h"
#include "rpc/keepalive.h"

namespace benchlab {

class AnsweringAgent : public v1::Agent::Service {
 public:
  grpc::Status CheckHost(grpc::ServerContext*, const v1::CheckHostRequest*,
                         v1::CheckHostReply* reply) override {
    reply->set_selftest_wall_ms(10);
    return grpc::Status::OK;
  }
  grpc::Status CheckConformance(grpc::ServerContext*, const v1::CheckConformanceRequest*,
                                v1::CheckConformanceReply* reply) override {
    reply->set_ok(true);
    return grpc::Status::OK;
  }
  grpc::Status StopTarget(grpc::ServerContext*, const v1::StopTargetRequest*,
                          v1::StopTargetReply*) override {
    return grpc::Status::OK;
  }
  grpc::Status EndCampaign(grpc::ServerContext*, const v1::EndCampaignRequest*,
                           v1::EndCampaignReply*) override {
    return grpc::Status::OK;
  }
  grpc::Status Acknowledge(grpc::ServerContext*, const v1::AcknowledgeRequest*,
                           v1::AcknowledgeReply*) override {
    return grpc::Status::OK;
  }
};

// RunLoad's RESULT event: `requests` in one second at `rps`, each answered 200 in 100 us.
inline v1::RunLoadEvent LoadResultEvent(uint64_t requests, double rps) {
  v1::RunLoadEvent event;
  event.set_kind(v1::RunLoadEvent::RESULT);
  v1::LoadResult* result = event.mutable_result();
  Histogram latency;
  latency.RecordN(100, requests);
  result->set_requests(requests);
  result->set_duration_s(1);
  result->set_rps(rps);
  result->set_histogram(latency.Serialize());
  v1::StatusCount* ok = result->add_status_counts();
  ok->set_status(200);
  ok->set_count(requests);
  return event;
}

// Writes MEASURE_START, MEASURE_END and then `result` (LoadResultEvent).
inline void WriteLoad(grpc::ServerWriter<v1::RunLoadEvent>* writer,
                      const v1::RunLoadEvent& result) {
  v1::RunLoadEvent event;
  event.set_kind(v1::RunLoadEvent::MEASURE_START);
  writer->Write(event);
  event.set_kind(v1::RunLoadEvent::MEASURE_END);
  writer->Write(event);
  writer->Write(result);
}

// An agent of type A served on 127.0.0.1 (a port the kernel picks) until destroyed.
template <typename A>
struct Served {
  A agent;
  std::unique_ptr<grpc::Server> server;
  std::string address;

  Served() {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&agent);
    // As the real agent's server does: the scheduler's channels ping every 2 s.
    SetServerKeepalive(builder);
    server = builder.BuildAndStart();
    address = "127.0.0.1:" + std::to_string(port);
  }
  ~Served() { server->Shutdown(); }
};

}  // namespace benchlab
