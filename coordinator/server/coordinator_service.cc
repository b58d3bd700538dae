#include "coordinator/server/coordinator_service.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "analysis/bisect_report.h"
#include "analysis/report_format.h"
#include "common/clock.h"
#include "common/config_fields.h"
#include "common/log.h"
#include "coordinator/rerun.h"
#include "coordinator/server/agent_limits.h"
#include "coordinator/server/audit_format.h"
#include "coordinator/server/bisect_plan.h"
#include "coordinator/server/coordinator_bisect.h"
#include "coordinator/server/series_remeasure.h"
#include "coordinator/server/series_views.h"
#include "rpc/status.h"
#include "rpc/tls.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

bool Terminal(const std::string& state) {
  std::optional<CampaignState> known = ParseCampaignState(state);
  return known && Ended(*known);
}

void CampaignToProto(const CampaignRow& row, int finished, v1::CampaignInfo* out) {
  out->set_id(row.id);
  out->set_name(row.name);
  out->set_state(row.state);
  out->set_total_windows(row.total_windows);
  out->set_finished_windows(finished);
  out->set_created_at(row.created_at);
  out->set_finished_at(row.finished_at);
  out->set_error(row.error);
}

// Who may make each call (docs/security.md, "Roles"); with no TLS (loopback), everyone.
const std::set<Role> kAgents{Role::kAgent};
const std::set<Role> kOperators{Role::kOperator};
const std::set<Role> kReaders{Role::kViewer, Role::kOperator};

// What a RerunWindows call asks for, for the audit trail: "campaign x: invalid, failed" or
// "windows 4, 9".
std::string RerunSubject(const v1::RerunWindowsRequest& req) {
  std::string out = req.campaign().empty() ? "windows" : "campaign " + req.campaign();
  std::string what;
  if (req.invalid()) what += "invalid";
  if (req.failed()) what += std::string(what.empty() ? "" : ", ") + "failed";
  for (int i = 0; i < req.window_ids_size() && i < 20; ++i) {
    what += (what.empty() ? "" : ", ") + std::to_string(req.window_ids(i));
  }
  if (req.window_ids_size() > 20) what += ", ...";
  return what.empty() ? out : out + ": " + what;
}

// One call's entry in the audit trail (docs/security.md, "Audit"): a call refused for its
// certificate is stored at once; a call that changes something is stored when it ends (Done).
class CallAudit {
 public:
  // `ctx` may be null (the service's unit tests call it outside gRPC): a plaintext caller.
  CallAudit(Store& store, TlsContext* tls, grpc::ServerContext* ctx, const char* call,
            std::string subject)
      : store_(store), tls_(tls), ctx_(ctx), call_(call), subject_(std::move(subject)) {}

  // The caller's certificate must carry one of `roles` and, when `agent` is set, that agent's
  // name. With no TLS (a loopback listener) every caller may.
  grpc::Status Allow(const std::set<Role>& roles, const std::string& agent = "") {
    // A certificate refused here (revoked after its connection was made) is recorded under the
    // identity it names.
    auto who = ctx_ != nullptr ? CallerOf(*ctx_, tls_, &caller_)
                               : Result<std::optional<CertificateInfo>>(std::nullopt);
    if (!who.ok()) return Refuse(grpc::StatusCode::UNAUTHENTICATED, who.status().message());
    caller_ = *who;
    if (!caller_) return grpc::Status::OK;
    const std::string uri = IdentityUri(caller_->role, caller_->name);
    if (!roles.contains(caller_->role)) {
      return Refuse(grpc::StatusCode::PERMISSION_DENIED,
                    uri + " may not call " + call_ + "; it needs " + RolesWithArticle(roles) +
                        " certificate");
    }
    if (!agent.empty() && caller_->name != agent) {
      return Refuse(grpc::StatusCode::PERMISSION_DENIED,
                    uri + " may not act as agent \"" + agent + "\"");
    }
    return grpc::Status::OK;
  }

  const std::optional<CertificateInfo>& caller() const { return caller_; }
  // What the call turned out to be about, once known (a submitted campaign's name).
  void set_subject(std::string subject) { subject_ = std::move(subject); }

