#include "coordinator/server/coordinator_bisect.h"

#include <grpcpp/client_context.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "analysis/bisect.h"
#include "analysis/figure.h"
#include "analysis/report_format.h"
#include "common/config_toml.h"
#include "common/git_rev.h"
#include "common/printable.h"
#include "coordinator/campaign.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/server/bisect_search.h"
#include "coordinator/server/confirmation.h"
#include "coordinator/server/scheduler.h"
#include "rpc/status.h"
#include "spdlog/spdlog.h"

namespace benchlab {
namespace {

// ListCommits runs a few git commands of kGitTimeLimit each on the server agent.
constexpr std::chrono::seconds kListCommitsDeadline{60};
// The most bytes of a figure or cell named by hand; both are short names.
constexpr size_t kMaxFieldBytes = 256;

std::string Short(const std::string& oid) { return oid.substr(0, 12); }

std::string LookPrefix(int64_t id) { return "bisect-" + std::to_string(id) + "-"; }

std::string RangeJson(const std::vector<BisectCommit>& commits) {
  nlohmann::json out = nlohmann::json::array();
  for (const BisectCommit& c : commits) out.push_back({c.oid, c.subject});
  return out.dump();
}

Result<std::vector<BisectCommit>> ParseRangeJson(const BisectionRow& row) {
  const nlohmann::json in = nlohmann::json::parse(row.range_json, nullptr, false);
  std::vector<BisectCommit> commits;
  if (in.is_array()) {
    for (const nlohmann::json& c : in) {
      if (!c.is_array() || c.size() != 2 || !c[0].is_string() || !c[1].is_string()) break;
      commits.push_back({c[0].get<std::string>(), c[1].get<std::string>()});
    }
  }
  if (commits.size() < 2 || static_cast<int>(commits.size()) != row.commits) {
    return Status::Internal("bisection " + std::to_string(row.id) + " stores no range of its " +
                            std::to_string(row.commits) + " commits");
  }
  return commits;
}

Result<BisectPair> ParsePairLabel(const std::string& label) {
  const size_t slash = label.find('/');
  if (slash == std::string::npos) {
    return Status::Internal("a bisection's pair is stored as \"" + label + "\"");
  }
  return BisectPair{label.substr(0, slash), label.substr(slash + 1)};
}

// The pair a campaign file's [placement] names: one server agent and one load agent by name,
// or one pair.
Result<BisectPair> PairOfCampaign(const Campaign& campaign) {
  if (campaign.placement_pairs.size() == 1) {
    return BisectPair{campaign.placement_pairs[0].first, campaign.placement_pairs[0].second};
  }
  auto named = [](const std::vector<std::string>& v) {
    return v.size() == 1 && v[0].rfind("label:", 0) != 0;
  };
  if (campaign.placement_pairs.empty() && !campaign.all_pairs && named(campaign.placement_server) &&
      named(campaign.placement_load)) {
    return BisectPair{campaign.placement_server[0], campaign.placement_load[0]};
  }
  return Status::InvalidArgument(
      "campaign " + campaign.name +
      ": [placement] must name the pair a bisection runs on: one server agent and one load "
      "agent by name (server = \"...\", load = \"...\"), or one of pairs");
}

// The commit a look measured as the candidate, read from its stored campaign file: names hold
// 12 digits of it only, which two commits of a range may share.
std::string LookCandidate(const CampaignRow& look, const std::string& target) {
  auto parsed = ParseCampaignText(look.spec_toml, look.source, "");
  if (!parsed.ok()) return "";
  const TargetDef* def = parsed->FindTarget(BisectTargetsOf(target).candidate);
  return def == nullptr ? "" : def->commit;
}

}  // namespace

CoordinatorBisections::CoordinatorBisections(Store& store, AgentRegistry& agents,
                                             Scheduler& scheduler)
    : store_(store), agents_(agents), scheduler_(scheduler) {}

Result<StartedBisection> CoordinatorBisections::Start(const BisectionRequest& request) {
  BisectionRequest r = request;
  if (r.max_rounds < 3 || r.max_rounds > 1000) {
    return Status::InvalidArgument("max_rounds: expected 3 to 1000, got " +
                                   std::to_string(r.max_rounds));
  }
  std::optional<BisectPair> pair;
  if (r.change > 0) {
    const std::string change = "change " + std::to_string(r.change);
    auto row = store_.LoadConfirmation(r.change);
    if (!row.ok()) return row.status();
    if (!row->has_value()) {
      return Status::NotFound(change +
                              ": the coordinator's database has no re-measured change of that "
                              "id (`benchlab regressions` lists them)");
    }
    const ConfirmationRow& c = **row;
    if (c.status != "confirmed") {
      return Status::FailedPrecondition(change + ": the change is " + c.status +
                                        ", not confirmed: only a confirmed regression is "
                                        "bisected");
    }
    auto old_row = store_.FindCampaignById(c.old_campaign_id);
    auto new_row = store_.FindCampaignById(c.new_campaign_id);
    if (!old_row.ok()) return old_row.status();
    if (!new_row.ok()) return new_row.status();
    if (!old_row->has_value() || !new_row->has_value()) {
      return Status::FailedPrecondition(change + ": its campaigns are no longer stored");
    }
    std::string versions[2];
    int k = 0;
    for (const CampaignRow* campaign : {&**old_row, &**new_row}) {
      auto input = LoadReportInput(store_, campaign->name);
      if (!input.ok()) return input.status();
      auto version = RecordedVersion(input->windows, c.target, c.pair, campaign->name);
      if (!version.ok())
        return Status::FailedPrecondition(change + ": " + version.status().message());
      versions[k++] = *version;
    }
    const CampaignRow& newest = **new_row;
    auto agents = PairAgents(newest.placement, c.pair);
    if (!agents) {
      return Status::FailedPrecondition(
          change + ": campaign " + newest.name +
          " was not placed on a pair of agents here; a line of the embedded lab is bisected "
          "there (benchlab bisect --change ID --db FILE)");
    }
    pair = BisectPair{agents->first, agents->second};
    r.good = versions[0];
    r.bad = versions[1];
    r.target = c.target;
    r.cell = c.scenario + "/" + c.load_level;
    r.figure = c.figure;
    r.campaign_toml = newest.spec_toml;
    r.campaign_source = newest.source;
  } else {
    for (const auto& [field, value] : {std::pair{"good", &r.good}, std::pair{"bad", &r.bad}}) {
      if (Status text = CheckRevisionText(*value); !text.ok()) {
        return Status::InvalidArgument(std::string(field) + ": " + text.message());
      }
    }
    for (const auto& [field, value] :
         {std::pair{"cell", &r.cell}, std::pair{"figure", &r.figure},
          std::pair{"target", &r.target}, std::pair{"campaign_source", &r.campaign_source}}) {
      if (value->size() > kMaxFieldBytes || PrintableText(*value) != *value) {
        return Status::InvalidArgument(std::string(field) + ": expected at most " +
                                       std::to_string(kMaxFieldBytes) + " printable characters");
      }
    }
    if (r.campaign_source.empty()) r.campaign_source = "bisect.toml";
  }
  auto campaign = ParseCampaignText(r.campaign_toml, r.campaign_source, "");
  if (!campaign.ok()) return Status::InvalidArgument(campaign.status().message());
  if (!pair) {
    auto placed = PairOfCampaign(*campaign);
    if (!placed.ok()) return placed.status();
    pair = *placed;
  }
  const TargetDef* def = campaign->FindTarget(r.target);
  if (def == nullptr) {
    return Status::InvalidArgument("target: campaign " + campaign->name + " has no target " +
                                   config::Quote(r.target));
  }
  auto cell = ChooseBisectCell(*campaign, r.cell);
  if (!cell.ok()) return cell.status();
  auto figure = ParseFigure(r.figure.empty() ? "cpu" : r.figure);
  if (!figure) {
    return Status::InvalidArgument("figure: expected rps, cpu, p99 or a figure's full name, got " +
                                   config::Quote(r.figure));
  }

  // The range, from the server agent's own source: the coordinator has no checkout.
  auto stub = agents_.Stub(pair->server);
  if (stub == nullptr) {
    return Status::FailedPrecondition("agent " + config::Quote(pair->server) +
                                      " (the pair's server agent) is not registered");
  }
  v1::ListCommitsRequest list;
  list.set_target(def->of.empty() ? def->name : def->of);
  list.set_good(r.good);
  list.set_bad(r.bad);
  list.set_max_commits(static_cast<int32_t>(kMaxRangeCommits));
  v1::ListCommitsReply listed;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + kListCommitsDeadline);
  if (grpc::Status st = stub->ListCommits(&ctx, list, &listed); !st.ok()) {
    const Status why = rpc::FromGrpcStatus(st);
    return Status(why.code(), "agent " + pair->server + ": " + why.message());
  }
  // The agent's reply is network input like any other.
  std::vector<BisectCommit> commits;
  for (const auto& c : listed.commits()) {
    if (!IsFullObjectId(c.oid()) || !IsListedSubject(c.subject())) {
      return Status::FailedPrecondition("agent " + pair->server +
                                        " listed a commit that is not a 40-hex id with a "
                                        "printable subject");
    }
    commits.push_back({c.oid(), c.subject()});
  }
  if (commits.size() > kMaxRangeCommits) {
    return Status::FailedPrecondition("agent " + pair->server + " listed more than " +
                                      std::to_string(kMaxRangeCommits) + " commits");
  }
  const std::string range_json = RangeJson(commits);
  auto range = MakeBisectRange(std::move(commits));
  if (!range.ok()) return Status::FailedPrecondition(range.status().message());

