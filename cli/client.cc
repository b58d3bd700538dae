#include "cli/client.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>

#include "cli/command_error.h"
#include "cli/report_fetch.h"
#include "cli/report_lines.h"
#include "cli/text_width.h"
#include "cli/tls_options.h"
#include "common/clock.h"
#include "common/parse.h"
#include "common/printable.h"
#include "common/text_table.h"
#include "coordinator/server/channel.h"
#include "rpc/status.h"

namespace benchlab {

Result<std::unique_ptr<v1::Coordinator::Stub>> ConnectCoordinator(const std::string& address,
                                                                  const TlsFiles& tls) {
  auto hp = ParseHostPort(address);
  if (!hp.ok()) return Status::InvalidArgument("--coordinator: " + hp.status().message());
  BENCHLAB_ASSIGN_OR_RETURN(const auto context, LoadTls(tls, {Role::kOperator, Role::kViewer}));
  return v1::Coordinator::NewStub(MakeChannel(
      hp->ToString(), context ? context->ChannelCredentials(Role::kCoordinator) : nullptr));
}

int ExitCodeOf(const grpc::Status& status) { return ExitCodeOf(rpc::FromGrpcStatus(status)); }

Status CallStatus(const grpc::Status& status, const std::string& address) {
  return Status(rpc::FromGrpcStatus(status).code(), CallError(status, address));
}

std::string CallError(const grpc::Status& status, const std::string& address) {
  const std::string& message = status.error_message();
  if (rpc::FromHandler(status) || status.ok()) return message;
  // gRPC's text names the cause last: "failed to connect to all addresses; last error: UNKNOWN:
  // ipv4:127.0.0.1:1: Failed to connect to remote host: Connection refused", "Socket closed".
  const size_t colon = message.rfind(": ");
  std::string cause = colon == std::string::npos ? message : message.substr(colon + 2);
  if (cause.size() > 80) cause = cause.substr(0, 77) + "...";
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return "cannot reach the coordinator at " + address + " (" + cause +
             "). Check that `benchlab coordinator` listens there; one that serves mutual TLS "
             "needs --ca, --cert and --key (or BENCHLAB_TLS_CA, _CERT, _KEY) from its CA.";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "the coordinator at " + address +
             " did not answer in time: it is overloaded, or the network to it drops packets.";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "the coordinator at " + address + " did not accept this certificate: " + message;
    default:
      return "the coordinator at " + address + ": " + message;
  }
}

void SetDeadlineSeconds(grpc::ClientContext& ctx, double seconds) {
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
}

Result<std::string> FetchReport(const std::string& address, const std::string& campaign,
                                const std::string& format, const TlsFiles& tls) {
  BENCHLAB_ASSIGN_OR_RETURN(const auto coordinator, ConnectCoordinator(address, tls));
  v1::GetReportRequest req;
  req.set_campaign(campaign);
  req.set_format(format);
  v1::GetReportReply reply;
  grpc::ClientContext ctx;
  SetDeadlineSeconds(ctx, 60);
  grpc::Status status = coordinator->GetReport(&ctx, req, &reply);
  if (status.ok()) return std::move(*reply.mutable_text());
  switch (status.error_code()) {
    case grpc::StatusCode::NOT_FOUND:
      return Status::NotFound(status.error_message());
    case grpc::StatusCode::INVALID_ARGUMENT:
      return Status::InvalidArgument(status.error_message());
    default:
      return Status::Unavailable(CallError(status, address));
  }
}

void WatchCanceller::Cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  if (ctx_ != nullptr) ctx_->TryCancel();
}

bool WatchCanceller::cancelled() {
  std::lock_guard lock(mu_);
  return cancelled_;
}

void WatchCanceller::Track(grpc::ClientContext* ctx) {
  std::lock_guard lock(mu_);
  ctx_ = ctx;
  if (ctx_ != nullptr && cancelled_) ctx_->TryCancel();
}

namespace {

int TerminalWidth() {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    int value = std::atoi(columns);
    if (value > 0) return value;
  }
  return 80;
}