  // Stores how a call that changes something ended, and returns `status`.
  grpc::Status Done(const grpc::Status& status) {
    Record(status.ok() ? "ok" : "failed", status.ok() ? "" : status.error_message());
    return status;
  }

 private:
  grpc::Status Refuse(grpc::StatusCode code, const std::string& reason) {
    Record("refused", reason);
    return {code, reason};
  }

  void Record(const char* outcome, const std::string& reason) {
    AuditRow row;
    row.at = FormatIsoTime(store_.clock().WallNow());
    row.identity = caller_ ? IdentityUri(caller_->role, caller_->name)
                           : (tls_ != nullptr ? "unknown" : "plaintext");
    row.role = caller_ ? std::string(RoleName(caller_->role)) : "";
    // A context made outside a call has no peer to ask.
    row.peer = ctx_ != nullptr && ctx_->c_call() != nullptr ? ctx_->peer() : "";
    row.call = call_;
    row.subject = subject_;
    row.outcome = outcome;
    row.reason = reason;
    if (Status stored = store_.AppendAudit(row); !stored.ok()) {
      spdlog::error("audit: {} {} by {} ({}) not stored: {}", call_, outcome, row.identity,
                    row.peer, stored.message());
    }
  }

  Store& store_;
  TlsContext* const tls_;
  grpc::ServerContext* const ctx_;
  const char* const call_;
  std::string subject_;
  std::optional<CertificateInfo> caller_;
};

}  // namespace

void AuditHandshakeRefusal(Store& store, const HandshakeRefusal& refusal) {
  AuditRow row;
  row.at = FormatIsoTime(store.clock().WallNow());
  row.identity = refusal.identity.empty() ? "unknown" : refusal.identity;
  row.role = refusal.role;
  row.peer = refusal.peer;
  row.call = "TLS handshake";
  row.subject = "certificate " + refusal.subject + " (serial " + refusal.serial + ")";
  row.outcome = "refused";
  row.reason = DescribeRefusal(refusal);
  if (Status stored = store.AppendAudit(row); !stored.ok()) {
    spdlog::error("audit: a refused TLS handshake ({}) not stored: {}", row.reason,
                  stored.message());
  }
}

void WindowToProto(const WindowRow& row, int total_windows, v1::Window* out) {
  out->set_id(row.id);
  out->set_campaign(row.campaign);
  out->set_target(row.target);
  out->set_scenario(row.scenario);
  out->set_connections(row.connections);
  out->set_round(row.round);
  out->set_position(row.position);
  out->set_attempt(row.attempt);
  out->set_verdict(row.verdict);
  auto reasons = nlohmann::json::parse(row.reasons, nullptr, false);
  if (reasons.is_array()) {
    for (const auto& r : reasons) {
      if (r.is_string()) out->add_reasons(r.get<std::string>());
    }
  }
  out->set_started_at(row.started_at);
  out->set_ended_at(row.ended_at);
  out->set_requests(row.requests);
  out->set_rps(row.rps);
  out->set_p50_us(row.p50_us);
  out->set_p90_us(row.p90_us);
  out->set_p99_us(row.p99_us);
  out->set_p999_us(row.p999_us);
  out->set_max_us(row.max_us);
  out->set_errors(row.errors);
  out->set_server_cpu_s(row.server_cpu_s);
  out->set_cpu_us_per_request(row.cpu_us_per_request);
  out->set_rss_peak_kb(row.rss_peak_kb);
  out->set_server_agent(row.server_agent);
  out->set_load_agent(row.load_agent);
  out->set_total_windows(total_windows);
  out->set_load_level(row.load_level);
  out->set_noise(row.noise != 0);
  out->set_pair(row.pair);
}

CoordinatorService::CoordinatorService(Store& store, AgentRegistry& agents, Scheduler& scheduler,
                                       TlsContext* tls, SeriesRemeasure* remeasure,
                                       CoordinatorBisections* bisections)
    : store_(store),
      agents_(agents),
      scheduler_(scheduler),
      tls_(tls),
      remeasure_(remeasure),
      bisections_(bisections) {}