  StatsOptions stats;
  stats.rule.confidence = campaign->stats.confidence;
  stats.rule.margin = campaign->stats.margin;
  BisectRule rule = BisectRuleFor(stats, range->size(), MetricBetter(*figure));
  rule.max_rounds = std::max(rule.min_rounds, r.max_rounds);
  BisectionRow row;
  row.good_oid = range->commit(0).oid;
  row.bad_oid = range->commit(range->size() - 1).oid;
  row.target = r.target;
  row.cell = cell->Label();
  row.figure = MetricName(*figure);
  row.commits = static_cast<int>(range->size());
  row.change_id = r.change;
  row.campaign_toml = r.campaign_toml;
  row.campaign_source = r.campaign_source;
  row.rule = BisectRuleJson(rule);
  row.pair = pair->Label();
  row.range_json = range_json;
  // The agent was asked without the lock (its answer may take seconds); storing the search and
  // queueing its first look is one step of it.
  std::lock_guard lock(mu_);
  auto id = store_.CreateBisection(row);
  if (!id.ok()) return id.status();
  StartedBisection started;
  started.id = *id;
  started.commits = row.commits;
  started.summary = "bisection " + std::to_string(*id) + ": " + row.target + " on " + row.cell +
                    " by " + row.figure + ", " + std::to_string(row.commits) + " commits from " +
                    Short(row.good_oid) + " (good) to " + Short(row.bad_oid) + " (bad), on " +
                    row.pair;
  spdlog::info("{}", started.summary);
  if (Status advanced = AdvanceLocked(*id); !advanced.ok()) {
    spdlog::error("bisection {}: {}", *id, advanced.message());
  }
  return started;
}

