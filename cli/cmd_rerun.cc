// `benchlab rerun`: measures chosen windows again, each as a new attempt on the pair its
// campaign ran on, through a coordinator or on the embedded lab over a database file.
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "cli/client.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/embedded_lab.h"
#include "cli/signals.h"
#include "cli/tls_options.h"
#include "coordinator/campaign.h"
#include "coordinator/rerun.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

struct RerunArgs {
  std::vector<int64_t> ids;
  bool invalid = false;
  bool failed = false;
  std::string campaign;
  std::string coordinator;
  TlsFiles tls;  // --tls-*: mutual TLS to the coordinator
  std::string db;
  bool no_wait = false;
  bool keep_work_dir = false;
};

int Usage(const std::string& message) {
  std::fprintf(stderr, "benchlab rerun: %s\n", message.c_str());
  return kExitUsage;
}

// Through a running coordinator: ask, then follow the campaign until it is done again.
int RerunAtCoordinator(const RerunArgs& args) {
  auto stub = ConnectCoordinator(args.coordinator, args.tls);
  if (!stub.ok()) return Usage(stub.status().message());
  BlockTerminationSignals();
  v1::RerunWindowsRequest req;
  for (int64_t id : args.ids) req.add_window_ids(id);
  req.set_invalid(args.invalid);
  req.set_failed(args.failed);
  req.set_campaign(args.campaign);
  v1::RerunWindowsReply reply;
  grpc::ClientContext ctx;
  SetDeadlineSeconds(ctx, 10);
  grpc::Status status = (*stub)->RerunWindows(&ctx, req, &reply);
  if (!status.ok()) {
    return CommandError("rerun", ExitCodeOf(status), CallError(status, args.coordinator));
  }
  std::printf("re-running %d window(s) of %s\n", reply.window_ids_size(),
              reply.campaigns_size() == 1 ? reply.campaigns(0).c_str() : "several campaigns");
  std::fflush(stdout);
  if (args.no_wait) return kExitOk;
  int status_code = 0;
  for (const std::string& name : reply.campaigns()) {
    WatchCanceller canceller;
    SignalWatcher watcher([&canceller](int) { canceller.Cancel(); });
    auto outcome = WatchCampaign(**stub, name, canceller);
    if (canceller.cancelled()) return kExitInterrupted;
    if (!outcome.ok()) {
      std::fprintf(stderr, "benchlab rerun: %s\n", outcome.status().message().c_str());
      return kExitFailure;
    }
    v1::ListCampaignsReply campaigns;
    grpc::ClientContext list_ctx;
    SetDeadlineSeconds(list_ctx, 10);
    int total = 0;
    if ((*stub)->ListCampaigns(&list_ctx, v1::ListCampaignsRequest(), &campaigns).ok()) {
      for (const auto& c : campaigns.campaigns()) {
        if (c.name() == name) total = c.total_windows();
      }
    }
    // The campaign's own run checked its count against its plan; a re-run only asks that it
    // ended done with every window measured (an adaptive plan holds fewer than its most).
    if (ReportOutcome(*outcome, "", total, /*at_most=*/true) != 0) status_code = 1;
  }
  return status_code;
}

// The campaign whose targets the lab runs: the stored text, or, when its env values were stored
// redacted, the file it was submitted from, which must redact to the stored text.
Result<Campaign> LabCampaign(const CampaignRow& row) {
  // Its targets' templates are found beside the file it was submitted from.
  std::string dir = fs::absolute(fs::path(row.source)).parent_path().string();
  auto stored = ParseCampaignText(row.spec_toml, row.source, dir);
  if (!stored.ok() || !HasRedactedEnv(*stored)) return stored;
  auto file = ParseCampaignFile(row.source);
  // Labels given with --label were added to the text stored; the file has only its own.
  std::map<std::string, std::string> added;
  if (file.ok()) {
    for (const auto& [target, label] : stored->labels) {
      if (file->labels.count(target) == 0) added[target] = label;
    }
  }
  Result<std::string> text =
      file.ok() ? AddCampaignLabels(*file, file->text, added) : Result<std::string>(file.status());
  Result<std::string> redacted =
      text.ok() ? RedactCampaignText(*text, row.source) : Result<std::string>(text.status());
  if (!redacted.ok() || *redacted != row.spec_toml) {
    return Status::FailedPrecondition("campaign \"" + row.name +
                                      "\" keeps its targets' env values only as hashes; the "
                                      "embedded lab runs them from " +
                                      row.source + ", which " +
                                      (redacted.ok()
                                           ? "is not the file it was submitted from any more"
                                           : "cannot be read: " + redacted.status().message()));
  }
  return file;
}

