// `benchlab agents`: the coordinator's fleet, one row per agent with its state and lease age
// (docs/fleet.md), or JSON with --json.
#include <cstdio>
#include <memory>
#include <vector>

#include "cli/agents_format.h"
#include "cli/client.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/text_width.h"
#include "cli/tls_options.h"

namespace benchlab {
namespace {

struct AgentsArgs {
  std::string coordinator = "127.0.0.1:7700";  // the coordinator's default --listen
  TlsFiles tls;                                // --tls-*: mutual TLS to the coordinator
  bool json = false;
  double timeout_s = 10;
};

int RunAgents(const AgentsArgs& args) {
  auto stub = ConnectCoordinator(args.coordinator, args.tls);
  if (!stub.ok()) {
    std::fprintf(stderr, "benchlab agents: %s\n", stub.status().message().c_str());
    return kExitUsage;
  }
  v1::ListAgentsReply reply;
  grpc::ClientContext ctx;
  SetDeadlineSeconds(ctx, args.timeout_s);
  grpc::Status status = (*stub)->ListAgents(&ctx, v1::ListAgentsRequest(), &reply);
  if (!status.ok()) {
    return CommandError("agents", ExitCodeOf(status), CallError(status, args.coordinator));
  }
  std::vector<v1::AgentInfo> agents(reply.agents().begin(), reply.agents().end());
  std::string out = args.json ? FormatAgentsJson(agents) : FormatAgentTable(agents, OutputWidth());
  std::fwrite(out.data(), 1, out.size(), stdout);
  const std::string warnings = CertificateWarnings(agents, std::chrono::system_clock::now());
  std::fwrite(warnings.data(), 1, warnings.size(), stderr);
  return kExitOk;
}

}  // namespace

CommandRunner AddAgentsCommand(CLI::App& root) {
  auto args = std::make_shared<AgentsArgs>();
  CLI::App* cmd = root.add_subcommand(
      "agents",
      "List the coordinator's agents: state (ready, busy, suspect, lost), roles, "
      "labels, address, lease age and targets.");
  cmd->add_option("--coordinator", args->coordinator, "the coordinator's HOST:PORT")
      ->capture_default_str();
  AddTlsOptions(cmd, &args->tls);
  cmd->add_flag("--json", args->json, "print JSON instead of a table");
  AddWidthOption(cmd);
  cmd->add_option("--timeout", args->timeout_s, "seconds to wait for the coordinator")
      ->default_val(10)
      ->check(CLI::PositiveNumber);
  return [args] { return RunAgents(*args); };
}

}  // namespace benchlab