grpc::Status CoordinatorService::RegisterAgent(grpc::ServerContext* ctx,
                                               const v1::RegisterAgentRequest* req,
                                               v1::RegisterAgentReply* reply) {
  CallAudit audit(store_, tls_, ctx, "RegisterAgent", "agent " + req->name());
  if (grpc::Status allowed = audit.Allow(kAgents, req->name()); !allowed.ok()) return allowed;
  ScopedLogAgent about(req->name());  // the lines below are about this agent
  return audit.Done(Register(req, audit.caller(), reply));
}

grpc::Status CoordinatorService::Register(const v1::RegisterAgentRequest* req,
                                          const std::optional<CertificateInfo>& certificate,
                                          v1::RegisterAgentReply* reply) {
  if (Status valid = ValidateRegistration(*req); !valid.ok()) return rpc::ToGrpcStatus(valid);
  std::string holder;
  switch (agents_.Register(*req, &holder)) {
    case Admission::kRefused:
      return rpc::ToGrpcStatus(Status::PermissionDenied(
          "agent " + req->name() + " is registered by a live instance at " + holder +
          " (another instance proof, so another state directory); this one may take the name "
          "over once that one is lost (no heartbeat for its lease and grace, docs/fleet.md), or "
          "be given another name"));
    case Admission::kFull:
      return rpc::ToGrpcStatus(Status::ResourceExhausted(
          "the coordinator holds " + std::to_string(kMaxAgents) +
          " agents (kMaxAgents), none of them lost: agent " + req->name() + " cannot register"));
    case Admission::kRegistered:
    case Admission::kTakenOver:
      break;
  }
  if (certificate) {
    agents_.SetCertificateExpires(req->name(), FormatUtc(certificate->not_after));
    if (ExpiresSoon(*certificate)) {
      spdlog::warn("agent {}: its certificate ends {}; renew it with `benchlab ca issue`",
                   req->name(), FormatUtc(certificate->not_after));
    }
  }
  reply->set_lease_ms(agents_.lease().count());
  scheduler_.Notify();  // a campaign may be waiting for this agent
  return grpc::Status::OK;
}

namespace {

// PERMISSION_DENIED for a call under `name` with a proof other than the one it registered with.
grpc::Status NotTheInstance(const std::string& name) {
  return rpc::ToGrpcStatus(Status::PermissionDenied(
      "agent " + name + " is registered by another instance (instance_proof)"));
}

}  // namespace