// On a database file: record the requests in it, then start the embedded lab as `run` does;
// its coordinator finds the campaign queued and measures just those windows.
int RerunOnDatabase(const RerunArgs& args) {
  if (!fs::exists(args.db)) return Usage("--db " + args.db + ": no such file");
  auto store = Store::Open(args.db);
  if (!store.ok()) return Usage(store.status().message());
  std::vector<int64_t> ids = args.ids;
  if (args.invalid || args.failed) {
    WindowFilter filter;
    if (!args.campaign.empty()) filter.campaign = args.campaign;
    auto windows = (*store)->ListWindows(filter);
    if (!windows.ok()) return Usage(windows.status().message());
    for (int64_t id : SelectForRerun(*windows, args.invalid, args.failed)) ids.push_back(id);
  }
  if (ids.empty()) return Usage("no window matches: nothing to re-run");
  // The lab runs one campaign's targets: the windows must all be of one campaign.
  std::set<int64_t> campaign_ids;
  {
    auto windows = (*store)->ListWindows({});
    if (!windows.ok()) return Usage(windows.status().message());
    std::set<int64_t> wanted(ids.begin(), ids.end());
    for (const WindowRow& w : *windows) {
      if (wanted.erase(w.id)) campaign_ids.insert(w.campaign_id);
    }
    if (!wanted.empty()) {
      return Usage("no window has id " + std::to_string(*wanted.begin()) + " in " + args.db);
    }
  }
  if (campaign_ids.size() != 1) {
    return Usage(
        "the windows belong to several campaigns; with --db, re-run one campaign at a "
        "time (--campaign NAME)");
  }
  auto row = (*store)->FindCampaignById(*campaign_ids.begin());
  if (!row.ok() || !*row) return Usage("the windows' campaign is missing from " + args.db);
  if ((*row)->state == "running") {
    return Usage("campaign \"" + (*row)->name +
                 "\" is running (another coordinator has it, or "
                 "one stopped mid-way: `benchlab run --resume` continues it)");
  }
  auto campaign = LabCampaign(**row);
  if (!campaign.ok()) return Usage(campaign.status().message());
  if (Status st = RequireCommands(*campaign); !st.ok()) return Usage(st.message());
  auto requested = (*store)->RequestReruns(ids);
  if (!requested.ok()) return Usage(requested.status().message());
  std::printf("re-running %zu window(s) of %s\n", ids.size(), (*row)->name.c_str());
  std::fflush(stdout);
  const int total = (*row)->total_windows;
  store->reset();  // the lab's coordinator owns the file from here

  LabJob job;
  job.campaign = std::move(campaign).value();
  job.total_windows = total;
  job.db = args.db;
  job.keep_work_dir = args.keep_work_dir;
  job.verb = "rerun";
  return RunOnEmbeddedLab(job);
}

int RunRerun(const RerunArgs& args) {
  if (args.ids.empty() && !args.invalid && !args.failed) {
    return Usage("give WINDOW_IDs, --invalid or --failed");
  }
  if (args.coordinator.empty() == args.db.empty()) {
    return Usage("give either --coordinator HOST:PORT or --db FILE");
  }
  return args.db.empty() ? RerunAtCoordinator(args) : RerunOnDatabase(args);
}

}  // namespace

CommandRunner AddRerunCommand(CLI::App& root) {
  auto args = std::make_shared<RerunArgs>();
  CLI::App* cmd = root.add_subcommand(
      "rerun",
      "Measure windows again, each as a new attempt on the pair its campaign ran on. "
      "The newest attempt of a window counts; earlier ones stay in the store.");
  cmd->add_option("window_ids", args->ids, "ids of windows (as `benchlab windows` lists them)");
  cmd->add_flag("--invalid", args->invalid, "every window whose newest attempt is invalid");
  cmd->add_flag("--failed", args->failed, "every window whose newest attempt failed");
  cmd->add_option("--campaign", args->campaign, "with --invalid/--failed: only this campaign");
  cmd->add_option("--coordinator", args->coordinator, "a running coordinator's HOST:PORT");
  AddTlsOptions(cmd, &args->tls);
  cmd->add_option("--db", args->db,
                  "a database file: the windows run on the embedded lab, as `run` does");
  cmd->add_flag("--no-wait", args->no_wait, "with --coordinator: ask and return at once");
  cmd->add_flag("--keep-work-dir", args->keep_work_dir, "with --db: keep the lab's logs");
  return [args] { return RunRerun(*args); };
}

}  // namespace benchlab
