// `benchlab windows`: lists stored windows, from a database file or from a coordinator.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/client.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/format_option.h"
#include "cli/report_lines.h"
#include "cli/text_width.h"
#include "cli/tls_options.h"
#include "coordinator/server/coordinator_service.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

struct WindowsArgs {
  std::string db;
  std::string coordinator;
  TlsFiles tls;  // --tls-*: mutual TLS to the coordinator
  std::string campaign;
  std::string format = "text";  // text | json | csv
};

int RunWindows(const WindowsArgs& args) {
  if (args.db.empty() == args.coordinator.empty()) {
    std::fprintf(stderr,
                 "benchlab windows: give exactly one of --db PATH or --coordinator "
                 "HOST:PORT\n");
    return kExitUsage;
  }
  std::vector<v1::Window> windows;
  if (!args.db.empty()) {
    if (!std::filesystem::exists(args.db)) {
      std::fprintf(stderr, "benchlab windows: --db: no database at %s\n", args.db.c_str());
      return kExitUsage;
    }
    auto store = Store::Open(args.db);
    if (!store.ok()) {
      std::fprintf(stderr, "benchlab windows: %s\n", store.status().message().c_str());
      return kExitFailure;
    }
    WindowFilter filter;
    if (!args.campaign.empty()) filter.campaign = args.campaign;
    auto rows = (*store)->ListWindows(filter);
    if (!rows.ok()) {
      std::fprintf(stderr, "benchlab windows: %s\n", rows.status().message().c_str());
      return kExitFailure;
    }
    for (const auto& row : *rows) WindowToProto(row, 0, &windows.emplace_back());
  } else {
    auto stub = ConnectCoordinator(args.coordinator, args.tls);
    if (!stub.ok()) {
      std::fprintf(stderr, "benchlab windows: %s\n", stub.status().message().c_str());
      return kExitUsage;
    }
    v1::ListWindowsRequest req;
    req.set_campaign(args.campaign);
    v1::ListWindowsReply reply;
    grpc::ClientContext ctx;
    SetDeadlineSeconds(ctx, 10);
    grpc::Status status = (*stub)->ListWindows(&ctx, req, &reply);
    if (!status.ok()) {
      return CommandError("windows", ExitCodeOf(status), CallError(status, args.coordinator));
    }
    windows.assign(reply.windows().begin(), reply.windows().end());
  }
  const std::string out = args.format == "json"  ? FormatWindowsJson(windows)
                          : args.format == "csv" ? FormatWindowsCsv(windows)
                                                 : FormatWindowTable(windows, OutputWidth());
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

}  // namespace

CommandRunner AddWindowsCommand(CLI::App& root) {
  auto args = std::make_shared<WindowsArgs>();
  CLI::App* cmd = root.add_subcommand("windows", "List stored windows, one row per attempt.");
  cmd->add_option("--db", args->db, "read this SQLite database directly");
  cmd->add_option("--coordinator", args->coordinator, "ask this coordinator (HOST:PORT)");
  AddTlsOptions(cmd, &args->tls);
  cmd->add_option("--campaign", args->campaign, "only this campaign's windows");
  AddFormatOption(cmd, &args->format, {"text", "json", "csv"},
                  "text (default: a table), json (an array of one object per attempt) or csv");
  AddWidthOption(cmd);
  return [args] { return RunWindows(*args); };
}

}  // namespace benchlab