void CoordinatorBisections::CampaignEnded(int64_t id) {
  auto row = store_.FindCampaignById(id);
  if (!row.ok() || !row->has_value()) return;
  const std::string& name = (*row)->name;
  if (name.rfind("bisect-", 0) != 0) return;
  int64_t bisection = 0;
  for (size_t i = 7; i < name.size() && name[i] >= '0' && name[i] <= '9' && i < 25; ++i) {
    bisection = bisection * 10 + (name[i] - '0');
  }
  if (bisection > 0) Advance(bisection);
}

void CoordinatorBisections::ResumeAll() {
  auto rows = store_.ListBisections();
  if (!rows.ok()) {
    spdlog::error("bisections: {}", rows.status().message());
    return;
  }
  for (const BisectionRow& b : *rows) {
    if (b.state == "running" && !b.pair.empty()) Advance(b.id);
  }
}

void CoordinatorBisections::Advance(int64_t id) {
  std::lock_guard lock(mu_);
  if (Status st = AdvanceLocked(id); !st.ok()) {
    spdlog::error("bisection {}: {}", id, st.message());
  }
}

Status CoordinatorBisections::Finish(BisectionRow& search, const std::string& state,
                                     const std::string& result) {
  search.state = state;
  search.result = result;
  spdlog::info("bisection {}: {}: {}", search.id, state, result);
  return store_.UpdateBisection(search);
}

