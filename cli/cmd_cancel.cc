// `benchlab cancel`: stops a queued or running campaign at a coordinator before its next window.
#include <cstdio>
#include <memory>

#include "cli/client.h"
#include "cli/command_error.h"
#include "cli/commands.h"
#include "cli/tls_options.h"

namespace benchlab {
namespace {

struct CancelArgs {
  std::string campaign;
  std::string coordinator = "127.0.0.1:7700";
  TlsFiles tls;  // --tls-*: mutual TLS to the coordinator
};

int RunCancel(const CancelArgs& args) {
  auto stub = ConnectCoordinator(args.coordinator, args.tls);
  if (!stub.ok()) {
    std::fprintf(stderr, "benchlab cancel: %s\n", stub.status().message().c_str());
    return kExitUsage;
  }
  v1::CancelCampaignRequest req;
  req.set_name(args.campaign);
  v1::CancelCampaignReply reply;
  grpc::ClientContext ctx;
  SetDeadlineSeconds(ctx, 10);
  grpc::Status status = (*stub)->CancelCampaign(&ctx, req, &reply);
  if (!status.ok()) {
    return CommandError("cancel", ExitCodeOf(status), CallError(status, args.coordinator));
  }
  std::printf("campaign %s cancelled (it was %s); windows stored so far are kept\n",
              args.campaign.c_str(), reply.previous_state().c_str());
  return kExitOk;
}

}  // namespace

CommandRunner AddCancelCommand(CLI::App& root) {
  auto args = std::make_shared<CancelArgs>();
  CLI::App* cmd = root.add_subcommand(
      "cancel",
      "Cancel a queued or running campaign; a running one stops before its next "
      "window.");
  cmd->add_option("campaign", args->campaign, "the campaign's name")->required();
  cmd->add_option("--coordinator", args->coordinator, "the coordinator's HOST:PORT")
      ->capture_default_str();
  AddTlsOptions(cmd, &args->tls);
  return [args] { return RunCancel(*args); };
}

}  // namespace benchlab
