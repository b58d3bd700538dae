#include "cli/bisect_run.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "analysis/bisect.h"
#include "analysis/bisect_report.h"
#include "analysis/figure.h"
#include "analysis/profile_report.h"
#include "analysis/report_format.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/embedded_lab.h"
#include "common/git_rev.h"
#include "common/parse.h"
#include "coordinator/campaign.h"
#include "coordinator/server/bisect_plan.h"
#include "coordinator/server/bisect_search.h"
#include "coordinator/server/confirmation.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

constexpr const char* kBisectCommand = "bisect";

std::string Short(const std::string& oid) { return oid.substr(0, 12); }

// Progress goes to stderr when stdout carries the JSON outcome.
FILE* ProgressOut(const BisectJob& job) { return job.json ? stderr : stdout; }

// While it lives, what is written to stdout goes to stderr: the embedded lab prints each
// window on stdout, which with --format json carries the outcome alone.
class StdoutToStderr {
 public:
  explicit StdoutToStderr(bool active) {
    if (!active) return;
    std::fflush(stdout);
    saved_ = ::dup(STDOUT_FILENO);
    if (saved_ >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  ~StdoutToStderr() {
    if (saved_ < 0) return;
    std::fflush(stdout);
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
  }
  StdoutToStderr(const StdoutToStderr&) = delete;
  StdoutToStderr& operator=(const StdoutToStderr&) = delete;

 private:
  int saved_ = -1;
};

// Who runs a stored search: an exclusive lock (flock) on <db>.bisect-<id>.lock, held for as
// long as the process measures it, so that a second `--resume` of a search still running is
// refused instead of measuring the same commits twice. The kernel drops the lock with the
// process, so a search whose process was killed can be resumed at once.
class SearchLock {
 public:
  SearchLock() = default;
  SearchLock(const SearchLock&) = delete;
  SearchLock& operator=(const SearchLock&) = delete;
  ~SearchLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  // Ok, or FailedPrecondition when another process holds it, IoError when it cannot be made.
  Status Take(const std::string& db, int64_t id) {
    path_ = std::filesystem::absolute(db).string() + ".bisect-" + std::to_string(id) + ".lock";
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) return Status::IoError(path_ + ": " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd_);
      fd_ = -1;
      if (err == EWOULDBLOCK) {
        return Status::FailedPrecondition("bisection " + std::to_string(id) +
                                          " is being measured by another process (it holds " +
                                          path_ + ")");
      }
      return Status::IoError(path_ + ": " + std::strerror(err));
    }
    return Status::Ok();
  }
  // Once the search has ended: the file goes (a later --resume is refused by the stored state).
  void Release() {
    if (fd_ < 0) return;
    ::unlink(path_.c_str());
    ::close(fd_);
    fd_ = -1;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

class Bisection {
 public:
  explicit Bisection(const BisectJob& job) : job_(job) {}
  int Run();

 private:
  // Fills campaign_text_, source_name_, campaign_dir_ and the line from the campaign file, or
  // from the confirmed change; a usage error's exit status otherwise.
  int LoadFromFile();
  int LoadFromChange();
  int LoadFromStored();
  // A stored search's range after its decided steps, its rule and its windows so far.
  int Replay();
  // Measures range_.commit(i) look by look until decided; records the step.
  int MeasureCandidate(size_t i);
  // Runs one look's campaign `text` (named `name`) on an embedded lab and reopens the store:
  // kExitOk, kExitInterrupted, or kExitFailure with `error` (empty when the store failed, whose
  // error is printed).
  int RunLook(const std::string& text, const std::string& name, std::string* error);
  // The found culprit against its parent, profiled (row_.culprit_campaign): kExitOk also when
  // no look could be planned, kExitInterrupted when interrupted.
  int MeasureCulprit(const BisectResult& result);
  // Opens the store (the lab's coordinator holds it while a look runs).
  bool OpenStore();
  int Finish(const std::string& state, const std::string& result);
  int StoreFailed(const Status& status) {
    return CommandError(kBisectCommand, kExitFailure, "the store: " + status.message());
  }

  BisectJob job_;  // with the line filled in from a change
  std::unique_ptr<Store> store_;
  Campaign campaign_;
  std::string campaign_text_;
  std::string source_name_;
  std::string campaign_dir_;
  BisectCell cell_;
  Metric figure_{};
  BisectRule rule_;
  BisectRange range_;
  BisectionRow row_;
  std::vector<double> error_bounds_;
  int looks_ = 0;
  int windows_ = 0;
  std::optional<BisectionRecord> resumed_;  // --resume: the stored search
  SearchLock lock_;
};

bool Bisection::OpenStore() {
  auto opened = Store::Open(job_.db);
  if (!opened.ok()) {
    CommandError(kBisectCommand, kExitFailure,
                 "cannot open " + job_.db + ": " + opened.status().message());
    return false;
  }
  store_ = std::move(opened).value();
  return true;
}

int Bisection::LoadFromFile() {
  if (!std::filesystem::exists(job_.campaign_path)) {
    return CommandError(kBisectCommand, kExitUsage, "no campaign file " + job_.campaign_path);
  }
  auto campaign = ParseCampaignFile(job_.campaign_path);
  if (!campaign.ok()) return CommandError(kBisectCommand, kExitUsage, campaign.status().message());
  campaign_ = std::move(campaign).value();
  std::ifstream in(job_.campaign_path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  campaign_text_ = text.str();
  source_name_ = job_.campaign_path;
  campaign_dir_ = std::filesystem::absolute(job_.campaign_path).parent_path().string();
  return kExitOk;
}

int Bisection::LoadFromChange() {
  if (!std::filesystem::exists(job_.db)) {
    return CommandError(kBisectCommand, kExitUsage, "--db: no database at " + job_.db);
  }
  if (!OpenStore()) return kExitFailure;
  const std::string change = "--change " + std::to_string(job_.change);
  auto row = store_->LoadConfirmation(job_.change);
  if (!row.ok()) return StoreFailed(row.status());
  if (!row->has_value()) {
    return CommandError(kBisectCommand, kExitUsage,
                        change + ": " + job_.db +
                            " has no re-measured change of that id "
                            "(`benchlab regressions` lists them)");
  }
  const ConfirmationRow& c = **row;
  if (c.status != "confirmed") {
    return CommandError(kBisectCommand, kExitUsage,
                        change + ": the change is " + c.status +
                            ", not confirmed: only a confirmed regression is bisected");
  }
  if (!c.pair.empty()) {
    return CommandError(kBisectCommand, kExitUsage,
                        change + ": the line runs on the pair of " + c.pair +
                            ", whose builds live in its agents' catalogues; the embedded lab "
                            "cannot build them");
  }
  auto old_row = store_->FindCampaignById(c.old_campaign_id);
  auto new_row = store_->FindCampaignById(c.new_campaign_id);
  if (!old_row.ok()) return StoreFailed(old_row.status());
  if (!new_row.ok()) return StoreFailed(new_row.status());
  if (!old_row->has_value() || !new_row->has_value()) {
    return CommandError(kBisectCommand, kExitUsage,
                        change + ": its campaigns are no longer in " + job_.db);
  }
  std::string versions[2];
  int k = 0;
  for (const CampaignRow* campaign : {&**old_row, &**new_row}) {
    auto input = LoadReportInput(*store_, campaign->name);
    if (!input.ok()) return StoreFailed(input.status());
    auto version = RecordedVersion(input->windows, c.target, c.pair, campaign->name);
    if (!version.ok()) {
      return CommandError(kBisectCommand, kExitUsage, change + ": " + version.status().message());
    }
    versions[k++] = *version;
  }
  job_.good = versions[0];
  job_.bad = versions[1];
  job_.target = c.target;
  job_.cell = c.scenario + "/" + c.load_level;
  job_.figure = c.figure;
  const CampaignRow& newest = **new_row;
  campaign_text_ = newest.spec_toml;
  source_name_ = newest.source;
  std::error_code ec;
  campaign_dir_ = std::filesystem::absolute(job_.campaign_dir, ec).string();
  auto campaign = ParseCampaignText(campaign_text_, source_name_, campaign_dir_);
  if (!campaign.ok()) {
    return CommandError(kBisectCommand, kExitUsage,
                        change + ": campaign " + newest.name + ": " + campaign.status().message());
  }
  campaign_ = std::move(campaign).value();
  std::fprintf(ProgressOut(job_),
               "change %lld: %s on %s/%s by %s, from %s (campaign %s) to %s (campaign %s)\n",
               static_cast<long long>(c.id), c.target.c_str(), c.scenario.c_str(),
               c.load_level.c_str(), c.figure.c_str(), job_.good.c_str(), (*old_row)->name.c_str(),
               job_.bad.c_str(), newest.name.c_str());
  store_.reset();
  return kExitOk;
}

int Bisection::LoadFromStored() {
  if (!std::filesystem::exists(job_.db)) {
    return CommandError(kBisectCommand, kExitUsage, "--db: no database at " + job_.db);
  }
  if (!OpenStore()) return kExitFailure;
  auto record = store_->LoadBisection(job_.resume);
  if (!record.ok()) return StoreFailed(record.status());
  if (!record->has_value()) {
    return CommandError(
        kBisectCommand, kExitUsage,
        "--resume: " + job_.db + " has no bisection " + std::to_string(job_.resume));
  }
  resumed_ = std::move(**record);
  const BisectionRow& b = resumed_->bisection;
  if (b.state != "running" && b.state != "cancelled") {
    return CommandError(kBisectCommand, kExitUsage,
                        "--resume: bisection " + std::to_string(b.id) + " has ended: " + b.state);
  }
  if (b.campaign_toml.empty()) {
    return CommandError(kBisectCommand, kExitUsage,
                        "--resume: bisection " + std::to_string(b.id) +
                            " was stored without its campaign file and cannot go on");
  }
  campaign_text_ = b.campaign_toml;
  source_name_ = b.campaign_source;
  campaign_dir_ = b.campaign_dir;
  job_.target = b.target;
  job_.cell = b.cell;
  job_.figure = b.figure;
  job_.good = b.good_oid;
  job_.bad = b.bad_oid;
  auto campaign = ParseCampaignText(campaign_text_, source_name_, campaign_dir_);
  if (!campaign.ok()) {
    return CommandError(kBisectCommand, kExitUsage, "--resume: " + campaign.status().message());
  }
  campaign_ = std::move(campaign).value();
  store_.reset();
  return kExitOk;
}

int Bisection::Run() {
  // A search resumed is locked before its state is read: a second process sees it running.
  if (job_.resume > 0 && std::filesystem::exists(job_.db)) {
    if (Status locked = lock_.Take(job_.db, job_.resume); !locked.ok()) {
      return CommandError(kBisectCommand, kExitFailure, "--resume: " + locked.message());
    }
  }
  const int loaded = job_.resume > 0   ? LoadFromStored()
                     : job_.change > 0 ? LoadFromChange()
                                       : LoadFromFile();
  if (loaded != kExitOk) {
    lock_.Release();  // a search that cannot go on is not being measured
    return loaded;
  }
  const TargetDef* def = campaign_.FindTarget(job_.target);
  if (def == nullptr) {
    return CommandError(kBisectCommand, kExitUsage,
                        "--target: campaign " + campaign_.name + " has no target " + job_.target);
  }
  if (def->recipe.empty()) {
    return CommandError(kBisectCommand, kExitUsage,
                        source_name_ + ":" + std::to_string(def->line) + ": target " + job_.target +
                            " has no `source` and `build`: a bisection builds each commit "
                            "(docs/agent.md, \"Builds\")");
  }
  auto cell = ChooseBisectCell(campaign_, job_.cell);
  if (!cell.ok()) return CommandError(kBisectCommand, kExitUsage, cell.status().message());
  cell_ = *cell;
  auto figure = ParseFigure(job_.figure);
  if (!figure) return CommandError(kBisectCommand, FigureError("--figure", job_.figure));
  figure_ = *figure;

  const std::string& source = def->recipe.source;
  auto good = ResolveCommit(source, job_.good);
  if (!good.ok())
    return CommandError(kBisectCommand, kExitUsage, "--good: " + good.status().message());
  auto bad = ResolveCommit(source, job_.bad);
  if (!bad.ok())
    return CommandError(kBisectCommand, kExitUsage, "--bad: " + bad.status().message());
  auto range = FirstParentRange(source, *good, *bad, job_.max_commits);
  if (!range.ok()) return CommandError(kBisectCommand, kExitUsage, range.status().message());
  auto good_subject = RunGit(source, {"log", "-1", "--format=%s", *good});
  std::vector<BisectCommit> commits;
  std::string subject = good_subject.ok() ? good_subject->output : "";
  while (!subject.empty() && subject.back() == '\n') subject.pop_back();
  commits.push_back({*good, subject});
  for (const Commit& c : *range) commits.push_back({c.oid, c.subject});
  auto made = MakeBisectRange(std::move(commits));
  if (!made.ok()) return CommandError(kBisectCommand, kExitUsage, made.status().message());
  range_ = std::move(made).value();

  if (!OpenStore()) return kExitFailure;
  if (resumed_) {
    if (const int replayed = Replay(); replayed != kExitOk) return replayed;
  } else {
    StatsOptions stats;
    stats.rule.confidence = campaign_.stats.confidence;
    stats.rule.margin = campaign_.stats.margin;
    rule_ = BisectRuleFor(stats, range_.size(), MetricBetter(figure_));
    rule_.max_rounds = std::max(rule_.min_rounds, job_.max_rounds);
    row_.good_oid = *good;
    row_.bad_oid = *bad;
    row_.target = job_.target;
    row_.cell = cell_.Label();
    row_.figure = MetricName(figure_);
    row_.commits = static_cast<int>(range_.size());
    row_.change_id = job_.change;
    row_.campaign_toml = campaign_text_;
    row_.campaign_source = source_name_;
    row_.campaign_dir = campaign_dir_;
    row_.rule = BisectRuleJson(rule_);
    auto id = store_->CreateBisection(row_);
    if (!id.ok()) return StoreFailed(id.status());
    row_.id = *id;
    if (Status locked = lock_.Take(job_.db, row_.id); !locked.ok()) {
      return CommandError(kBisectCommand, kExitFailure, locked.message());
    }
  }
  std::fprintf(ProgressOut(job_),
               "bisection %lld%s: %s on %s by %s, %zu commits from %s (good) to %s (bad); each "
               "step decided at %.4g%% confidence, the search at %.4g%%\n",
               static_cast<long long>(row_.id), resumed_ ? " (going on)" : "", job_.target.c_str(),
               cell_.Label().c_str(), row_.figure.c_str(), range_.size(), Short(*good).c_str(),
               Short(*bad).c_str(), rule_.StepConfidence() * 100, rule_.confidence * 100);
  std::fflush(ProgressOut(job_));

  while (auto next = range_.Next()) {
    const int status = MeasureCandidate(*next);
    if (status != kExitOk) return status;
    if (row_.state != "running") break;  // the ends did not differ
  }
  if (row_.state != "running") return kExitOk;
  const BisectResult result = range_.Result();
  const double confidence = SearchConfidence(error_bounds_);
  row_.confidence = confidence;
  std::string line;
  if (result.outcome == BisectOutcome::kFound) {
    const BisectCommit& c = range_.commit(*result.culprit);
    row_.culprit = c.oid;
    line = FoundLine(c, static_cast<int>(range_.Measured()), windows_, confidence);
    const int profiled = MeasureCulprit(result);
    if (profiled == kExitFailure) return kExitFailure;
    const int finished = Finish("found", line);
    return profiled == kExitInterrupted ? kExitInterrupted : finished;
  }
  line = "unsplittable: " + result.reason;
  return Finish("unsplittable", line);
}

int Bisection::Replay() {
  row_ = resumed_->bisection;
  auto rule = BisectRuleFromJson(row_.rule);
  if (!rule) {
    return CommandError(kBisectCommand, kExitUsage,
                        "--resume: bisection " + std::to_string(row_.id) +
                            " has no decision rule stored (" + row_.rule + ")");
  }
  rule_ = *rule;
  std::vector<BisectStep> steps;
  for (const BisectStepRow& s : resumed_->steps) {
    auto state = ParseCommitState(s.decision);
    if (!state)
      return StoreFailed(Status::Internal("bisection " + std::to_string(row_.id) +
                                          " stores a step decided \"" + s.decision + "\""));
    steps.push_back({s.oid, *state});
    for (int64_t id : s.campaigns) {
      auto campaign = store_->FindCampaignById(id);
      if (!campaign.ok() || !campaign->has_value()) continue;
      auto input = LoadReportInput(*store_, (*campaign)->name);
      if (input.ok()) windows_ += static_cast<int>(input->windows.size());
    }
  }
  error_bounds_ = StoredErrorBounds(*resumed_, rule_);
  std::vector<BisectCommit> commits;
  for (size_t i = 0; i < range_.size(); ++i) commits.push_back(range_.commit(i));
  auto replayed = ReplayBisect(std::move(commits), steps);
  if (!replayed.ok()) return StoreFailed(replayed.status());
  range_ = std::move(replayed).value();
  row_.state = "running";
  row_.result = "";
  if (Status updated = store_->UpdateBisection(row_); !updated.ok()) return StoreFailed(updated);
  return kExitOk;
}

int Bisection::Finish(const std::string& state, const std::string& result) {
  row_.state = state;
  row_.result = result;
  if (Status updated = store_->UpdateBisection(row_); !updated.ok()) return StoreFailed(updated);
  if (state != "cancelled") lock_.Release();  // ended: nothing to go on with
  if (job_.json) {
    auto record = store_->LoadBisection(row_.id);
    if (!record.ok() || !record->has_value()) {
      return StoreFailed(record.ok() ? Status::NotFound("bisection vanished") : record.status());
    }
    nlohmann::json out = BisectionJson(**record);
    AddCulpritProfileJson(*store_, **record, out);
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("%s\n", result.c_str());
    BisectionRecord record;
    record.bisection = row_;
    std::fputs(CulpritProfileText(*store_, record).c_str(), stdout);
  }
  return kExitOk;
}

int Bisection::RunLook(const std::string& text, const std::string& name, std::string* error) {
  auto lab_campaign = ParseCampaignText(text, name + ".toml", campaign_dir_);
  if (!lab_campaign.ok()) {
    *error = lab_campaign.status().message();
    return kExitFailure;
  }
  LabJob lab;
  lab.campaign = std::move(lab_campaign).value();
  lab.submit_text = text;
  lab.db = job_.db;
  lab.keep_work_dir = job_.keep_work_dir;
  lab.verb = kBisectCommand;
  lab.progress = job_.json ? ProgressMode::kOff : job_.progress;
  // One cache for the whole search, beside its database: the ends and each commit are built
  // once, whatever the number of looks, and a resumed search finds them again.
  lab.build_cache_dir = std::filesystem::absolute(job_.db).string() + ".builds";
  store_.reset();  // the lab's coordinator writes the database meanwhile
  int lab_status;
  {
    StdoutToStderr lab_output(job_.json);
    lab_status = RunOnEmbeddedLab(lab);
  }
  if (!OpenStore()) return kExitFailure;
  return lab_status == kExitInterrupted ? kExitInterrupted : kExitOk;
}

int Bisection::MeasureCulprit(const BisectResult& result) {
  const BisectCommit& parent = range_.commit(result.last_good);
  const BisectCommit& culprit = range_.commit(*result.culprit);
  const std::string name = "bisect-" + std::to_string(row_.id) + "-culprit-" + Short(culprit.oid);
  auto text = PlanBisectCampaign(campaign_text_, source_name_, campaign_dir_, job_.target, cell_,
                                 parent.oid, culprit.oid, row_.bad_oid, rule_.min_rounds, name,
                                 /*profile=*/true);
  if (!text.ok()) {
    std::fprintf(ProgressOut(job_), "no profile diff of the culprit: %s\n",
                 text.status().message().c_str());
    return kExitOk;
  }
  std::fprintf(ProgressOut(job_),
               "profiling %s %s against its parent %s: %d round(s), campaign %s\n",
               Short(culprit.oid).c_str(), culprit.subject.c_str(), Short(parent.oid).c_str(),
               rule_.min_rounds, name.c_str());
  std::fflush(ProgressOut(job_));
  std::string error;
  const int status = RunLook(*text, name, &error);
  if (status == kExitOk) row_.culprit_campaign = name;
  if (status == kExitFailure && !error.empty()) {
    std::fprintf(ProgressOut(job_), "no profile diff of the culprit: %s\n", error.c_str());
    return kExitOk;
  }
  return status;
}

int Bisection::MeasureCandidate(size_t i) {
  const BisectCommit& candidate = range_.commit(i);
  std::vector<ReportInput> looks;
  std::vector<int64_t> campaign_ids;
  CandidateJudgement judged;
  while (judged.kind == CandidateJudgement::Kind::kMoreRounds) {
    const int want = looks.empty() ? rule_.min_rounds : 1;
    const std::string name = "bisect-" + std::to_string(row_.id) + "-" + Short(candidate.oid) +
                             "-" + std::to_string(++looks_);
    auto text = PlanBisectCampaign(campaign_text_, source_name_, campaign_dir_, job_.target, cell_,
                                   row_.good_oid, candidate.oid, row_.bad_oid, want, name);
    if (!text.ok()) {
      Finish("failed", text.status().message());
      return kExitFailure;
    }
    std::fprintf(ProgressOut(job_), "measuring %s %s: %d round(s), campaign %s\n",
                 Short(candidate.oid).c_str(), candidate.subject.c_str(), want, name.c_str());
    std::fflush(ProgressOut(job_));
    std::string error;
    const int lab_status = RunLook(*text, name, &error);
    if (lab_status == kExitFailure) {
      if (store_ && !error.empty()) Finish("failed", error);
      return kExitFailure;
    }
    if (lab_status == kExitInterrupted) {
      Finish("cancelled", "interrupted while measuring " + Short(candidate.oid));
      return kExitInterrupted;
    }
    auto input = LoadReportInput(*store_, name);
    if (!input.ok()) return StoreFailed(input.status());
    campaign_ids.push_back(input->campaign.id);
    windows_ += static_cast<int>(input->windows.size());
    looks.push_back(std::move(input).value());
    judged = JudgeCandidate(looks, row_, cell_, figure_, rule_);
  }
  if (judged.kind == CandidateJudgement::Kind::kEndFailed) {
    Finish("failed", judged.why);
    return kExitOk;
  }
  auto number = RecordCandidate(*store_, row_, range_, i, campaign_ids, judged, error_bounds_);
  if (!number.ok()) return StoreFailed(number.status());
  std::fprintf(ProgressOut(job_), "step %d: %s %s: %s (%s)\n", *number,
               Short(candidate.oid).c_str(), candidate.subject.c_str(),
               judged.step.decision.c_str(),
               judged.step.build == "failed" ? "its build failed" : judged.why.c_str());
  std::fflush(ProgressOut(job_));
  if (judged.ends_equal) {
    row_.confidence = SearchConfidence(error_bounds_);
    Finish("failed", "the ends do not differ: " + judged.why);
  }
  return kExitOk;
}

}  // namespace

int RunBisection(const BisectJob& job) {
  Bisection bisection(job);
  return bisection.Run();
}

int ShowBisection(const std::string& db, int64_t id, bool json) {
  if (!std::filesystem::exists(db)) {
    return CommandError(kBisectCommand, kExitUsage, "--db: no database at " + db);
  }
  auto store = Store::Open(db);
  if (!store.ok()) return CommandError(kBisectCommand, kExitFailure, store.status().message());
  auto record = (*store)->LoadBisection(id);
  if (!record.ok()) return CommandError(kBisectCommand, kExitFailure, record.status().message());
  if (!record->has_value()) {
    return CommandError(kBisectCommand, kExitUsage,
                        "--status: " + db + " has no bisection " + std::to_string(id));
  }
  if (json) {
    nlohmann::json out = BisectionJson(**record);
    AddCulpritProfileJson(**store, **record, out);
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::fputs(FormatBisectionText(**record).c_str(), stdout);
    std::fputs(CulpritProfileText(**store, **record).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace benchlab