grpc::Status CoordinatorService::OfferResults(grpc::ServerContext* ctx,
                                              const v1::OfferResultsRequest* req,
                                              v1::OfferResultsReply* reply) {
  CallAudit audit(store_, tls_, ctx, "OfferResults", "agent " + req->name());
  if (grpc::Status allowed = audit.Allow(kAgents, req->name()); !allowed.ok()) return allowed;
  ScopedLogAgent about(req->name());  // the lines below are about this agent
  if (Status valid = ValidateOffer(*req); !valid.ok()) return rpc::ToGrpcStatus(valid);
  switch (agents_.CheckProof(req->name(), req->instance_proof())) {
    case ProofCheck::kUnknown:
      return rpc::ToGrpcStatus(Status::FailedPrecondition("agent \"" + req->name() +
                                                          "\" is not registered: register first"));
    case ProofCheck::kWrongProof:
      return NotTheInstance(req->name());
    case ProofCheck::kMatches:
      break;
  }
  // Whatever an agent still holds in its spool is kept before it may delete it; the reply is its
  // only acknowledgement. What is not kept stays in the agent's spool.
  for (const auto& item : req->spooled()) {
    Status kept =
        store_.KeepAgentResult(req->name(), item.key(), item.payload(), kMaxKeptResultBytes);
    if (kept.ok()) {
      reply->add_acknowledged(item.key());
    } else {
      spdlog::warn("agent {}: offered result not kept: {}", req->name(), kept.message());
      if (kept.code() == StatusCode::kResourceExhausted) break;
    }
  }
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Heartbeat(grpc::ServerContext* ctx,
                                           const v1::HeartbeatRequest* req,
                                           v1::HeartbeatReply* reply) {
  CallAudit audit(store_, tls_, ctx, "Heartbeat", "agent " + req->name());
  if (grpc::Status allowed = audit.Allow(kAgents, req->name()); !allowed.ok()) return allowed;
  ScopedLogAgent about(req->name());  // the lines below are about this agent
  Status valid = ValidateInstanceProof(req->instance_proof(), "HeartbeatRequest");
  if (!valid.ok()) return rpc::ToGrpcStatus(valid);
  const ProofCheck check = agents_.Heartbeat(req->name(), req->instance_proof());
  if (check == ProofCheck::kWrongProof) return NotTheInstance(req->name());
  reply->set_known(check == ProofCheck::kMatches);
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::ListAgents(grpc::ServerContext* ctx, const v1::ListAgentsRequest*,
                                            v1::ListAgentsReply* reply) {
  CallAudit audit(store_, tls_, ctx, "ListAgents", "");
  if (grpc::Status allowed = audit.Allow(kReaders); !allowed.ok()) return allowed;
  for (auto& info : agents_.List()) *reply->add_agents() = std::move(info);
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::SubmitCampaign(grpc::ServerContext* ctx,
                                                const v1::SubmitCampaignRequest* req,
                                                v1::SubmitCampaignReply* reply) {
  CallAudit audit(store_, tls_, ctx, "SubmitCampaign", "campaign source " + req->source());
  if (grpc::Status allowed = audit.Allow(kOperators); !allowed.ok()) return allowed;
  return audit.Done([&]() -> grpc::Status {
    auto submitted = scheduler_.Submit(req->spec_toml(), req->source(), req->campaign_dir(),
                                       req->gates_mode(), req->profile());
    if (!submitted.ok()) return rpc::ToGrpcStatus(submitted.status());
    audit.set_subject("campaign " + submitted->name);
    reply->set_campaign_id(submitted->campaign_id);
    reply->set_name(submitted->name);
    reply->set_total_windows(submitted->total_windows);
    return grpc::Status::OK;
  }());
}

// Read-only: what Submit would refuse, and what a campaign would wait for. Open to viewers,
// who may list the agents' catalogues anyway (ListAgents).
grpc::Status CoordinatorService::CheckCampaign(grpc::ServerContext* ctx,
                                               const v1::SubmitCampaignRequest* req,
                                               v1::CheckCampaignReply* reply) {
  CallAudit audit(store_, tls_, ctx, "CheckCampaign", "campaign source " + req->source());
  if (grpc::Status allowed = audit.Allow(kReaders); !allowed.ok()) return allowed;
  auto check = scheduler_.Check(req->spec_toml(), req->source(), req->campaign_dir());
  if (!check.ok()) return rpc::ToGrpcStatus(check.status());
  for (const std::string& problem : check->problems) reply->add_problems(problem);
  reply->set_total_windows(check->total_windows);
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::ListCampaigns(grpc::ServerContext* ctx,
                                               const v1::ListCampaignsRequest*,
                                               v1::ListCampaignsReply* reply) {
  CallAudit audit(store_, tls_, ctx, "ListCampaigns", "");
  if (grpc::Status allowed = audit.Allow(kReaders); !allowed.ok()) return allowed;
  auto campaigns = store_.ListCampaigns();
  if (!campaigns.ok()) return rpc::ToGrpcStatus(campaigns.status());
  for (const auto& row : *campaigns) {
    // Counted in SQL: reading every window of every campaign to count them held the store's
    // lock, and the coordinator's memory, in proportion to all windows ever stored.
    auto counted = store_.CountWindows(row.id);
    CampaignToProto(row, counted.ok() ? static_cast<int>(counted->first) : 0,
                    reply->add_campaigns());
  }
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::WatchCampaign(grpc::ServerContext* ctx,
                                               const v1::WatchCampaignRequest* req,
                                               grpc::ServerWriter<v1::CampaignEvent>* writer) {
  CallAudit audit(store_, tls_, ctx, "WatchCampaign", "campaign " + req->name());
  if (grpc::Status allowed = audit.Allow(kReaders); !allowed.ok()) return allowed;
  // Counted per certificate, or per connection on a plaintext (loopback) listener.
  const std::string caller =
      audit.caller() ? IdentityUri(audit.caller()->role, audit.caller()->name)
                     : (ctx->c_call() != nullptr ? ctx->peer() : std::string("plaintext"));
  auto slot = watches_.Take(caller, "WatchCampaign streams");
  if (!slot.ok()) return rpc::ToGrpcStatus(slot.status());
  int64_t last_id = req->after_id();
  int sent = 0;
  int64_t index_base = 0;
  bool first = true;
  std::set<std::string> announced;  // claims already sent as `started`
  std::string waiting;              // the last `waiting` sent
  while (!ctx->IsCancelled()) {
    uint64_t seen = scheduler_.version();
    auto campaign = store_.FindCampaign(req->name());
    if (!campaign.ok()) return rpc::ToGrpcStatus(campaign.status());
    if (!*campaign) {
      return rpc::ToGrpcStatus(Status::NotFound("no campaign \"" + req->name() + "\""));
    }
    if (first) {
      // A resumed watch numbers its windows after those the client has already seen.
      WindowFilter earlier;
      earlier.campaign = req->name();
      auto seen_before = store_.ListWindows(earlier);
      if (!seen_before.ok()) return rpc::ToGrpcStatus(seen_before.status());
      for (const auto& row : *seen_before) index_base += row.id <= last_id ? 1 : 0;
      first = false;
    }
    WindowFilter filter;
    filter.campaign = req->name();
    filter.after_id = last_id;
    auto windows = store_.ListWindows(filter);
    if (!windows.ok()) return rpc::ToGrpcStatus(windows.status());
    for (const auto& row : *windows) {
      v1::CampaignEvent event;
      WindowToProto(row, (*campaign)->total_windows, event.mutable_window());
      // Windows are stored in plan order.
      event.mutable_window()->set_index(static_cast<int>(index_base + sent));
      if (!writer->Write(event)) return grpc::Status::CANCELLED;
      last_id = row.id;
      ++sent;
    }
    // The window running now, once per claim (a claim stays until its attempt is stored).
    auto claims = store_.ListClaims((*campaign)->id);
    if (!claims.ok()) return rpc::ToGrpcStatus(claims.status());
    for (const WindowClaim& claim : *claims) {
      std::string id = claim.key.pair + "|" + claim.key.target + "|" + claim.key.scenario + "|" +
                       claim.key.load_level + "|" + std::to_string(claim.key.round) + "|" +
                       std::to_string(claim.key.position) + "|" + std::to_string(claim.attempt);
      if (!announced.insert(id).second) continue;
      v1::CampaignEvent event;
      v1::WindowStarted* started = event.mutable_started();
      started->set_target(claim.key.target);
      started->set_scenario(claim.key.scenario);
      started->set_load_level(claim.key.load_level);
      started->set_round(claim.key.round);
      started->set_attempt(claim.attempt);
      started->set_pair(claim.key.pair);
      started->set_noise(claim.noise);
      started->set_server_agent(claim.server_agent);
      started->set_load_agent(claim.load_agent);
      if (!writer->Write(event)) return grpc::Status::CANCELLED;
    }
    if (std::string why = scheduler_.WaitingFor((*campaign)->id); why != waiting) {
      v1::CampaignEvent event;
      event.set_waiting(why);
      if (!writer->Write(event)) return grpc::Status::CANCELLED;
      waiting = std::move(why);
    }
    // Windows stored before the state changed were read above, so none is missed.
    if (Terminal((*campaign)->state)) {
      v1::CampaignEvent event;
      CampaignToProto(**campaign, sent, event.mutable_finished());
      writer->Write(event);
      return grpc::Status::OK;
    }
    scheduler_.WaitForChange(seen, std::chrono::milliseconds(500));
  }
  return grpc::Status::CANCELLED;
}

grpc::Status CoordinatorService::ListWindows(grpc::ServerContext* ctx,
                                             const v1::ListWindowsRequest* req,
                                             v1::ListWindowsReply* reply) {
  CallAudit audit(store_, tls_, ctx, "ListWindows", "campaign " + req->campaign());
  if (grpc::Status allowed = audit.Allow(kReaders); !allowed.ok()) return allowed;
  WindowFilter filter;
  if (!req->campaign().empty()) filter.campaign = req->campaign();
  auto windows = store_.ListWindows(filter);
  if (!windows.ok()) return rpc::ToGrpcStatus(windows.status());
  for (const auto& row : *windows) WindowToProto(row, 0, reply->add_windows());
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::RerunWindows(grpc::ServerContext* ctx,
                                              const v1::RerunWindowsRequest* req,
                                              v1::RerunWindowsReply* reply) {
  CallAudit audit(store_, tls_, ctx, "RerunWindows", RerunSubject(*req));
  if (grpc::Status allowed = audit.Allow(kOperators); !allowed.ok()) return allowed;
  return audit.Done([&]() -> grpc::Status {
    RerunSelection selection;
    selection.window_ids.assign(req->window_ids().begin(), req->window_ids().end());
    selection.invalid = req->invalid();
    selection.failed = req->failed();
    selection.campaign = req->campaign();
    auto requested = RequestRerun(store_, selection);
    if (!requested.ok()) return rpc::ToGrpcStatus(requested.status());
    for (int64_t id : requested->window_ids) reply->add_window_ids(id);
    for (const auto& name : requested->campaigns) reply->add_campaigns(name);
    scheduler_.Notify();
    return grpc::Status::OK;
  }());
}

grpc::Status CoordinatorService::GetReport(grpc::ServerContext* ctx,
                                           const v1::GetReportRequest* req,
                                           v1::GetReportReply* reply) {
  CallAudit audit(store_, tls_, ctx, "GetReport", "campaign " + req->campaign());
  if (grpc::Status allowed = audit.Allow(kReaders); !allowed.ok()) return allowed;
  auto input = LoadReportInput(store_, req->campaign());
  if (!input.ok()) return rpc::ToGrpcStatus(input.status());
  auto text = FormatReport(*input, req->format().empty() ? "md" : req->format());
  if (!text.ok()) return rpc::ToGrpcStatus(text.status());
  reply->set_text(std::move(*text));
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::CancelCampaign(grpc::ServerContext* ctx,
                                                const v1::CancelCampaignRequest* req,
                                                v1::CancelCampaignReply* reply) {
  CallAudit audit(store_, tls_, ctx, "CancelCampaign", "campaign " + req->name());
  if (grpc::Status allowed = audit.Allow(kOperators); !allowed.ok()) return allowed;
  return audit.Done([&]() -> grpc::Status {
    auto campaign = store_.FindCampaign(req->name());
    if (!campaign.ok()) return rpc::ToGrpcStatus(campaign.status());
    if (!*campaign) {
      return rpc::ToGrpcStatus(Status::NotFound("no campaign \"" + req->name() + "\""));
    }
    const std::string state = (*campaign)->state;
    if (Terminal(state)) {
      return rpc::ToGrpcStatus(
          Status::FailedPrecondition("campaign \"" + req->name() + "\" is already " + state));
    }
    Status cancelled = store_.SetCampaignState((*campaign)->id, CampaignState::kCancelled);
    if (!cancelled.ok()) return rpc::ToGrpcStatus(cancelled);
    reply->set_previous_state(state);
    scheduler_.Notify();
    return grpc::Status::OK;
  }());
}

grpc::Status CoordinatorService::RemeasureSeries(grpc::ServerContext* ctx,
                                                 const v1::RemeasureSeriesRequest* req,
                                                 v1::RemeasureSeriesReply* reply) {
  CallAudit audit(
      store_, tls_, ctx, "RemeasureSeries",
      "series " + req->series().substr(0, 64) +
          (req->max_rounds() != 0 ? ", at most " + std::to_string(req->max_rounds()) + " rounds"
                                  : ""));
  if (grpc::Status allowed = audit.Allow(kOperators); !allowed.ok()) return allowed;
  return audit.Done([&]() -> grpc::Status {
    if (!config::IsName(req->series())) {
      return rpc::ToGrpcStatus(Status::InvalidArgument(
          "series: expected a name (lowercase letters, digits and -, 1 to 64 characters)"));
    }
    const int lowest = RemeasureSettings{}.min_rounds;
    if (req->max_rounds() != 0 && (req->max_rounds() < lowest || req->max_rounds() > 1000)) {
      return rpc::ToGrpcStatus(Status::InvalidArgument(
          "max_rounds: expected 0 (the coordinator's) or " + std::to_string(lowest) +
          " to 1000, got " + std::to_string(req->max_rounds())));
    }
    if (remeasure_ == nullptr) {
      return rpc::ToGrpcStatus(
          Status::FailedPrecondition("this coordinator does not re-measure series"));
    }
    auto notes = remeasure_->Look(req->series(), req->max_rounds());
    if (!notes.ok()) return rpc::ToGrpcStatus(notes.status());
    for (const RemeasureNote& note : *notes) {
      auto* line = reply->add_lines();
      line->set_line(note.line);
      line->set_status(note.status);
      line->set_campaign(note.campaign);
      line->set_detail(note.detail);
    }
    return grpc::Status::OK;
  }());
}

namespace {
// What a series' readers are told the store is when a series is not in it.
constexpr const char* kCoordinatorStoreName = "the coordinator's database";
}  // namespace

grpc::Status CoordinatorService::GetHistory(grpc::ServerContext* ctx,
                                            const v1::GetHistoryRequest* req,
                                            v1::GetHistoryReply* reply) {
  CallAudit audit(store_, tls_, ctx, "GetHistory", "series " + req->series());
  if (grpc::Status allowed = audit.Allow(kReaders); !allowed.ok()) return allowed;
  HistoryQuery query;
  query.series = req->series();
  query.cell = req->cell();
  query.target = req->target();
  if (!req->figure().empty()) query.figure = req->figure();
  if (!req->format().empty()) query.format = req->format();
  if (req->width() != 0) query.width = req->width();
  if (Status st = CheckHistoryQuery(query, QueryFields::kRequest); !st.ok()) {
    return rpc::ToGrpcStatus(st);
  }
  auto text = HistoryText(store_, query, kCoordinatorStoreName);
  if (!text.ok()) return rpc::ToGrpcStatus(text.status());
  reply->set_text(std::move(*text));
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::GetRegressions(grpc::ServerContext* ctx,
                                                const v1::GetRegressionsRequest* req,
                                                v1::GetRegressionsReply* reply) {
  CallAudit audit(store_, tls_, ctx, "GetRegressions", "series " + req->series());
  if (grpc::Status allowed = audit.Allow(kReaders); !allowed.ok()) return allowed;
  RegressionsQuery query;
  query.series = req->series();
  query.since = req->since();
  if (req->figures_size() > 0) query.figures.assign(req->figures().begin(), req->figures().end());
  query.cell = req->cell();
  query.target = req->target();
  if (!req->format().empty()) query.format = req->format();
  query.dashboard = req->dashboard();
  if (req->width() != 0) query.width = req->width();
  if (Status st = CheckRegressionsQuery(query, QueryFields::kRequest); !st.ok()) {
    return rpc::ToGrpcStatus(st);
  }
  auto view = RegressionsText(store_, query, kCoordinatorStoreName);
  if (!view.ok()) return rpc::ToGrpcStatus(view.status());
  reply->set_text(std::move(view->text));
  reply->set_confirmed_regression(view->confirmed_regression);
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::GetAudit(grpc::ServerContext* ctx, const v1::GetAuditRequest* req,
                                          v1::GetAuditReply* reply) {
  CallAudit audit(store_, tls_, ctx, "GetAudit",
                  req->since().empty() ? "" : "since " + req->since());
  // The trail names every caller's identity and address: operators only.
  if (grpc::Status allowed = audit.Allow(kOperators); !allowed.ok()) return allowed;
  AuditQuery query;
  query.since = req->since();
  if (!req->format().empty()) query.format = req->format();
  if (req->width() != 0) query.width = req->width();
  if (Status st = CheckAuditQuery(query, QueryFields::kRequest); !st.ok()) {
    return rpc::ToGrpcStatus(st);
  }
  auto text = AuditText(store_, query);
  if (!text.ok()) return rpc::ToGrpcStatus(text.status());
  reply->set_text(std::move(*text));
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::StartBisection(grpc::ServerContext* ctx,
                                                const v1::StartBisectionRequest* req,
                                                v1::StartBisectionReply* reply) {
  const std::string subject = req->change() > 0 ? "change " + std::to_string(req->change())
                                                : "target " + req->target().substr(0, 64) +
                                                      " from " + req->good().substr(0, 64) +
                                                      " to " + req->bad().substr(0, 64);
  CallAudit audit(store_, tls_, ctx, "StartBisection", subject);
  // Each step builds commits and measures them on the lab's machines: operators only.
  if (grpc::Status allowed = audit.Allow(kOperators); !allowed.ok()) return allowed;
  return audit.Done([&]() -> grpc::Status {
    if (bisections_ == nullptr) {
      return rpc::ToGrpcStatus(
          Status::FailedPrecondition("this coordinator does not run bisections"));
    }
    if (req->change() < 0) {
      return rpc::ToGrpcStatus(Status::InvalidArgument(
          "change: expected a change's id (1 or more), or 0 with the search named by hand"));
    }
    BisectionRequest request;
    request.change = req->change();
    if (req->max_rounds() != 0) request.max_rounds = req->max_rounds();
    if (req->change() > 0) {
      for (const auto& [field, value] :
           {std::pair{"spec_toml", &req->spec_toml()}, std::pair{"target", &req->target()},
            std::pair{"good", &req->good()}, std::pair{"bad", &req->bad()},
            std::pair{"cell", &req->cell()}}) {
        if (!value->empty()) {
          return rpc::ToGrpcStatus(
              Status::InvalidArgument(std::string(field) + ": not with change, which names it"));
        }
      }
    } else {
      for (const auto& [field, value] :
           {std::pair{"spec_toml", &req->spec_toml()}, std::pair{"target", &req->target()},
            std::pair{"good", &req->good()}, std::pair{"bad", &req->bad()}}) {
        if (value->empty()) {
          return rpc::ToGrpcStatus(
              Status::InvalidArgument(std::string(field) + ": required when no change is named"));
        }
      }
      request.campaign_toml = req->spec_toml();
      request.campaign_source = req->source();
      request.target = req->target();
      request.good = req->good();
      request.bad = req->bad();
      request.cell = req->cell();
    }
    request.figure = req->figure();
    auto started = bisections_->Start(request);
    if (!started.ok()) return rpc::ToGrpcStatus(started.status());
    reply->set_id(started->id);
    reply->set_commits(started->commits);
    reply->set_summary(started->summary);
    return grpc::Status::OK;
  }());
}

grpc::Status CoordinatorService::GetBisection(grpc::ServerContext* ctx,
                                              const v1::GetBisectionRequest* req,
                                              v1::GetBisectionReply* reply) {
  CallAudit audit(store_, tls_, ctx, "GetBisection", "bisection " + std::to_string(req->id()));
  if (grpc::Status allowed = audit.Allow(kReaders); !allowed.ok()) return allowed;
  if (req->format() != "" && req->format() != "text" && req->format() != "json") {
    return rpc::ToGrpcStatus(Status::InvalidArgument("format: expected text or json"));
  }
  auto record = store_.LoadBisection(req->id());
  if (!record.ok()) return rpc::ToGrpcStatus(record.status());
  if (!record->has_value()) {
    return rpc::ToGrpcStatus(Status::NotFound(std::string(kCoordinatorStoreName) +
                                              " has no bisection " + std::to_string(req->id())));
  }
  if (req->format() == "json") {
    nlohmann::json out = BisectionJson(**record);
    AddCulpritProfileJson(store_, **record, out);
    reply->set_text(out.dump(2) + "\n");
  } else {
    reply->set_text(FormatBisectionText(**record) + CulpritProfileText(store_, **record));
  }
  return grpc::Status::OK;
}

}  // namespace benchlab
