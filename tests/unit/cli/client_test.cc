// The CLI's channel to a coordinator against a real one on loopback: replies past gRPC's
// default 4 MiB (the report of a long campaign) arrive whole.
#include "cli/client.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cli/commands.h"
#include "cli/report_fetch.h"
#include "coordinator/server/channel.h"
#include "coordinator/server/coordinator_daemon.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

TEST(ClientTest, PlannedWindowsSaysWhenTheTotalIsAnAdaptiveMaximum) {
  Campaign fixed;
  fixed.rounds = 3;
  EXPECT_EQ(PlannedWindows(fixed, 24), "24 windows");
  Campaign adaptive;
  adaptive.adaptive = true;
  adaptive.min_rounds = 3;
  adaptive.rounds = 20;
  EXPECT_EQ(PlannedWindows(adaptive, 160), "at most 160 windows (3 to 20 rounds, until decided)");
  Campaign fleet;
  fleet.all_pairs = true;
  EXPECT_EQ(PlannedWindows(fleet, 4), "4 windows per pair");
  adaptive.all_pairs = true;
  EXPECT_EQ(PlannedWindows(adaptive, 160),
            "at most 160 windows per pair (3 to 20 rounds, until decided)");
}

// A fleet campaign with pairs = "all" is submitted before it is placed: the reply counts one
// pair's plan, and the coordinator's count at the finish covers every pair it was placed on.
TEST(ClientTest, AFleetCampaignIsCompleteByTheCountItFinishedWith) {
  WatchOutcome outcome;
  outcome.finished = true;
  outcome.state = "done";
  for (const char* pair : {"srv1", "srv2"}) {
    for (int round = 1; round <= 2; ++round) {
      v1::Window w;
      w.set_pair(pair);
      w.set_target("hello");
      w.set_scenario("hello");
      w.set_load_level("c2");
      w.set_round(round);
      w.set_position(0);
      w.set_attempt(1);
      w.set_verdict("valid");
      outcome.windows.push_back(w);
    }
  }
  outcome.total_windows = 4;
  EXPECT_EQ(ReportOutcome(outcome, "hello", /*total_windows=*/2), 0)
      << "2 windows per pair, on 2 pairs";
  outcome.total_windows = 6;
  EXPECT_EQ(ReportOutcome(outcome, "hello", 2), 1) << "2 of the 6 windows planned are missing";
  outcome.total_windows = 0;
  EXPECT_EQ(ReportOutcome(outcome, "hello", 4), 0) << "no count at the finish: the caller's";
  EXPECT_EQ(ReportOutcome(outcome, "hello", 2), 1);
}

// --fail-on invalid (run, submit --wait): every window measured and one refused by the gates is
// kExitInvalid; without the flag it is kExitOk; a window not measured stays kExitFailure.
TEST(ClientTest, FailOnInvalidTellsARefusedWindowFromAMissingOne) {
  WatchOutcome outcome;
  outcome.finished = true;
  outcome.state = "done";
  for (int round = 1; round <= 3; ++round) {
    v1::Window w;
    w.set_target("hello");
    w.set_scenario("hello");
    w.set_load_level("c2");
    w.set_round(round);
    w.set_attempt(1);
    w.set_verdict("valid");
    outcome.windows.push_back(w);
  }
  EXPECT_EQ(ReportOutcome(outcome, "hello", 3, false, /*fail_on_invalid=*/true), kExitOk);
  outcome.windows[1].set_verdict("invalid");
  EXPECT_EQ(ReportOutcome(outcome, "hello", 3, false, false), kExitOk);
  EXPECT_EQ(ReportOutcome(outcome, "hello", 3, false, true), kExitInvalid);
  // A later valid attempt of the same window makes it count as valid.
  v1::Window again = outcome.windows[1];
  again.set_attempt(2);
  again.set_verdict("valid");
  outcome.windows.push_back(again);
  EXPECT_EQ(ReportOutcome(outcome, "hello", 3, false, true), kExitOk);
  outcome.windows.back().set_verdict("failed");
  EXPECT_EQ(ReportOutcome(outcome, "hello", 3, false, true), kExitFailure);
}

TEST(ClientTest, AReportOverFourMebibytesCrossesTheChannel) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("benchlab_client_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto daemon = CoordinatorDaemon::Create((dir / "bench.db").string());
  ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
  Store& store = (*daemon)->store();
  CampaignRow campaign;
  campaign.name = "long";
  campaign.spec_toml = "name = \"long\"\n";
  campaign.source = "long.toml";
  campaign.state = "done";
  auto id = store.CreateCampaign(campaign, {}, {});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  // 1,200 attempts whose records hold 4 KB each: a run of record of more than 5 MB.
  const std::string record = R"({"note": ")" + std::string(4096, 'x') + R"("})";
  for (int round = 1; round <= 1200; ++round) {
    WindowRow w;
    w.campaign_id = *id;
    w.target = "t";
    w.scenario = "s";
    w.connections = 1;
    w.load_level = "c1";
    w.round = round;
    w.verdict = "valid";
    w.started_at = w.ended_at = "2026-12-01T10:00:00Z";
    w.server_agent = "srv";
    w.load_agent = "ld";
    w.load_record = record;
    ASSERT_TRUE(store.InsertWindow(w, {}).ok());
  }
  auto bound = (*daemon)->Start({"127.0.0.1", 0});
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();

  auto report = FetchReport(bound->ToString(), "long", "json");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_GT(report->size(), size_t{4} << 20);
  EXPECT_LT(report->size(), size_t{kMaxGrpcMessageBytes});
  (*daemon)->Shutdown();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace benchlab
