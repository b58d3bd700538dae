// Client helpers shared by the commands that talk to a coordinator: a stub with a checked
// address, deadlines on every call, and watching a campaign to its end while printing each
// window as it finishes (with live progress, cli/progress.h) and a summary table at the end.
#pragma once

#include <grpcpp/client_context.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "benchlab/v1/coordinator.grpc.pb.h"
#include "cli/progress.h"
#include "common/status.h"
#include "coordinator/campaign.h"
#include "tls/files.h"

namespace benchlab {

// A stub for HOST:PORT whose channel carries messages up to kMaxGrpcMessageBytes (64 MiB,
// coordinator/server/channel.h); InvalidArgument when the address is malformed.
// With `tls` naming files (flags, else BENCHLAB_TLS_*), the channel is mutual TLS with an operator
// or viewer certificate and the coordinator must prove its role (rpc/tls.h); else plaintext.
Result<std::unique_ptr<v1::Coordinator::Stub>> ConnectCoordinator(const std::string& address,
                                                                  const TlsFiles& tls = {});

// The exit status (cli/commands.h) of a coordinator call that failed: ExitCodeOf the benchlab
// Status it stands for (rpc/status.h's FromGrpcStatus), so a refused request is kExitUsage and an
// unreachable coordinator kExitFailure, whichever command called.
int ExitCodeOf(const grpc::Status& status);

// What a failed call to the coordinator at `address` says to a person, with the next step where
// the cause is the connection (docs/cli.md, "Errors"): for a coordinator not reached (nothing
// listens there, or it serves mutual TLS the call did not offer or it did not accept) "cannot
// reach the coordinator at ADDRESS (gRPC's last words)" and what to check; for no answer in time,
// that; for a refused certificate, which. Else the coordinator's own message, which names the
// problem (an unknown campaign, a refused request).
std::string CallError(const grpc::Status& status, const std::string& address);

// Sets the call's deadline `seconds` from now.
void SetDeadlineSeconds(grpc::ClientContext& ctx, double seconds);

// A failed call to the coordinator at `address` as a Status: CallError's words, and the code the
// gRPC status stands for (rpc/status.h), so that CommandError gives the same exit status as
// ExitCodeOf(status).
Status CallStatus(const grpc::Status& status, const std::string& address);

// One unary call to the coordinator at `address`, `seconds` at most: Ok with *reply filled, or
// why not (a malformed address, CallStatus). The reading commands' one way to ask.
template <typename Request, typename Reply>
Status CallCoordinator(const std::string& address, const TlsFiles& tls, double seconds,
                       grpc::Status (v1::Coordinator::Stub::*method)(grpc::ClientContext*,
                                                                     const Request&, Reply*),
                       const Request& request, Reply* reply) {
  auto stub = ConnectCoordinator(address, tls);
  if (!stub.ok()) return stub.status();
  grpc::ClientContext ctx;
  SetDeadlineSeconds(ctx, seconds);
  const grpc::Status status = ((**stub).*method)(&ctx, request, reply);
  return status.ok() ? Status::Ok() : CallStatus(status, address);
}

struct WatchOutcome {
  bool finished = false;  // the campaign reached a final state
  std::string state;      // done | failed | cancelled
  std::string error;      // the campaign's error, when failed
  std::vector<v1::Window> windows;
  int measured = 0;  // valid + invalid
  int valid = 0;
  // The campaign's windows planned, as the coordinator counted them when it finished; 0 when the
  // watch ended before. A fleet campaign with pairs = "all" knows this only once it is placed.
  int total_windows = 0;
};

// Lets another thread stop a watch (Ctrl-C): Cancel() cancels the call in flight and any later.
class WatchCanceller {
 public:
  void Cancel();
  bool cancelled();
  // The call in flight; nullptr between calls.
  void Track(grpc::ClientContext* ctx);

 private:
  std::mutex mu_;
  grpc::ClientContext* ctx_ = nullptr;
  bool cancelled_ = false;
};

// "24 windows"; for an adaptive plan "at most 160 windows (3 to 20 rounds, until decided)"; for
// a campaign with pairs = "all", whose pairs are not known before it is placed, "24 windows per
// pair".
std::string PlannedWindows(const Campaign& campaign, int total_windows);

// A printer to this process's stdout: `mode` resolved by whether stdout is a terminal, the real
// clock, the terminal's width (TIOCGWINSZ, else $COLUMNS, else 80). `at_most`: the total is an
// adaptive plan's maximum (Progress).
std::unique_ptr<ProgressPrinter> MakeStdoutProgress(ProgressMode mode, int total_windows,
                                                    bool at_most = false);

// Streams the campaign's windows, writing to stdout what `printer` makes of each event (each
// window's FormatWindowLine as it arrives, and the progress its mode shows); the status line is
// erased before it returns. Each call carries a deadline (`call_seconds`); when it passes, the
// watch resumes after the last window seen. Returns when the campaign ends, the coordinator
// fails, or it is cancelled.
Result<WatchOutcome> WatchCampaign(v1::Coordinator::Stub& stub, const std::string& campaign,
                                   WatchCanceller& canceller, ProgressPrinter& printer,
                                   double call_seconds = 300);
// The same with MakeStdoutProgress(ProgressMode::kAuto, 0): the total comes with the windows.
Result<WatchOutcome> WatchCampaign(v1::Coordinator::Stub& stub, const std::string& campaign,
                                   WatchCanceller& canceller, double call_seconds = 300);

// The newest attempt of each window (by target, scenario, load level, round and position), in
// the order their newest attempts arrived.
std::vector<v1::Window> NewestAttempts(const std::vector<v1::Window>& windows);

// Prints the summary table and the final counts over each window's newest attempt; returns the exit
// status: 0 when the campaign is done and every window of it was measured (valid or invalid), 1
// otherwise; with fail_on_invalid, 4 (kExitInvalid) in place of 0 when one of them is invalid.
// total_windows is the plan's size: the count the campaign must have, or with at_most (an adaptive
// plan, which stops each cell once it is decided) the most it may have; the coordinator's count at
// the finish (outcome.total_windows) takes its place when there is one, since a campaign with pairs
// = "all" runs the plan once per pair it was placed on.
int ReportOutcome(const WatchOutcome& outcome, const std::string& baseline, int total_windows,
                  bool at_most = false, bool fail_on_invalid = false);

}  // namespace benchlab