void WriteStdout(const std::string& text) {
  if (text.empty()) return;
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

std::string PlannedWindows(const Campaign& campaign, int total_windows) {
  // With pairs = "all" the coordinator counts one pair's plan: the pairs are known once placed.
  const std::string windows =
      std::to_string(total_windows) + (campaign.all_pairs ? " windows per pair" : " windows");
  if (!campaign.adaptive) return windows;
  return "at most " + windows + " (" + std::to_string(campaign.min_rounds) + " to " +
         std::to_string(campaign.rounds) + " rounds, until decided)";
}

std::unique_ptr<ProgressPrinter> MakeStdoutProgress(ProgressMode mode, int total_windows,
                                                    bool at_most) {
  return std::make_unique<ProgressPrinter>(ResolveProgressMode(mode, isatty(fileno(stdout)) != 0),
                                           total_windows, RealClockInstance(), TerminalWidth,
                                           at_most, OutputWidth());
}

Result<WatchOutcome> WatchCampaign(v1::Coordinator::Stub& stub, const std::string& campaign,
                                   WatchCanceller& canceller, double call_seconds) {
  auto printer = MakeStdoutProgress(ProgressMode::kAuto, 0);
  return WatchCampaign(stub, campaign, canceller, *printer, call_seconds);
}

Result<WatchOutcome> WatchCampaign(v1::Coordinator::Stub& stub, const std::string& campaign,
                                   WatchCanceller& canceller, ProgressPrinter& printer,
                                   double call_seconds) {
  WatchOutcome outcome;
  int64_t last_id = 0;
  while (!outcome.finished && !canceller.cancelled()) {
    grpc::ClientContext ctx;
    SetDeadlineSeconds(ctx, call_seconds);
    canceller.Track(&ctx);
    v1::WatchCampaignRequest req;
    req.set_name(campaign);
    req.set_after_id(last_id);
    auto reader = stub.WatchCampaign(&ctx, req);
    v1::CampaignEvent event;
    while (reader->Read(&event)) {
      if (event.has_window()) {
        const auto& w = event.window();
        WriteStdout(printer.OnWindow(w));
        if (w.verdict() == "valid" || w.verdict() == "invalid") ++outcome.measured;
        if (w.verdict() == "valid") ++outcome.valid;
        outcome.windows.push_back(w);
        last_id = w.id();
      } else if (event.has_started()) {
        WriteStdout(printer.OnStarted(event.started()));
      } else if (event.event_case() == v1::CampaignEvent::kWaiting) {
        WriteStdout(printer.OnWaiting(event.waiting()));
      } else if (event.has_finished()) {
        outcome.finished = true;
        outcome.state = event.finished().state();
        outcome.error = event.finished().error();
        outcome.total_windows = event.finished().total_windows();
      }
    }
    grpc::Status status = reader->Finish();
    canceller.Track(nullptr);
    if (outcome.finished || canceller.cancelled()) break;
    if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) continue;  // resume
    WriteStdout(printer.Finish());
    return Status::Unavailable("watching campaign \"" + campaign + "\": " +
                               (status.ok() ? "the stream ended early" : status.error_message()));
  }
  WriteStdout(printer.Finish());
  return outcome;
}

std::vector<v1::Window> NewestAttempts(const std::vector<v1::Window>& windows) {
  using Key = std::tuple<std::string, std::string, std::string, int, int>;
  std::map<Key, size_t> newest;
  for (size_t i = 0; i < windows.size(); ++i) {
    const v1::Window& w = windows[i];
    const std::string level =
        w.load_level().empty() ? "c" + std::to_string(w.connections()) : w.load_level();
    auto [it, fresh] = newest.try_emplace(
        Key{w.pair() + "/" + w.target(), w.scenario(), level, w.round(), w.position()}, i);
    if (!fresh && w.attempt() > windows[it->second].attempt()) it->second = i;
  }
  std::vector<size_t> order;
  for (const auto& entry : newest) order.push_back(entry.second);
  std::sort(order.begin(), order.end());
  std::vector<v1::Window> out;
  for (size_t i : order) out.push_back(windows[i]);
  return out;
}

int ReportOutcome(const WatchOutcome& outcome, const std::string& baseline, int total_windows,
                  bool at_most, bool fail_on_invalid) {
  // Each window counts once, by its newest attempt; earlier attempts stay in the store.
  const std::vector<v1::Window> windows = NewestAttempts(outcome.windows);
  int valid = 0, measured = 0;
  for (const v1::Window& w : windows) {
    valid += w.verdict() == "valid";
    measured += w.verdict() == "valid" || w.verdict() == "invalid";
  }
  // A fleet campaign is reported pair by pair: each pair measured the whole matrix.
  std::map<std::string, std::vector<v1::Window>> by_pair;
  for (const v1::Window& w : windows) by_pair[w.pair()].push_back(w);
  for (const auto& [pair, pair_windows] : by_pair) {
    if (!pair.empty()) std::printf("pair %s\n", pair.c_str());
    std::printf("%s\n", FormatSummary(pair_windows, baseline, OutputWidth()).c_str());
  }
  const int attempts = static_cast<int>(outcome.windows.size());
  std::printf("%d windows: %d valid, %d invalid, %d failed or skipped (campaign %s)%s\n",
              static_cast<int>(windows.size()), valid, measured - valid,
              static_cast<int>(windows.size()) - measured,
              outcome.state.empty() ? "unfinished" : outcome.state.c_str(),
              attempts > static_cast<int>(windows.size())
                  ? (", " + std::to_string(attempts) + " attempts").c_str()
                  : "");
  if (!outcome.error.empty()) {
    std::fputs(WrapText("campaign error: " + PrintableText(outcome.error), OutputWidth()).c_str(),
               stdout);
  }
  std::fflush(stdout);
  const int count = static_cast<int>(windows.size());
  const int planned = outcome.total_windows > 0 ? outcome.total_windows : total_windows;
  const bool complete = at_most ? count <= planned : count == planned;
  bool all_measured = outcome.finished && outcome.state == "done" && measured == count && complete;
  if (!all_measured) return kExitFailure;
  if (fail_on_invalid && valid < measured) {
    std::fprintf(stderr, "benchlab: --fail-on invalid: %d of %d windows are invalid\n",
                 measured - valid, measured);
    return kExitInvalid;
  }
  return kExitOk;
}

}  // namespace benchlab
