// CoordinatorService: the coordinator's side of benchlab.v1.Coordinator. Agents register and
// heartbeat; clients submit campaigns, list them, watch one window by window, and list windows.
// gRPC calls it from its own threads; every method is thread-safe.
#pragma once

#include <optional>

#include "benchlab/v1/coordinator.grpc.pb.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/server/scheduler.h"
#include "coordinator/server/stream_slots.h"
#include "coordinator/store.h"
#include "rpc/handshake_refusals.h"
#include "tls/certificate.h"

namespace benchlab {

class CoordinatorBisections;  // coordinator/server/coordinator_bisect.h
class SeriesRemeasure;        // coordinator/server/series_remeasure.h
class TlsContext;             // rpc/tls.h

class CoordinatorService final : public v1::Coordinator::Service {
 public:
  // `tls`: the coordinator's mutual TLS, whose callers' certificates decide what they may call;
  // null on a plaintext (loopback) listener, where every caller may call everything.
  // `remeasure`: what RemeasureSeries asks to look at a series; null: that call is
  // FAILED_PRECONDITION. `bisections`: what StartBisection starts; null: that call is
  // FAILED_PRECONDITION.
  CoordinatorService(Store& store, AgentRegistry& agents, Scheduler& scheduler,
                     TlsContext* tls = nullptr, SeriesRemeasure* remeasure = nullptr,
                     CoordinatorBisections* bisections = nullptr);

  grpc::Status RegisterAgent(grpc::ServerContext* ctx, const v1::RegisterAgentRequest* req,
                             v1::RegisterAgentReply* reply) override;
  grpc::Status Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req,
                         v1::HeartbeatReply* reply) override;
  grpc::Status OfferResults(grpc::ServerContext* ctx, const v1::OfferResultsRequest* req,
                            v1::OfferResultsReply* reply) override;
  grpc::Status ListAgents(grpc::ServerContext* ctx, const v1::ListAgentsRequest* req,
                          v1::ListAgentsReply* reply) override;
  grpc::Status SubmitCampaign(grpc::ServerContext* ctx, const v1::SubmitCampaignRequest* req,
                              v1::SubmitCampaignReply* reply) override;
  grpc::Status CheckCampaign(grpc::ServerContext* ctx, const v1::SubmitCampaignRequest* req,
                             v1::CheckCampaignReply* reply) override;
  grpc::Status ListCampaigns(grpc::ServerContext* ctx, const v1::ListCampaignsRequest* req,
                             v1::ListCampaignsReply* reply) override;
  grpc::Status WatchCampaign(grpc::ServerContext* ctx, const v1::WatchCampaignRequest* req,
                             grpc::ServerWriter<v1::CampaignEvent>* writer) override;
  grpc::Status RerunWindows(grpc::ServerContext* ctx, const v1::RerunWindowsRequest* req,
                            v1::RerunWindowsReply* reply) override;
  grpc::Status GetReport(grpc::ServerContext* ctx, const v1::GetReportRequest* req,
                         v1::GetReportReply* reply) override;
  grpc::Status CancelCampaign(grpc::ServerContext* ctx, const v1::CancelCampaignRequest* req,
                              v1::CancelCampaignReply* reply) override;
  grpc::Status ListWindows(grpc::ServerContext* ctx, const v1::ListWindowsRequest* req,
                           v1::ListWindowsReply* reply) override;
  grpc::Status RemeasureSeries(grpc::ServerContext* ctx, const v1::RemeasureSeriesRequest* req,
                               v1::RemeasureSeriesReply* reply) override;
  // What `benchlab history`, `regressions` and `audit` print, made from the coordinator's store
  // by the functions those commands call on a database (series_views.h, audit_format.h).
  grpc::Status GetHistory(grpc::ServerContext* ctx, const v1::GetHistoryRequest* req,
                          v1::GetHistoryReply* reply) override;
  grpc::Status GetRegressions(grpc::ServerContext* ctx, const v1::GetRegressionsRequest* req,
                              v1::GetRegressionsReply* reply) override;
  grpc::Status GetAudit(grpc::ServerContext* ctx, const v1::GetAuditRequest* req,
                        v1::GetAuditReply* reply) override;
  // A bisection on a pair of agents (coordinator_bisect.h): started by operators, shown to
  // viewers as `benchlab bisect --status` shows one (text or JSON).
  grpc::Status StartBisection(grpc::ServerContext* ctx, const v1::StartBisectionRequest* req,
                              v1::StartBisectionReply* reply) override;
  grpc::Status GetBisection(grpc::ServerContext* ctx, const v1::GetBisectionRequest* req,
                            v1::GetBisectionReply* reply) override;

 private:
  // RegisterAgent once the caller may: `certificate` is the agent's (nullopt in plaintext).
  grpc::Status Register(const v1::RegisterAgentRequest* req,
                        const std::optional<CertificateInfo>& certificate,
                        v1::RegisterAgentReply* reply);

  Store& store_;
  AgentRegistry& agents_;
  Scheduler& scheduler_;
  TlsContext* const tls_;
  SeriesRemeasure* const remeasure_;
  CoordinatorBisections* const bisections_;
  // Each WatchCampaign stream holds one of gRPC's threads while it runs.
  StreamSlots watches_{kMaxWatchStreamsPerCaller, kMaxWatchStreams};
};

// The protocol's form of a stored window.
void WindowToProto(const WindowRow& row, int total_windows, v1::Window* out);

// Stores a handshake the coordinator's TLS refused (TlsContext::SetRefusalSink) in the audit
// trail: call "TLS handshake", outcome "refused", the certificate's identity (or "unknown"), its
// subject and serial, and why.
void AuditHandshakeRefusal(Store& store, const HandshakeRefusal& refusal);

}  // namespace benchlab
