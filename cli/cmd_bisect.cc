// `benchlab bisect CAMPAIGN.toml --target T --good REV --bad REV --db FILE`: finds the commit
// that made a target slower on one cell, on the embedded lab (cli/bisect_run.h; docs/cli.md;
// docs/methodology.md, "Bisection"). `--status ID` prints a stored search. With --coordinator,
// the coordinator runs the search on a pair of its agents (docs/methodology.md, "On a
// coordinator").
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/bisect_run.h"
#include "cli/client.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/tls_options.h"

namespace benchlab {
namespace {

struct BisectArgs {
  BisectJob job;
  std::string progress = "auto";
  std::string format = "text";
  int64_t status_id = 0;
  std::string coordinator;  // HOST:PORT: the coordinator runs the search on a pair of agents
  TlsFiles tls;             // --tls-*: mutual TLS to the coordinator
  bool wait = false;        // with --coordinator: until the search ends
};

// A stored search on the coordinator, as text or JSON (GetBisection); `state` gets its state.
int ShowBisectionOnCoordinator(const BisectArgs& args, v1::Coordinator::StubInterface& coordinator,
                               int64_t id, const std::string& format, std::string* text) {
  v1::GetBisectionRequest req;
  req.set_id(id);
  req.set_format(format);
  v1::GetBisectionReply reply;
  grpc::ClientContext ctx;
  SetDeadlineSeconds(ctx, 30);
  grpc::Status status = coordinator.GetBisection(&ctx, req, &reply);
  if (!status.ok()) {
    return CommandError("bisect", ExitCodeOf(status), CallError(status, args.coordinator));
  }
  *text = reply.text();
  return kExitOk;
}

// `--coordinator`: starts the search there (StartBisection, operators only) or shows one
// (--status); with --wait, polls it until it has ended and prints it.
int BisectOnCoordinator(BisectArgs& args) {
  if (!args.job.db.empty() || args.job.resume > 0) {
    return CommandError("bisect", kExitUsage,
                        std::string(args.job.resume > 0 ? "--resume" : "--db") +
                            ": not with --coordinator, whose database holds the search and "
                            "which goes on with it by itself after a restart");
  }
  auto coordinator = ConnectCoordinator(args.coordinator, args.tls);
  if (!coordinator.ok()) {
    return CommandError("bisect", kExitUsage, std::string(coordinator.status().message()));
  }
  const std::string format = args.job.json ? "json" : "text";
  std::string text;
  int64_t id = args.status_id;
  if (id == 0) {
    v1::StartBisectionRequest req;
    req.set_change(args.job.change);
    req.set_max_rounds(args.job.max_rounds);
    req.set_figure(args.job.figure);
    if (args.job.change == 0) {
      std::ifstream in(args.job.campaign_path, std::ios::binary);
      if (!in)
        return CommandError("bisect", kExitUsage, "no campaign file " + args.job.campaign_path);
      std::ostringstream spec;
      spec << in.rdbuf();
      req.set_spec_toml(spec.str());
      req.set_source(std::filesystem::path(args.job.campaign_path).filename().string());
      req.set_target(args.job.target);
      req.set_good(args.job.good);
      req.set_bad(args.job.bad);
      req.set_cell(args.job.cell);
    }
    v1::StartBisectionReply reply;
    grpc::ClientContext ctx;
    SetDeadlineSeconds(ctx, 90);  // the server agent lists the range first
    grpc::Status status = (*coordinator)->StartBisection(&ctx, req, &reply);
    if (!status.ok()) {
      return CommandError("bisect", ExitCodeOf(status), CallError(status, args.coordinator));
    }
    id = reply.id();
    std::fprintf(args.job.json ? stderr : stdout, "%s\n", reply.summary().c_str());
    if (!args.wait) {
      std::printf(args.job.json
                      ? "{\"id\": %lld}\n"
                      : "the coordinator runs it; `benchlab bisect --status %lld --coordinator "
                        "ADDR` shows where it stands\n",
                  static_cast<long long>(id));
      return kExitOk;
    }
  }
  while (true) {
    if (int st = ShowBisectionOnCoordinator(args, **coordinator, id, "json", &text);
        st != kExitOk) {
      return st;
    }
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    const std::string state = j.is_object() && j.contains("state") && j["state"].is_string()
                                  ? j["state"].get<std::string>()
                                  : "";
    if (!args.wait || state != "running") break;
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  if (format == "text") {
    if (int st = ShowBisectionOnCoordinator(args, **coordinator, id, "text", &text);
        st != kExitOk) {
      return st;
    }
  }
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

int RunBisectCommand(BisectArgs& args) {
  args.job.json = args.format == "json";
  if (!args.coordinator.empty()) {
    if (args.status_id == 0 && args.job.change == 0) {
      for (const auto& [flag, value] :
           {std::pair{"CAMPAIGN", &args.job.campaign_path}, std::pair{"--target", &args.job.target},
            std::pair{"--good", &args.job.good}, std::pair{"--bad", &args.job.bad}}) {
        if (value->empty()) {
          return CommandError("bisect", kExitUsage,
                              std::string(flag) + " is required (or --change ID, or --status ID)");
        }
      }
    }
    return BisectOnCoordinator(args);
  }
  if (args.wait) return CommandError("bisect", kExitUsage, "--wait: only with --coordinator");
  if (args.status_id > 0) {
    if (args.job.db.empty()) return CommandError("bisect", kExitUsage, "--status needs --db FILE");
    return ShowBisection(args.job.db, args.status_id, args.job.json);
  }
  if (args.job.resume > 0) {
    if (args.job.db.empty()) return CommandError("bisect", kExitUsage, "--resume needs --db FILE");
    args.job.progress = ParseProgressMode(args.progress).value_or(ProgressMode::kAuto);
    return RunBisection(args.job);
  }
  if (args.job.change > 0) {
    // The change names the line, the figure and both builds.
    for (const auto& [flag, value] :
         {std::pair{"CAMPAIGN", &args.job.campaign_path}, std::pair{"--target", &args.job.target},
          std::pair{"--good", &args.job.good}, std::pair{"--bad", &args.job.bad},
          std::pair{"--cell", &args.job.cell}}) {
      if (!value->empty()) {
        return CommandError("bisect", kExitUsage,
                            std::string(flag) + ": not with --change, which names it");
      }
    }
    if (args.job.db.empty()) return CommandError("bisect", kExitUsage, "--change needs --db FILE");
  } else {
    for (const auto& [flag, value] :
         {std::pair{"CAMPAIGN", &args.job.campaign_path}, std::pair{"--target", &args.job.target},
          std::pair{"--good", &args.job.good}, std::pair{"--bad", &args.job.bad},
          std::pair{"--db", &args.job.db}}) {
      if (value->empty()) {
        return CommandError(
            "bisect", kExitUsage,
            std::string(flag) + " is required (or --change ID, or --status ID, with --db)");
      }
    }
  }
  args.job.progress = ParseProgressMode(args.progress).value_or(ProgressMode::kAuto);
  return RunBisection(args.job);
}

}  // namespace

CommandRunner AddBisectCommand(CLI::App& root) {
  auto args = std::make_shared<BisectArgs>();
  CLI::App* cmd = root.add_subcommand(
      "bisect",
      "Find the commit that made a target worse on one cell: each commit between --good and "
      "--bad is built by the server agent and measured against both ends, interleaved, until "
      "it is like one of them, on the embedded lab (docs/methodology.md, \"Bisection\").");
  cmd->add_option("campaign", args->job.campaign_path,
                  "the campaign file: its target (with `source` and `build`), cell and settings");
  cmd->add_option("--target", args->job.target, "the target to bisect");
  cmd->add_option("--good", args->job.good, "a revision of the target's source that is good");
  cmd->add_option("--bad", args->job.bad, "a later revision on its first-parent line that is bad");
  cmd->add_option("--cell", args->job.cell,
                  "SCENARIO/LEVEL, such as json/c64; needed when the campaign has several");
  cmd->add_option("--figure", args->job.figure, "rps, cpu, p99 or a figure's full name")
      ->capture_default_str();
  args->job.figure = "cpu";
  cmd->add_option("--db", args->job.db, "the SQLite database the search and its windows go to");
  cmd->add_option("--max-rounds", args->job.max_rounds,
                  "rounds at one commit before it is called undecided")
      ->check(CLI::Range(3, 1000))
      ->capture_default_str();
  cmd->add_option("--change", args->job.change,
                  "bisect this confirmed change (`benchlab regressions` lists them): its line, "
                  "figure and the versions its builds recorded, revisions of the target's source")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--campaign-dir", args->job.campaign_dir,
                  "with --change: the directory that fills {campaign_dir} in the stored file")
      ->capture_default_str();
  cmd->add_option("--resume", args->job.resume,
                  "go on with the stored bisection of this id from its last decided step")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--status", args->status_id, "print the stored bisection of this id and exit")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--format", args->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--progress", args->progress, "auto, tty, plain or off, as for `benchlab run`")
      ->check(CLI::IsMember({"auto", "tty", "plain", "off"}))
      ->capture_default_str();
  cmd->add_flag("--keep-work-dir", args->job.keep_work_dir,
                "keep the labs' logs and run directories");
  cmd->add_option("--coordinator", args->coordinator,
                  "the coordinator's HOST:PORT: it runs the search on the pair of agents the "
                  "change ran on, or the campaign's [placement] names (operators only)");
  cmd->add_flag("--wait", args->wait,
                "with --coordinator: wait until the search ends, then print it");
  AddTlsOptions(cmd, &args->tls);
  return [args] { return RunBisectCommand(*args); };
}

}  // namespace benchlab