Status CoordinatorBisections::Submit(const BisectionRow& search, const std::string& text,
                                     const std::string& name) {
  auto submitted = scheduler_.Submit(text, name + ".toml", "");
  // The coordinator's own submission, in the audit trail beside the operators' (its identity
  // "coordinator", no peer: docs/security.md, "Audit").
  AuditRow audit;
  audit.at = FormatIsoTime(store_.clock().WallNow());
  audit.identity = "coordinator";
  audit.role = "coordinator";
  audit.call = "SubmitCampaign";
  audit.subject = "campaign " + name + ": a look of bisection " + std::to_string(search.id);
  audit.outcome = submitted.ok() ? "ok" : "failed";
  if (!submitted.ok()) audit.reason = submitted.status().message();
  if (Status st = store_.AppendAudit(audit); !st.ok()) {
    spdlog::error("bisection {}: auditing {}: {}", search.id, name, st.ToString());
  }
  if (!submitted.ok()) return submitted.status();
  spdlog::info("bisection {}: queued campaign {}", search.id, name);
  return Status::Ok();
}

Status CoordinatorBisections::AdvanceLocked(int64_t id) {
  auto loaded = store_.LoadBisection(id);
  if (!loaded.ok()) return loaded.status();
  if (!loaded->has_value()) return Status::NotFound("no bisection has this id");
  BisectionRecord record = std::move(**loaded);
  BisectionRow& search = record.bisection;
  if (search.state != "running" || search.pair.empty()) return Status::Ok();

  auto rule = BisectRuleFromJson(search.rule);
  auto commits = ParseRangeJson(search);
  auto pair = ParsePairLabel(search.pair);
  auto figure = ParseFigure(search.figure);
  BisectCell cell;
  if (const size_t slash = search.cell.find('/'); slash != std::string::npos) {
    cell = {search.cell.substr(0, slash), search.cell.substr(slash + 1)};
  }
  if (!rule || !commits.ok() || !pair.ok() || !figure || cell.scenario.empty()) {
    return Finish(search, "failed", "its stored rule, range, pair, figure or cell cannot be read");
  }
  std::vector<BisectStep> steps;
  for (const BisectStepRow& s : record.steps) {
    auto state = ParseCommitState(s.decision);
    if (!state) return Finish(search, "failed", "a step is stored decided \"" + s.decision + "\"");
    steps.push_back({s.oid, *state});
  }
  auto replayed = ReplayBisect(*commits, steps);
  if (!replayed.ok()) return Finish(search, "failed", replayed.status().message());
  BisectRange range = std::move(replayed).value();
  std::vector<double> error_bounds = StoredErrorBounds(record, *rule);

  // Its looks so far, by name; a look still queued or running is waited for.
  auto campaigns = store_.ListCampaigns();
  if (!campaigns.ok()) return campaigns.status();
  std::map<int64_t, CampaignRow> looks;  // by id: in the order they were made
  int windows = 0;
  for (CampaignRow& c : *campaigns) {
    if (c.name.rfind(LookPrefix(id), 0) != 0) continue;
    auto state = ParseCampaignState(c.state);
    if (!state || !Ended(*state)) return Status::Ok();
    if (auto counted = store_.CountWindows(c.id); counted.ok()) {
      windows += static_cast<int>(counted->first);
    }
    looks.emplace(c.id, std::move(c));
  }
  int looks_made = static_cast<int>(looks.size());
  // A look cancelled by an operator stops the search; one that failed (it could not be placed,
  // say) stops it with the campaign's error.
  for (const auto& [look_id, c] : looks) {
    const std::string& name = c.name;
    if (name.rfind(LookPrefix(id) + "culprit-", 0) == 0) continue;  // the culprit is known
    if (c.Is(CampaignState::kCancelled)) {
      return Finish(search, "cancelled", "its look " + name + " was cancelled");
    }
    if (c.Is(CampaignState::kFailed)) {
      return Finish(search, "failed", "its look " + name + " failed: " + c.error);
    }
  }

  while (auto next = range.Next()) {
    const BisectCommit& candidate = range.commit(*next);
    const std::string prefix = LookPrefix(id) + Short(candidate.oid) + "-";
    std::vector<ReportInput> inputs;  // the looks at this candidate, oldest first
    std::vector<int64_t> input_ids;
    for (const auto& [look_id, c] : looks) {
      if (c.name.rfind(LookPrefix(id) + "culprit-", 0) == 0 ||
          LookCandidate(c, search.target) != candidate.oid) {
        continue;
      }
      auto input = LoadReportInput(store_, c.name);
      if (!input.ok()) return input.status();
      input_ids.push_back(look_id);
      inputs.push_back(std::move(input).value());
    }
    CandidateJudgement judged;
    if (!inputs.empty()) judged = JudgeCandidate(inputs, search, cell, *figure, *rule);
    if (judged.kind == CandidateJudgement::Kind::kEndFailed) {
      return Finish(search, "failed", judged.why);
    }
    if (judged.kind == CandidateJudgement::Kind::kMoreRounds) {
      const int want = inputs.empty() ? rule->min_rounds : 1;
      const std::string name = prefix + std::to_string(++looks_made);
      auto text = PlanBisectCampaign(search.campaign_toml, search.campaign_source, "",
                                     search.target, cell, search.good_oid, candidate.oid,
                                     search.bad_oid, want, name, /*profile=*/false, *pair);
      if (!text.ok()) return Finish(search, "failed", text.status().message());
      if (Status st = Submit(search, *text, name); !st.ok()) {
        return Finish(search, "failed", "submitting " + name + ": " + st.message());
      }
      return Status::Ok();
    }
    auto number = RecordCandidate(store_, search, range, *next, input_ids, judged, error_bounds);
    if (!number.ok()) return number.status();
    spdlog::info("bisection {}: step {}: {} {}: {} ({})", id, *number, Short(candidate.oid),
                 candidate.subject, judged.step.decision,
                 judged.step.build == "failed" ? "its build failed" : judged.why);
    search.confidence = SearchConfidence(error_bounds);
    if (judged.ends_equal) return Finish(search, "failed", "the ends do not differ: " + judged.why);
    if (Status st = store_.UpdateBisection(search); !st.ok()) return st;
  }

  const BisectResult result = range.Result();
  search.confidence = SearchConfidence(error_bounds);
  if (result.outcome != BisectOutcome::kFound) {
    return Finish(search, "unsplittable", "unsplittable: " + result.reason);
  }
  const BisectCommit& parent = range.commit(result.last_good);
  const BisectCommit& culprit = range.commit(*result.culprit);
  search.culprit = culprit.oid;
  // The culprit against its parent, profiled, once; then the search ends found.
  const std::string name = LookPrefix(id) + "culprit-" + Short(culprit.oid);
  auto profiled = std::find_if(looks.begin(), looks.end(),
                               [&](const auto& look) { return look.second.name == name; });
  if (profiled == looks.end()) {
    auto text = PlanBisectCampaign(search.campaign_toml, search.campaign_source, "", search.target,
                                   cell, parent.oid, culprit.oid, search.bad_oid, rule->min_rounds,
                                   name, /*profile=*/true, *pair);
    if (text.ok() && Submit(search, *text, name).ok()) {
      search.culprit.clear();  // "found" only once its look ends
      return Status::Ok();
    }
    spdlog::warn("bisection {}: no profile diff of the culprit: {}", id,
                 text.ok() ? "its look could not be queued" : text.status().message());
  } else if (profiled->second.Is(CampaignState::kDone)) {
    search.culprit_campaign = name;
  }
  return Finish(
      search, "found",
      FoundLine(culprit, static_cast<int>(range.Measured()), windows, *search.confidence));
}

}  // namespace benchlab
