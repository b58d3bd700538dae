// Tests of the coordinator's HTTP API (docs/api.md): the documents built from a real store in a
// temporary directory, then the same through a real socket with cpp-httplib's client.
#include "coordinator/server/http_api.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/folded_profile.h"
#include "common/histogram.h"
#include "coordinator/dashboard_token.h"
#include "coordinator/server/agent_registry.h"
#include "coordinator/server/metrics.h"
#include "coordinator/server/scheduler.h"
#include "tests/unit/support/slow_clients.h"
#include "tls/ca.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

constexpr const char* kSpec = R"(name = "demo"
baseline = "nginx"
[matrix]
connections = [64]
rounds = 2
warmup = "100ms"
duration = "1s"
[[target]]
name = "nginx"
[[target]]
name = "hello-server"
[[scenario]]
name = "plaintext"
path = "/"
expect = { status = 200 }
)";

std::string HistogramOf(std::initializer_list<uint64_t> values) {
  Histogram h;
  for (uint64_t v : values) h.Record(v);
  return h.Serialize();
}

WindowRow Window(const std::string& target, int round, int position, double rps) {
  WindowRow w;
  w.campaign = "demo";
  w.target = target;
  w.scenario = "plaintext";
  w.connections = 64;
  w.load_level = "c64";
  w.round = round;
  w.position = position;
  w.verdict = "valid";
  w.reasons = "[]";
  w.started_at = "2026-11-30T10:00:00Z";
  w.ended_at = "2026-11-30T10:00:01Z";
  w.server_agent = "server";
  w.load_agent = "load";
  w.requests = static_cast<uint64_t>(rps);
  w.duration_s = 1;
  w.rps = rps;
  w.p50_us = 100;
  w.p99_us = 300;
  w.server_cpu_s = 0.5;
  w.cpu_us_per_request = 0.5e6 / rps;
  w.histogram = HistogramOf({100, 100, 120, 300, 5000});
  return w;
}

class HttpApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("benchlab_http_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = Store::Open((dir_ / "bench.db").string());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(*store);
    CampaignRow c;
    c.name = "demo";
    c.baseline = "nginx";
    c.spec_toml = kSpec;
    c.source = "demo.toml";
    c.total_windows = 4;
    c.state = "running";
    auto id = store_->CreateCampaign(c, {{"nginx", "[]", ""}, {"hello-server", "[]", ""}},
                                     {{"plaintext", "scenario", "GET", "/", 200, ""}});
    ASSERT_TRUE(id.ok()) << id.status().message();
    campaign_id_ = *id;

    // Round 1: both valid. Round 2: nginx valid; hello-server invalid, then re-run valid.
    // A window of round 2 is left for the claim test.
    nginx1_ = Insert(Window("nginx", 1, 0, 50000),
                     {{"server", 0.1, 90, 2048},
                      {"server", 0.2, 95, 2100},
                      {"load", 1.0, 0, 0, 50000, {}, {}, {}, int64_t{300}}});
    Insert(Window("hello-server", 1, 1, 60000), {});
    Insert(Window("nginx", 2, 1, 52000), {});
    WindowRow bad = Window("hello-server", 2, 0, 20000);
    bad.verdict = "invalid";
    bad.reasons = R"(["foreign_cpu: server host 80% > 25%"])";
    invalid_ = Insert(bad, {});
    WindowRow again = Window("hello-server", 2, 0, 61000);
    again.attempt = 2;
    rerun_ = Insert(again, {});
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  int64_t Insert(WindowRow w, const std::vector<SampleRow>& samples) {
    w.campaign_id = campaign_id_;
    auto id = store_->InsertWindow(w, samples);
    EXPECT_TRUE(id.ok()) << id.status().message();
    return id.ok() ? *id : 0;
  }

  fs::path dir_;
  std::unique_ptr<Store> store_;
  int64_t campaign_id_ = 0;
  int64_t nginx1_ = 0, invalid_ = 0, rerun_ = 0;
};

TEST_F(HttpApiTest, CampaignListCountsNewestAttempts) {
  auto doc = CampaignListDoc(*store_);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const auto& list = (*doc)["campaigns"];
  ASSERT_EQ(list.size(), 1u);
  const auto& c = list[0];
  EXPECT_EQ(c["name"], "demo");
  EXPECT_EQ(c["state"], "running");
  EXPECT_EQ(c["total_windows"], 4);
  EXPECT_EQ(c["windows"], 4);  // 5 attempts of 4 windows
  EXPECT_EQ(c["valid"], 4);    // the invalid attempt was replaced by a valid one
  EXPECT_EQ(c["invalid"], 0);
  EXPECT_EQ(c["running"], 0);
  EXPECT_TRUE(c["finished_at"].is_null());
  EXPECT_EQ(c["gates_in_force"], "enforce");  // the file has no [gates] mode: the default
}

// The list says which gate mode each campaign's windows were judged in, as its run of record
// does: --gates's override, else the file's [gates] mode, else null (a file that no longer
// parses), so that a page never shows a warn-mode campaign's windows as judged valid.
TEST_F(HttpApiTest, CampaignListSaysTheGateModeEachCampaignWasJudgedIn) {
  auto add = [&](const std::string& name, const std::string& spec, const std::string& gates) {
    CampaignRow c;
    c.name = name;
    c.spec_toml = spec;
    c.source = name + ".toml";
    c.gates_mode = gates;
    auto id = store_->CreateCampaign(c, {{"nginx", "[]", ""}}, {});
    ASSERT_TRUE(id.ok()) << id.status().message();
  };
  add("overridden", kSpec, "warn");
  add("file-warn", std::string(kSpec) + "[gates]\nmode = \"warn\"\n", "");
  add("file-warn-enforced", std::string(kSpec) + "[gates]\nmode = \"warn\"\n", "enforce");
  add("unreadable", "name = [", "");
  auto doc = CampaignListDoc(*store_);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  std::map<std::string, ojson> mode;
  for (const auto& c : (*doc)["campaigns"])
    mode[c["name"].get<std::string>()] = c["gates_in_force"];
  EXPECT_EQ(mode["demo"], "enforce");
  EXPECT_EQ(mode["overridden"], "warn");
  EXPECT_EQ(mode["file-warn"], "warn");
  EXPECT_EQ(mode["file-warn-enforced"], "enforce");
  EXPECT_TRUE(mode["unreadable"].is_null()) << mode["unreadable"];
  // The campaign document's run of record says the same.
  for (const char* name : {"overridden", "file-warn", "file-warn-enforced", "unreadable"}) {
    auto one = CampaignDoc(*store_, name);
    ASSERT_TRUE(one.ok()) << name << ": " << one.status().message();
    EXPECT_EQ((*one)["record"]["campaign"]["gates_in_force"], mode[name]) << name;
  }
  // And a window's document: its page shows a valid window of a warn-mode campaign as not judged.
  auto demo_window = WindowDoc(*store_, invalid_);
  ASSERT_TRUE(demo_window.ok()) << demo_window.status().message();
  EXPECT_EQ((*demo_window)["gates_in_force"], "enforce");
  auto overridden = store_->FindCampaign("overridden");
  ASSERT_TRUE(overridden.ok() && overridden->has_value());
  WindowRow w;
  w.campaign = "overridden";
  w.campaign_id = (**overridden).id;
  w.target = "nginx";
  w.scenario = "hello";
  w.connections = 8;
  w.load_level = "c8";
  w.round = 1;
  w.verdict = "valid";
  w.reasons = "[]";
  auto id = store_->InsertWindow(w, {});
  ASSERT_TRUE(id.ok()) << id.status().message();
  auto warned = WindowDoc(*store_, *id);
  ASSERT_TRUE(warned.ok()) << warned.status().message();
  EXPECT_EQ((*warned)["gates_in_force"], "warn");
}

TEST_F(HttpApiTest, CampaignDocIsTheRunOfRecordWithProgress) {
  auto doc = CampaignDoc(*store_, "demo");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const auto& record = (*doc)["record"];
  EXPECT_EQ(record["format"], "benchlab-run-of-record");
  EXPECT_EQ(record["windows"].size(), 4u);
  const auto& progress = (*doc)["progress"];
  EXPECT_EQ(progress["total"], 4);
  EXPECT_EQ(progress["done"], 4);
  EXPECT_EQ(progress["valid"], 4);
  EXPECT_TRUE(progress["running"].empty());
  const std::string before = progress["version"];

  // A claimed window shows as running and changes the version; so does a re-run request.
  WindowClaim claim{
      campaign_id_, {"nginx", "plaintext", "c64", 1, 0, ""}, false, 64, 2, "server", "load", ""};
  ASSERT_TRUE(store_->ClaimWindow(claim).ok());
  auto running = CampaignDoc(*store_, "demo");
  ASSERT_TRUE(running.ok());
  const auto& now = (*running)["progress"];
  ASSERT_EQ(now["running"].size(), 1u);
  EXPECT_EQ(now["running"][0]["target"], "nginx");
  EXPECT_EQ(now["running"][0]["attempt"], 2);
  EXPECT_FALSE(now["running"][0]["started_at"].get<std::string>().empty());
  EXPECT_NE(now["version"], before);

  ASSERT_TRUE(store_->RequestReruns({nginx1_}).ok());
  auto queued = CampaignDoc(*store_, "demo");
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ((*queued)["progress"]["reruns_pending"], 1);
  EXPECT_NE((*queued)["progress"]["version"], now["version"]);
}

TEST_F(HttpApiTest, CampaignVersionIsTheDocumentsWithoutBuildingIt) {
  auto doc = CampaignDoc(*store_, "demo");
  ASSERT_TRUE(doc.ok());
  auto version = CampaignVersion(*store_, "demo");
  ASSERT_TRUE(version.ok()) << version.status().message();
  EXPECT_EQ(*version, (*doc)["progress"]["version"]);
  // A stored attempt moves it.
  WindowRow third = Window("nginx", 2, 1, 53000);
  third.attempt = 2;
  Insert(third, {});
  auto after = CampaignVersion(*store_, "demo");
  ASSERT_TRUE(after.ok());
  EXPECT_NE(*after, *version);
  EXPECT_EQ(*after, (*CampaignDoc(*store_, "demo"))["progress"]["version"]);
  // So does the state.
  ASSERT_TRUE(store_->SetCampaignState(campaign_id_, CampaignState::kDone, "").ok());
  EXPECT_NE(*CampaignVersion(*store_, "demo"), *after);
  auto missing = CampaignVersion(*store_, "helo");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST_F(HttpApiTest, UnknownCampaignIsNotFoundAndNamesTheCampaigns) {
  auto doc = CampaignDoc(*store_, "helo");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kNotFound);
  EXPECT_NE(doc.status().message().find("demo"), std::string::npos) << doc.status().message();
}

TEST_F(HttpApiTest, WindowDocHasEveryAttemptSamplesAndHistogram) {
  auto doc = WindowDoc(*store_, invalid_);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["campaign"], "demo");
  const auto& w = (*doc)["window"];
  EXPECT_EQ(w["id"], invalid_);
  EXPECT_EQ(w["target"], "hello-server");
  EXPECT_EQ(w["round"], 2);
  EXPECT_EQ(w["verdict"], "invalid");
  EXPECT_EQ(w["newest"], false);
  ASSERT_EQ(w["reasons"].size(), 1u);
  EXPECT_EQ(w["reasons"][0], "foreign_cpu: server host 80% > 25%");
  const auto& attempts = (*doc)["attempts"];
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0]["id"], invalid_);
  EXPECT_EQ(attempts[1]["id"], rerun_);
  EXPECT_EQ(attempts[1]["newest"], true);
  // The newest attempt is valid: nothing to re-run.
  EXPECT_EQ((*doc)["rerunnable"], false);
  EXPECT_EQ((*doc)["histogram"]["count"], 5);

  auto with_samples = WindowDoc(*store_, nginx1_);
  ASSERT_TRUE(with_samples.ok());
  const auto& samples = (*with_samples)["samples"];
  ASSERT_EQ(samples["server"].size(), 2u);
  EXPECT_DOUBLE_EQ(samples["server"][1]["cpu_pct"].get<double>(), 95);
  EXPECT_TRUE(samples["server"][0]["host_busy_pct"].is_null());
  ASSERT_EQ(samples["load"].size(), 1u);
  EXPECT_DOUBLE_EQ(samples["load"][0]["rps"].get<double>(), 50000);
  EXPECT_EQ(samples["load"][0]["p99_us"], 300);
}

// The window page shows each side service and probe of the attempt (docs/services.md); the
// attempts carry the services' CPU per request and the total when they ran with services.
TEST_F(HttpApiTest, WindowDocHasTheServicesAndProbesOfTheAttempt) {
  auto plain = WindowDoc(*store_, nginx1_);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE((*plain)["services"].empty());
  EXPECT_TRUE((*plain)["probes"].empty());
  EXPECT_FALSE((*plain)["window"].contains("services_cpu_s"));

  ServiceRow pg;
  pg.service = "pg";
  pg.cpu_user_s = 0.25;
  pg.cpu_sys_s = 0.125;
  pg.rss_mean_kb = 30000;
  pg.rss_peak_kb = 32000;
  pg.cpu_accounting = "cgroup";
  pg.started = true;
  pg.startup_ms = 812;
  pg.reset_ms = 14.5;
  ServiceRow cache = pg;
  cache.service = "cache";
  cache.cpu_user_s = 0.0625;
  cache.cpu_sys_s = 0.0625;
  cache.started = false;
  cache.startup_ms = std::nullopt;
  cache.reset_ms = std::nullopt;
  ProbeRow checkpoints{"pg", "checkpoints", 3, 4, 1, ""};
  ProbeRow vacuums{"pg", "vacuums", 9, std::nullopt, std::nullopt, "no reading after"};
  WindowRow w = Window("nginx", 3, 0, 50000);  // 0.5 s of the target's CPU: 10 us per request
  w.campaign_id = campaign_id_;
  auto id = store_->InsertWindow(w, {}, {pg, cache}, {checkpoints, vacuums});
  ASSERT_TRUE(id.ok()) << id.status().message();
  auto doc = WindowDoc(*store_, *id);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const auto& services = (*doc)["services"];
  ASSERT_EQ(services.size(), 2u);
  EXPECT_EQ(services[0]["service"], "cache");  // by name
  EXPECT_EQ(services[0]["started"], false);
  EXPECT_TRUE(services[0]["reset_ms"].is_null());
  EXPECT_EQ(services[1]["service"], "pg");
  EXPECT_DOUBLE_EQ(services[1]["cpu_user_s"].get<double>(), 0.25);
  // 0.375 s over 50000 requests: 7.5 us each.
  EXPECT_DOUBLE_EQ(services[1]["cpu_us_per_request"].get<double>(), 7.5);
  EXPECT_EQ(services[1]["rss_peak_kb"], 32000);
  EXPECT_EQ(services[1]["started"], true);
  EXPECT_DOUBLE_EQ(services[1]["startup_ms"].get<double>(), 812);
  EXPECT_DOUBLE_EQ(services[1]["reset_ms"].get<double>(), 14.5);
  EXPECT_EQ(services[1]["alive"], true);
  const auto& probes = (*doc)["probes"];
  ASSERT_EQ(probes.size(), 2u);
  EXPECT_DOUBLE_EQ(probes[0]["delta"].get<double>(), 1);
  EXPECT_EQ(probes[0]["unavailable"], "");
  EXPECT_TRUE(probes[1]["delta"].is_null());
  EXPECT_TRUE(probes[1]["after"].is_null());
  EXPECT_EQ(probes[1]["unavailable"], "no reading after");
  // 0.375 + 0.125 = 0.5 s: 10 us per request, 20 us with the target's.
  const auto& attempt = (*doc)["window"];
  EXPECT_DOUBLE_EQ(attempt["services_cpu_s"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(attempt["service_cpu_us_per_request"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(attempt["total_cpu_us_per_request"].get<double>(), 20);
  EXPECT_EQ((*doc)["attempts"][0]["services_cpu_s"], attempt["services_cpu_s"]);
}

// A profiled campaign "prof" beside "demo": two rounds of one cell, nginx spending its time in
// ngx_work and ngx_gone, hello-server in SpendCpu and never in ngx_gone. Returns hello-server's
// last window's id.
int64_t AddProfiledCampaign(Store& store) {
  CampaignRow c;
  c.name = "prof";
  c.baseline = "nginx";
  c.spec_toml = kSpec;
  c.source = "prof.toml";
  c.total_windows = 4;
  c.state = "done";
  auto id = store.CreateCampaign(c, {{"nginx", "[]", ""}, {"hello-server", "[]", ""}},
                                 {{"plaintext", "scenario", "GET", "/", 200, ""}});
  EXPECT_TRUE(id.ok()) << id.status().message();
  int64_t last = 0;
  for (int round = 1; round <= 2; ++round) {
    for (const std::string target : {"nginx", "hello-server"}) {
      WindowRow w = Window(target, round, target == "nginx" ? 0 : 1, 50000);
      w.campaign = "prof";
      w.campaign_id = id.ok() ? *id : 0;
      auto parsed = ParseFolded(
          target == "nginx" ? "nginx;main;ngx_work 60\nnginx;main;ngx_gone 20\nnginx;main 20\n"
                            : "hello-server;main;SpendCpu 60\nhello-server;main 20\n");
      EXPECT_TRUE(parsed.ok()) << parsed.status().message();
      auto packed = CompressFolded(*parsed);
      EXPECT_TRUE(packed.ok()) << packed.status().message();
      auto window =
          store.InsertWindow(w, {}, {}, {}, ProfileRow{0, 99, parsed->samples(), *packed, ""});
      EXPECT_TRUE(window.ok()) << window.status().message();
      if (window.ok()) last = *window;
    }
  }
  return last;
}

class ProfileDocTest : public HttpApiTest {
 protected:
  void SetUp() override {
    HttpApiTest::SetUp();
    hello_window_ = AddProfiledCampaign(*store_);
  }
  int64_t hello_window_ = 0;
};

// The child of `node` called `name`, or null.
const ojson* Child(const ojson& node, const std::string& name) {
  if (!node.contains("children")) return nullptr;
  for (const ojson& c : node["children"]) {
    if (c["name"] == name) return &c;
  }
  return nullptr;
}

TEST_F(ProfileDocTest, ProfileIsTheTargetsMergedFlameTree) {
  ProfileQuery query;
  query.target = "hello-server";
  query.cell = "plaintext/c64";
  auto doc = ProfileDoc(*store_, "prof", query);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["target"], "hello-server");
  EXPECT_EQ((*doc)["windows"], 2);
  EXPECT_EQ((*doc)["samples"], 160);
  EXPECT_EQ((*doc)["frequency_hz"], 99);
  // 2 windows of 0.5 s CPU over 50,000 requests each: 10 µs per request.
  EXPECT_NEAR((*doc)["cpu_us_per_request"].get<double>(), 10.0, 1e-9);
  const ojson& tree = (*doc)["tree"];
  EXPECT_EQ(tree["name"], "all");
  EXPECT_EQ(tree["value"], 160);
  const ojson* main =
      Child(tree, "hello-server") ? Child(*Child(tree, "hello-server"), "main") : nullptr;
  ASSERT_NE(main, nullptr) << tree.dump();
  const ojson* spend = Child(*main, "SpendCpu");
  ASSERT_NE(spend, nullptr) << tree.dump();
  EXPECT_EQ((*spend)["value"], 120);

  query.cell.clear();
  query.window = std::to_string(hello_window_);
  auto one = ProfileDoc(*store_, "prof", query);
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ((*one)["windows"], 1);
  EXPECT_EQ((*one)["window"], hello_window_);
  EXPECT_EQ((*one)["samples"], 80);
}

// The window page says what it knows of the attempt's profile: its samples and rate, why there
// is none, or nothing at all for a window that was not profiled.
TEST_F(ProfileDocTest, WindowDocCarriesTheProfileRowOfTheAttempt) {
  auto profiled = WindowDoc(*store_, hello_window_);
  ASSERT_TRUE(profiled.ok()) << profiled.status().message();
  const ojson& p = (*profiled)["profile"];
  ASSERT_TRUE(p.is_object()) << profiled->dump();
  EXPECT_EQ(p["samples"], 80);
  EXPECT_EQ(p["frequency_hz"], 99);
  EXPECT_TRUE(p["error"].is_null());

  auto campaign = store_->FindCampaign("prof");
  ASSERT_TRUE(campaign.ok() && campaign->has_value());
  WindowRow w = Window("nginx", 3, 0, 50000);
  w.campaign = "prof";
  w.campaign_id = (*campaign)->id;
  const std::string why = "perf could not start: install linux-perf";
  auto refused = store_->InsertWindow(w, {}, {}, {}, ProfileRow{0, 99, 0, "", why});
  ASSERT_TRUE(refused.ok()) << refused.status().message();
  auto without = WindowDoc(*store_, *refused);
  ASSERT_TRUE(without.ok()) << without.status().message();
  EXPECT_EQ((*without)["profile"]["error"], why);
  EXPECT_EQ((*without)["profile"]["samples"], 0);

  auto never = WindowDoc(*store_, nginx1_);  // a window of "demo", never profiled
  ASSERT_TRUE(never.ok());
  ASSERT_TRUE(never->contains("profile"));
  EXPECT_TRUE((*never)["profile"].is_null());
}

TEST_F(ProfileDocTest, BadSelectionsAreInvalidAndUnprofiledCampaignsNotFound) {
  ProfileQuery query;
  query.target = "hello-server";
  query.cell = "plaintext";
  auto bad_cell = ProfileDoc(*store_, "prof", query);
  EXPECT_EQ(bad_cell.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_cell.status().message().find("SCENARIO/LEVEL"), std::string::npos);

  query.cell.clear();
  query.window = "12x";
  auto bad_window = ProfileDoc(*store_, "prof", query);
  EXPECT_EQ(bad_window.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_window.status().message().find("window: expected a positive window id"),
            std::string::npos)
      << bad_window.status().message();

  auto both = ProfileDoc(*store_, "prof", ProfileQuery{});  // two targets: not added together
  EXPECT_EQ(both.status().code(), StatusCode::kInvalidArgument);

  query = ProfileQuery{};
  query.target = "apache";
  auto unknown_target = ProfileDoc(*store_, "prof", query);
  EXPECT_EQ(unknown_target.status().code(), StatusCode::kInvalidArgument);

  auto unknown = ProfileDoc(*store_, "nope", ProfileQuery{});
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  auto unprofiled = ProfileDoc(*store_, "demo", ProfileQuery{});
  EXPECT_EQ(unprofiled.status().code(), StatusCode::kNotFound);
  EXPECT_NE(unprofiled.status().message().find("[profile]"), std::string::npos)
      << unprofiled.status().message();
}

TEST_F(ProfileDocTest, DiffHasTheDifferentialTreeAndTheCellsFunctions) {
  auto doc = ProfileDiffDoc(*store_, "prof", "nginx", "hello-server", "plaintext/c64");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["base"], "nginx");
  EXPECT_EQ((*doc)["new"], "hello-server");
  EXPECT_EQ((*doc)["base_samples"], 200);
  EXPECT_EQ((*doc)["new_samples"], 160);
  const ojson& diff = (*doc)["diff"];
  EXPECT_EQ(diff["scenario"], "plaintext");
  EXPECT_EQ(diff["rounds"], 2);
  ASSERT_FALSE(diff["functions"].empty());
  const ojson& tree = (*doc)["tree"];
  const ojson* hello = Child(tree, "hello-server");
  ASSERT_NE(hello, nullptr) << tree.dump();
  const ojson* spend = Child(*Child(*hello, "main"), "SpendCpu");
  ASSERT_NE(spend, nullptr);
  EXPECT_EQ((*spend)["value"], 120);
  EXPECT_GT((*spend)["delta"].get<double>(), 0);
  const ojson* gone = Child(*Child(*Child(tree, "nginx"), "main"), "ngx_gone");
  ASSERT_NE(gone, nullptr) << tree.dump();
  EXPECT_EQ((*gone)["vanished"], true);
  EXPECT_EQ((*gone)["base"], 40);

  auto no_cell = ProfileDiffDoc(*store_, "prof", "nginx", "hello-server", "");
  EXPECT_EQ(no_cell.status().code(), StatusCode::kInvalidArgument);
  auto no_base = ProfileDiffDoc(*store_, "prof", "", "hello-server", "plaintext/c64");
  EXPECT_EQ(no_base.status().code(), StatusCode::kInvalidArgument);
  auto other_cell = ProfileDiffDoc(*store_, "prof", "nginx", "hello-server", "json/c64");
  EXPECT_EQ(other_cell.status().code(), StatusCode::kInvalidArgument);
  auto unprofiled = ProfileDiffDoc(*store_, "demo", "nginx", "hello-server", "plaintext/c64");
  EXPECT_EQ(unprofiled.status().code(), StatusCode::kNotFound);
}

TEST_F(HttpApiTest, AnInvalidNewestAttemptIsRerunnable) {
  WindowRow bad = Window("nginx", 3, 0, 100);
  bad.verdict = "failed";
  bad.reasons = R"(["agent_lost: run load: unreachable"])";
  const int64_t id = Insert(bad, {});
  auto doc = WindowDoc(*store_, id);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ((*doc)["rerunnable"], true);
  EXPECT_EQ((*doc)["attempts"].size(), 1u);
}

TEST_F(HttpApiTest, UnknownWindowIsNotFound) {
  auto doc = WindowDoc(*store_, 9999);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kNotFound);
}

// Two bisections of "app" in plaintext/c64: a search that found its culprit over 16 commits
// (good at position 7, a failed build at 11, bad at 9, bad at 8: the culprit; its steps measured
// by the demo campaign and one no longer stored), then a running one over 8 commits with one step
// decided. Returns their ids, oldest first.
std::pair<int64_t, int64_t> AddBisections(Store& store, int64_t demo_campaign) {
  BisectionRow found;
  found.created_at = "2026-12-06T01:00:00Z";
  found.good_oid = std::string(40, 'a');
  found.bad_oid = std::string(40, 'f');
  found.target = "app";
  found.cell = "plaintext/c64";
  found.figure = "cpu_us_per_request";
  found.commits = 16;
  found.change_id = 3;
  auto found_id = store.CreateBisection(found);
  EXPECT_TRUE(found_id.ok()) << found_id.status().message();
  if (!found_id.ok()) return {0, 0};
  auto step = [&](int64_t bisection, char oid, int position, const std::string& decision,
                  const std::string& subject) {
    BisectStepRow s;
    s.bisection_id = bisection;
    s.oid = std::string(40, oid);
    s.subject = subject;
    s.position = position;
    s.decision = decision;
    s.build = decision == "build failed" ? "failed" : "built";
    if (s.build == "built") {
      s.campaigns = {demo_campaign, 9999};
      s.rounds = 3;
      s.estimate = decision == "bad" ? 1.06 : 1.0;
      s.low = *s.estimate - 0.02;
      s.high = *s.estimate + 0.02;
      s.figures = {{10.0, 10.0, 10.6}};
    }
    auto appended = store.AppendBisectStep(s);
    EXPECT_TRUE(appended.ok()) << appended.status().message();
  };
  step(*found_id, '7', 7, "good", "Tidy the parser");
  step(*found_id, 'b', 11, "build failed", "Half a refactor");
  step(*found_id, '9', 9, "bad", "Cache the routes");
  step(*found_id, '8', 8, "bad", "Parse headers twice");
  found.id = *found_id;
  found.state = "found";
  found.culprit = std::string(40, '8');
  found.size = 1.058;
  found.size_low = 1.041;
  found.size_high = 1.076;
  found.result = "first bad commit: 888888888888";
  EXPECT_TRUE(store.UpdateBisection(found).ok());

  BisectionRow running = found;
  running.created_at = "2026-12-06T02:00:00Z";
  running.commits = 8;
  running.change_id = 0;
  running.state = "running";
  running.culprit.clear();
  running.result.clear();
  running.size.reset();
  auto running_id = store.CreateBisection(running);
  EXPECT_TRUE(running_id.ok()) << running_id.status().message();
  if (!running_id.ok()) return {*found_id, 0};
  step(*running_id, '3', 3, "good", "Rename a field");
  return {*found_id, *running_id};
}

TEST_F(HttpApiTest, BisectionListIsNewestFirstWithEachSearchsLine) {
  const auto [found, running] = AddBisections(*store_, campaign_id_);
  auto doc = BisectionListDoc(*store_);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const auto& list = (*doc)["bisections"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["id"], running);
  EXPECT_EQ(list[1]["id"], found);

  const auto& r = list[0];
  EXPECT_EQ(r["state"], "running");
  EXPECT_EQ(r["commits"], 8);
  EXPECT_EQ(r["steps"], 1);
  EXPECT_TRUE(r["culprit"].is_null());
  EXPECT_TRUE(r["change"].is_null());  // named by hand
  EXPECT_EQ(r["line"], "bisection " + std::to_string(running) +
                           ": running, 1 of 6 commits between the ends decided");

  const auto& f = list[1];
  EXPECT_EQ(f["created_at"], "2026-12-06T01:00:00Z");
  EXPECT_EQ(f["target"], "app");
  EXPECT_EQ(f["cell"], "plaintext/c64");
  EXPECT_EQ(f["figure"], "cpu_us_per_request");
  EXPECT_EQ(f["state"], "found");
  EXPECT_EQ(f["commits"], 16);
  EXPECT_EQ(f["culprit"], std::string(40, '8'));
  EXPECT_EQ(f["change"], 3);
  EXPECT_EQ(f["steps"], 4);
  EXPECT_EQ(f["line"],
            "culprit: 888888888888 'Parse headers twice', +5.8% [+4.1%, +7.6%] CPU "
            "µs/req (bisection " +
                std::to_string(found) + ", 3 commits measured)");
}

TEST_F(HttpApiTest, BisectionListOfAStoreWithoutSearchesIsEmpty) {
  auto doc = BisectionListDoc(*store_);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  ASSERT_TRUE((*doc)["bisections"].is_array());
  EXPECT_TRUE((*doc)["bisections"].empty());
}

TEST_F(HttpApiTest, BisectionDocHasItsStepsWithCampaignNamesAndItsLine) {
  const auto [found, running] = AddBisections(*store_, campaign_id_);
  auto doc = BisectionDoc(*store_, found);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["id"], found);
  EXPECT_EQ((*doc)["state"], "found");
  EXPECT_EQ((*doc)["culprit_subject"], "Parse headers twice");
  EXPECT_EQ((*doc)["change"], 3);
  const auto& steps = (*doc)["steps"];
  ASSERT_EQ(steps.size(), 4u);
  std::vector<int> positions;
  std::vector<std::string> decisions;
  for (const auto& s : steps) {
    positions.push_back(s["position"].get<int>());
    decisions.push_back(s["decision"].get<std::string>());
  }
  EXPECT_EQ(positions, (std::vector<int>{7, 11, 9, 8}));
  EXPECT_EQ(decisions, (std::vector<std::string>{"good", "build failed", "bad", "bad"}));
  EXPECT_EQ(steps[0]["campaigns"], ojson::array({campaign_id_, 9999}));
  // The demo campaign by name; the one no longer stored is null.
  EXPECT_EQ(steps[0]["campaign_names"], ojson::array({"demo", nullptr}));
  EXPECT_EQ(steps[1]["campaign_names"], ojson::array());  // a failed build measured nothing
  EXPECT_EQ(steps[3]["estimate"], 1.06);
  EXPECT_EQ(steps[3]["figures"][0]["bad"], 10.6);
  EXPECT_EQ(
      (*doc)["line"].get<std::string>().rfind("culprit: 888888888888 'Parse headers twice'", 0), 0u)
      << (*doc)["line"];

  auto other = BisectionDoc(*store_, running);
  ASSERT_TRUE(other.ok()) << other.status().message();
  EXPECT_EQ((*other)["state"], "running");
  EXPECT_TRUE((*other)["culprit"].is_null());
  ASSERT_EQ((*other)["steps"].size(), 1u);
  EXPECT_EQ((*other)["line"], "bisection " + std::to_string(running) +
                                  ": running, 1 of 6 commits between the ends decided");
}

TEST_F(HttpApiTest, UnknownBisectionIsNotFoundNamingTheId) {
  AddBisections(*store_, campaign_id_);
  auto doc = BisectionDoc(*store_, 4242);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(doc.status().message(), "no bisection with id 4242");
}

// Campaigns nightly-1 .. nightly-`count` of the series "nightly": one target, "app", five valid
// rounds each, ±1% apart, with ±0.5% from campaign to campaign; from campaign `step` on its req/s
// is 10% lower and its version "v2" instead of "v1". The campaigns numbered in `warn` ran with
// --gates warn. Returns the campaigns' ids.
std::vector<int64_t> AddNightlies(Store& store, int count, int step,
                                  const std::set<int>& warn = {}) {
  const double jitter[] = {1.0, 1.01, 0.99, 1.005, 0.995};
  std::vector<int64_t> ids;
  for (int c = 1; c <= count; ++c) {
    CampaignRow row;
    row.name = "nightly-" + std::to_string(c);
    row.series = "nightly";
    row.spec_toml = kSpec;
    row.source = "nightly.toml";
    row.total_windows = 5;
    row.state = "done";
    if (warn.count(c)) row.gates_mode = "warn";
    auto id = store.CreateCampaign(row, {{"app", "[]", ""}},
                                   {{"plaintext", "scenario", "GET", "/", 200, ""}});
    EXPECT_TRUE(id.ok()) << id.status().message();
    if (!id.ok()) return ids;
    ids.push_back(*id);
    const double level = (c >= step ? 9000 : 10000) * (1 + 0.005 * ((c % 3) - 1));
    for (int r = 1; r <= 5; ++r) {
      WindowRow w = Window("app", r, 0, level * jitter[r - 1]);
      w.campaign = row.name;
      w.campaign_id = *id;
      w.target_version = c >= step ? "v2" : "v1";
      auto window = store.InsertWindow(w, {});
      EXPECT_TRUE(window.ok()) << window.status().message();
    }
  }
  return ids;
}

TEST_F(HttpApiTest, SeriesDocHasEachCampaignsFigureAndTheChangePoints) {
  AddNightlies(*store_, 10, 6);
  auto doc = SeriesDoc(*store_, "nightly", "rps");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["series"], "nightly");
  EXPECT_EQ((*doc)["figure"], "rps");
  EXPECT_EQ((*doc)["better"], "higher");
  ASSERT_EQ((*doc)["campaigns"].size(), 10u);
  EXPECT_EQ((*doc)["campaigns"][0]["name"], "nightly-1");
  ASSERT_EQ((*doc)["lines"].size(), 1u);
  const auto& line = (*doc)["lines"][0];
  EXPECT_EQ(line["scenario"], "plaintext");
  EXPECT_EQ(line["load_level"], "c64");
  EXPECT_EQ(line["target"], "app");
  ASSERT_EQ(line["points"].size(), 10u);
  for (size_t i = 0; i < 10; ++i) {
    const auto& point = line["points"][i];
    EXPECT_EQ(point["campaign"], "nightly-" + std::to_string(i + 1));
    EXPECT_EQ(point["campaign_id"], (*doc)["campaigns"][i]["id"]);
    EXPECT_EQ(point["n"], 5);
    EXPECT_EQ(point["version"], i + 1 >= 6 ? "v2" : "v1");
    const double estimate = point["estimate"].get<double>();
    EXPECT_LT(point["low"].get<double>(), estimate);
    EXPECT_GT(point["high"].get<double>(), estimate);
    EXPECT_NEAR(estimate, i + 1 >= 6 ? 9000 : 10000, 100) << point.dump();
    EXPECT_NEAR(point["median"].get<double>(), estimate, 100);
  }

  ASSERT_EQ((*doc)["changes"].size(), 1u) << (*doc)["changes"].dump();
  const auto& change = (*doc)["changes"][0];
  EXPECT_EQ(change["target"], "app");
  EXPECT_EQ(change["figure"], "rps");
  EXPECT_EQ(change["before"], "nightly-5");
  EXPECT_EQ(change["after"], "nightly-6");
  EXPECT_EQ(change["after_id"], (*doc)["campaigns"][5]["id"]);
  EXPECT_EQ(change["direction"], "regression");
  EXPECT_EQ(change["status"], "suspected");
  EXPECT_EQ(change["version_before"], "v1");
  EXPECT_EQ(change["version_after"], "v2");
  EXPECT_NEAR(change["size"]["estimate"].get<double>(), 0.90, 0.01);
  EXPECT_LT(change["size"]["high"].get<double>(), 0.98);

  // CPU per request rises where req/s fell: a regression of a figure better lower.
  auto cpu = SeriesDoc(*store_, "nightly", "cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status().message();
  EXPECT_EQ((*cpu)["figure"], "cpu_us_per_request");
  ASSERT_EQ((*cpu)["changes"].size(), 1u);
  EXPECT_EQ((*cpu)["changes"][0]["direction"], "regression");
  EXPECT_GT((*cpu)["changes"][0]["size"]["estimate"].get<double>(), 1.1);

  // A series of one campaign without a step: its line, no change.
  auto demo = SeriesDoc(*store_, "demo", "rps");
  ASSERT_TRUE(demo.ok()) << demo.status().message();
  EXPECT_EQ((*demo)["lines"].size(), 2u);
  EXPECT_TRUE((*demo)["changes"].empty());
}

TEST_F(HttpApiTest, SeriesDocSaysEachCampaignsAndPointsGateMode) {
  AddNightlies(*store_, 4, 99, {2, 3});
  auto doc = SeriesDoc(*store_, "nightly", "rps");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const std::vector<std::string> expected = {"enforce", "warn", "warn", "enforce"};
  ASSERT_EQ((*doc)["campaigns"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ((*doc)["campaigns"][i]["gates_in_force"], expected[i]) << i;
  }
  ASSERT_EQ((*doc)["lines"].size(), 1u);
  const auto& points = (*doc)["lines"][0]["points"];
  ASSERT_EQ(points.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(points[i]["gates_in_force"], expected[i]) << i;
}

TEST_F(HttpApiTest, SeriesDocRefusesAnUnknownFigureOrSeries) {
  AddNightlies(*store_, 3, 99);
  auto figure = SeriesDoc(*store_, "nightly", "speed");
  ASSERT_FALSE(figure.ok());
  EXPECT_EQ(figure.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(figure.status().message().find("\"speed\""), std::string::npos);
  auto series = SeriesDoc(*store_, "nighty", "rps");
  ASSERT_FALSE(series.ok());
  EXPECT_EQ(series.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(series.status().message(), "no series \"nighty\" (series: demo, nightly)");
}

TEST_F(HttpApiTest, CampaignsSayWhichSeriesTheyAreOfAndWhere) {
  const std::vector<int64_t> ids = AddNightlies(*store_, 3, 99);
  auto list = CampaignListDoc(*store_);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ((*list)["campaigns"].size(), 4u);
  EXPECT_EQ((*list)["campaigns"][0]["name"], "nightly-3");
  EXPECT_EQ((*list)["campaigns"][0]["series"], "nightly");
  EXPECT_EQ((*list)["campaigns"][3]["series"], "demo");  // no series given: its name's

  auto doc = CampaignDoc(*store_, "nightly-2");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["series"], (ojson{{"name", "nightly"}, {"position", 2}, {"campaigns", 3}}));
  auto demo = CampaignDoc(*store_, "demo");
  ASSERT_TRUE(demo.ok());
  EXPECT_EQ((*demo)["series"], (ojson{{"name", "demo"}, {"position", 1}, {"campaigns", 1}}));

  // A campaign joining the series changes "campaign 2 of 3", and so the document's version.
  auto before = CampaignVersion(*store_, "nightly-2");
  ASSERT_TRUE(before.ok());
  CampaignRow fourth;
  fourth.name = "nightly-4";
  fourth.series = "nightly";
  fourth.spec_toml = kSpec;
  ASSERT_TRUE(store_->CreateCampaign(fourth, {{"app", "[]", ""}}, {}).ok());
  auto after = CampaignVersion(*store_, "nightly-2");
  ASSERT_TRUE(after.ok());
  EXPECT_NE(*after, *before);
  EXPECT_EQ((*CampaignDoc(*store_, "nightly-2"))["series"]["campaigns"], 4);
}

TEST(HistogramDocTest, MergesIntoLogBinsKeepingEveryCount) {
  Histogram h;
  for (uint64_t v = 1; v <= 200000; v = v * 11 / 10 + 1) h.RecordN(v, v % 7 + 1);
  auto doc = HistogramDoc(h.Serialize(), 20);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const auto& bins = (*doc)["buckets"];
  ASSERT_LE(bins.size(), 20u);
  ASSERT_GE(bins.size(), 10u);
  uint64_t total = 0, previous_to = 0;
  for (const auto& b : bins) {
    EXPECT_LE(b["from_us"].get<uint64_t>(), b["to_us"].get<uint64_t>());
    EXPECT_GT(b["from_us"].get<uint64_t>(), previous_to);  // ordered, not overlapping
    previous_to = b["to_us"];
    total += b["count"].get<uint64_t>();
  }
  EXPECT_EQ(total, h.Count());
  EXPECT_EQ((*doc)["count"], h.Count());
  EXPECT_EQ((*doc)["percentiles"]["100"], h.ValueAtPercentile(100));
}

TEST(HistogramDocTest, FewBucketsAreKeptAsTheyAre) {
  auto doc = HistogramDoc(HistogramOf({5, 5, 9}), 200);
  ASSERT_TRUE(doc.ok());
  const auto& bins = (*doc)["buckets"];
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_EQ(bins[0]["from_us"], 5);
  EXPECT_EQ(bins[0]["count"], 2);
  EXPECT_EQ(bins[1]["from_us"], 9);
  EXPECT_EQ((*doc)["percentiles"]["50"], 5);
}

TEST(HistogramDocTest, EmptyIsNullAndGarbageIsAnError) {
  auto empty = HistogramDoc("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->is_null());
  auto bad = HistogramDoc("not a histogram");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

// The same documents through a real socket, plus what only HTTP has: status codes, the JSON
// requirement on POST, static files.
class HttpServerTest : public HttpApiTest {
 protected:
  // Serves on loopback; the client carries an operator's token, as re-runs need one.
  void Serve(const std::string& web_root, const std::vector<std::string>& http_hosts = {}) {
    MakeApi();
    auto bound = api_->Start({"127.0.0.1", 0}, web_root, http_hosts);
    ASSERT_TRUE(bound.ok()) << bound.status().message();
    port_ = bound->port;
    operator_ = MakeToken("ops", "operator");
    client_ = std::make_unique<httplib::Client>("127.0.0.1", bound->port);
    client_->set_read_timeout(10, 0);
    client_->set_bearer_token_auth(operator_.c_str());
  }
  void MakeApi() {
    scheduler_ = std::make_unique<Scheduler>(*store_, agents_);
    metrics_ = std::make_unique<CoordinatorMetrics>((dir_ / "bench.db").string());
    api_ = std::make_unique<HttpApi>(*store_, agents_, *scheduler_, *metrics_);
  }
  // A token stored under `name` with `role`, expiring at `expires` ("" for never).
  std::string MakeToken(const std::string& name, const std::string& role,
                        const std::string& expires = "") {
    auto token = NewDashboardToken();
    EXPECT_TRUE(token.ok());
    EXPECT_TRUE(store_
                    ->AddToken({name, role, DashboardTokenHash(*token),
                                FormatIsoTime(std::chrono::system_clock::now()), expires, ""})
                    .ok());
    return *token;
  }
  // The newest audit row, or an empty one.
  AuditRow LastAudit() {
    auto rows = store_->ListAudit("");
    return rows.ok() && !rows->empty() ? rows->back() : AuditRow{};
  }
  // The request's bytes as given (no URL encoding), on a connection of its own; the response
  // as it came, up to the end of its body (Content-Length).
  std::string Raw(const std::string& request) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port_);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
    std::string response;
    char buffer[4096];
    auto complete = [&] {
      const size_t head = response.find("\r\n\r\n");
      const size_t length = response.find("Content-Length: ");
      return head != std::string::npos && length != std::string::npos &&
             response.size() >= head + 4 + std::stoul(response.substr(length + 16));
    };
    for (ssize_t n; !complete() && (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) {
      response.append(buffer, n);
    }
    ::close(fd);
    return response;
  }
  size_t RerunRequests() {
    auto rows = store_->ListRerunRequests(campaign_id_);
    return rows.ok() ? rows->size() : 0;
  }
  uint16_t port_ = 0;
  void TearDown() override {
    if (api_) api_->Stop();
    api_.reset();
    metrics_.reset();
    scheduler_.reset();
    HttpApiTest::TearDown();
  }
  AgentRegistry agents_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<CoordinatorMetrics> metrics_;
  std::unique_ptr<HttpApi> api_;
  std::unique_ptr<httplib::Client> client_;
  std::string operator_;
};

TEST_F(HttpServerTest, ServesTheApiAndTheDashboardFiles) {
  fs::create_directories(dir_ / "web" / "assets");
  std::ofstream(dir_ / "web" / "index.html") << "<!doctype html><title>dash</title>";
  std::ofstream(dir_ / "web" / "assets" / "app.js") << "console.log(1)";
  Serve((dir_ / "web").string());

  auto index = client_->Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->body.find("<title>dash</title>"), std::string::npos);
  auto script = client_->Get("/assets/app.js");
  ASSERT_TRUE(script);
  EXPECT_EQ(script->status, 200);
  EXPECT_EQ(script->get_header_value("Cache-Control"), "no-cache");

  auto list = client_->Get("/api/v1/campaigns");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->status, 200);
  EXPECT_EQ(list->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(list->get_header_value("Cache-Control"), "no-store");
  EXPECT_EQ(ojson::parse(list->body)["campaigns"][0]["name"], "demo");

  auto campaign = client_->Get("/api/v1/campaigns/demo");
  ASSERT_TRUE(campaign);
  EXPECT_EQ(campaign->status, 200);
  EXPECT_EQ(ojson::parse(campaign->body)["record"]["campaign"]["name"], "demo");

  auto missing = client_->Get("/api/v1/campaigns/helo");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_NE(ojson::parse(missing->body)["error"].get<std::string>().find("helo"),
            std::string::npos);

  auto window = client_->Get("/api/v1/windows/" + std::to_string(invalid_));
  ASSERT_TRUE(window);
  EXPECT_EQ(window->status, 200);
  EXPECT_EQ(ojson::parse(window->body)["attempts"].size(), 2u);

  auto md = client_->Get("/api/v1/campaigns/demo/report?format=md");
  ASSERT_TRUE(md);
  EXPECT_EQ(md->status, 200);
  EXPECT_NE(md->body.find("# demo"), std::string::npos);
  auto bad_format = client_->Get("/api/v1/campaigns/demo/report?format=pdf");
  ASSERT_TRUE(bad_format);
  EXPECT_EQ(bad_format->status, 400);

  auto agents = client_->Get("/api/v1/agents");
  ASSERT_TRUE(agents);
  EXPECT_EQ(agents->status, 200);
  EXPECT_TRUE(ojson::parse(agents->body)["agents"].is_array());

  auto nowhere = client_->Get("/api/v1/nothing");
  ASSERT_TRUE(nowhere);
  EXPECT_EQ(nowhere->status, 404);
}

TEST_F(HttpServerTest, ServesProfilesAndTheirDiffWithStatusCodesForBadSelections) {
  AddProfiledCampaign(*store_);
  Serve("");
  auto flame =
      client_->Get("/api/v1/campaigns/prof/profile?target=hello-server&cell=plaintext/c64");
  ASSERT_TRUE(flame);
  EXPECT_EQ(flame->status, 200) << flame->body;
  EXPECT_EQ(flame->get_header_value("Cache-Control"), "no-store");
  const ojson doc = ojson::parse(flame->body);
  EXPECT_EQ(doc["target"], "hello-server");
  EXPECT_EQ(doc["tree"]["value"], 160);

  auto diff = client_->Get(
      "/api/v1/campaigns/prof/profile-diff?base=nginx&new=hello-server&cell=plaintext/c64");
  ASSERT_TRUE(diff);
  EXPECT_EQ(diff->status, 200) << diff->body;
  EXPECT_EQ(ojson::parse(diff->body)["diff"]["base"], "nginx");

  auto bad_cell = client_->Get("/api/v1/campaigns/prof/profile?target=hello-server&cell=c64");
  ASSERT_TRUE(bad_cell);
  EXPECT_EQ(bad_cell->status, 400);
  EXPECT_NE(ojson::parse(bad_cell->body)["error"].get<std::string>().find("SCENARIO/LEVEL"),
            std::string::npos)
      << bad_cell->body;
  auto no_cell = client_->Get("/api/v1/campaigns/prof/profile-diff?base=nginx&new=hello-server");
  ASSERT_TRUE(no_cell);
  EXPECT_EQ(no_cell->status, 400) << no_cell->body;
  auto unknown = client_->Get("/api/v1/campaigns/nope/profile?target=x");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  auto unprofiled = client_->Get("/api/v1/campaigns/demo/profile?target=nginx");
  ASSERT_TRUE(unprofiled);
  EXPECT_EQ(unprofiled->status, 404);
  EXPECT_NE(ojson::parse(unprofiled->body)["error"].get<std::string>().find("[profile]"),
            std::string::npos)
      << unprofiled->body;
}

TEST_F(HttpServerTest, ServesASeriesAndSaysWhatIsWrongWithABadOne) {
  AddNightlies(*store_, 10, 6);
  Serve("");
  auto rps = client_->Get("/api/v1/series/nightly");  // req/s unless a figure is asked for
  ASSERT_TRUE(rps);
  EXPECT_EQ(rps->status, 200) << rps->body;
  EXPECT_EQ(rps->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(rps->get_header_value("Cache-Control"), "no-store");
  const ojson doc = ojson::parse(rps->body);
  EXPECT_EQ(doc["figure"], "rps");
  EXPECT_EQ(doc["lines"][0]["points"].size(), 10u);
  ASSERT_EQ(doc["changes"].size(), 1u);
  EXPECT_EQ(doc["changes"][0]["after"], "nightly-6");

  auto p99 = client_->Get("/api/v1/series/nightly?figure=p99");
  ASSERT_TRUE(p99);
  EXPECT_EQ(p99->status, 200);
  EXPECT_EQ(ojson::parse(p99->body)["figure"], "p99_us");

  auto bad = client_->Get("/api/v1/series/nightly?figure=speed");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(bad->get_header_value("Content-Type"), "application/json");
  EXPECT_NE(
      ojson::parse(bad->body)["error"].get<std::string>().find("figure: expected rps, cpu, p99"),
      std::string::npos)
      << bad->body;

  auto missing = client_->Get("/api/v1/series/nighty");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(ojson::parse(missing->body)["error"], "no series \"nighty\" (series: demo, nightly)");
}

TEST_F(HttpServerTest, ServesBisectionsAndA404ForAnUnknownOne) {
  const auto [found, running] = AddBisections(*store_, campaign_id_);
  Serve("");
  auto list = client_->Get("/api/v1/bisections");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->status, 200) << list->body;
  EXPECT_EQ(list->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(list->get_header_value("Cache-Control"), "no-store");
  const ojson listed = ojson::parse(list->body);
  ASSERT_EQ(listed["bisections"].size(), 2u);
  EXPECT_EQ(listed["bisections"][0]["id"], running);
  EXPECT_EQ(listed["bisections"][1]["culprit"], std::string(40, '8'));

  auto one = client_->Get("/api/v1/bisections/" + std::to_string(found));
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, 200) << one->body;
  const ojson doc = ojson::parse(one->body);
  EXPECT_EQ(doc["steps"].size(), 4u);
  EXPECT_EQ(doc["steps"][2]["campaign_names"][0], "demo");
  EXPECT_EQ(doc["line"].get<std::string>().rfind("culprit: 888888888888", 0), 0u) << doc["line"];

  auto missing = client_->Get("/api/v1/bisections/4242");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(ojson::parse(missing->body)["error"], "no bisection with id 4242");

  // Not an id: no route of its own, so the API's unknown path.
  auto word = client_->Get("/api/v1/bisections/latest");
  ASSERT_TRUE(word);
  EXPECT_EQ(word->status, 404);
  EXPECT_NE(ojson::parse(word->body)["error"].get<std::string>().find("no such API path"),
            std::string::npos)
      << word->body;
}

TEST_F(HttpServerTest, AnUnchangedCampaignIsNotSentAgain) {
  Serve((dir_ / "no-web").string());
  auto first = client_->Get("/api/v1/campaigns/demo");
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200);
  const std::string etag = first->get_header_value("ETag");
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(etag.front(), '"');
  EXPECT_EQ(first->get_header_value("Cache-Control"), "no-cache");
  EXPECT_EQ(first->get_header_value_count("Cache-Control"), 1u);

  auto same = client_->Get("/api/v1/campaigns/demo", {{"If-None-Match", etag}});
  ASSERT_TRUE(same);
  EXPECT_EQ(same->status, 304);
  EXPECT_TRUE(same->body.empty());
  EXPECT_EQ(same->get_header_value("ETag"), etag);

  // A claimed window: the page must get the new document.
  WindowClaim claim{
      campaign_id_, {"nginx", "plaintext", "c64", 1, 0, ""}, false, 64, 2, "server", "load", ""};
  ASSERT_TRUE(store_->ClaimWindow(claim).ok());
  auto moved = client_->Get("/api/v1/campaigns/demo", {{"If-None-Match", etag}});
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->status, 200);
  EXPECT_NE(moved->get_header_value("ETag"), etag);
  EXPECT_EQ(ojson::parse(moved->body)["progress"]["running"].size(), 1u);

  auto stale = client_->Get("/api/v1/campaigns/helo", {{"If-None-Match", etag}});
  ASSERT_TRUE(stale);
  EXPECT_EQ(stale->status, 404);
}

TEST_F(HttpServerTest, RerunNeedsJsonAndQueuesTheWindow) {
  Serve("");
  const std::string body = R"({"window_ids": [)" + std::to_string(nginx1_) + "]}";
  auto form = client_->Post("/api/v1/rerun", body, "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 415);
  auto rows = store_->ListRerunRequests(campaign_id_);
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());  // nothing queued by a refused request

  auto bad = client_->Post("/api/v1/rerun", R"({"window_ids": ["x"]})", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  auto unknown_field = client_->Post("/api/v1/rerun", R"({"ids": [1]})", "application/json");
  ASSERT_TRUE(unknown_field);
  EXPECT_EQ(unknown_field->status, 400);
  auto no_such = client_->Post("/api/v1/rerun", R"({"window_ids": [9999]})", "application/json");
  ASSERT_TRUE(no_such);
  EXPECT_EQ(no_such->status, 404);

  auto ok = client_->Post("/api/v1/rerun", body, "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 202) << ok->body;
  const auto reply = ojson::parse(ok->body);
  EXPECT_EQ(reply["window_ids"][0], nginx1_);
  EXPECT_EQ(reply["campaigns"][0], "demo");
  rows = store_->ListRerunRequests(campaign_id_);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].target, "nginx");
  EXPECT_EQ((*rows)[0].round, 1);

  // Without dashboard files, / says how to build them.
  auto index = client_->Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 503);
  EXPECT_NE(index->body.find("make build"), std::string::npos);
}

TEST_F(HttpServerTest, AForeignHostIsMisdirectedOnGetAndPost) {
  Serve("");
  const httplib::Headers evil = {{"Host", "evil.example:" + std::to_string(port_)}};
  auto get = client_->Get("/api/v1/campaigns", evil);
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 421);
  EXPECT_EQ(get->get_header_value("Content-Type"), "application/json");
  EXPECT_NE(ojson::parse(get->body)["error"].get<std::string>().find("evil.example"),
            std::string::npos);
  auto page = client_->Get("/", evil);
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 421) << "the dashboard's files too";
  const std::string body = R"({"window_ids": [)" + std::to_string(nginx1_) + "]}";
  auto post = client_->Post("/api/v1/rerun", evil, body, "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 421);
  EXPECT_EQ(RerunRequests(), 0u) << "nothing queued by a refused request";

  for (const std::string host : {"127.0.0.1", "localhost", "LocalHost", "[::1]"}) {
    auto ok = client_->Get("/api/v1/campaigns", {{"Host", host + ":" + std::to_string(port_)}});
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 200) << host;
  }
  auto portless = client_->Get("/api/v1/campaigns", {{"Host", "127.0.0.1"}});
  ASSERT_TRUE(portless);
  EXPECT_EQ(portless->status, 421) << "another port is another origin";
}

TEST_F(HttpServerTest, APostFromAnotherOriginIsForbidden) {
  Serve("");
  const std::string body = R"({"window_ids": [)" + std::to_string(nginx1_) + "]}";
  auto foreign =
      client_->Post("/api/v1/rerun", {{"Origin", "http://evil.example"}}, body, "application/json");
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->status, 403);
  EXPECT_TRUE(ojson::parse(foreign->body).contains("error"));
  for (const char* origin : {"null", "https://127.0.0.1", "http://127.0.0.1"}) {
    auto other = client_->Post("/api/v1/rerun", {{"Origin", origin}}, body, "application/json");
    ASSERT_TRUE(other);
    EXPECT_EQ(other->status, 403) << origin;
  }
  EXPECT_EQ(RerunRequests(), 0u);
  auto own =
      client_->Post("/api/v1/rerun", {{"Origin", "http://127.0.0.1:" + std::to_string(port_)}},
                    body, "application/json");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 202) << own->body;
  EXPECT_EQ(RerunRequests(), 1u);
}

TEST_F(HttpServerTest, NamesGivenWithHttpHostAreServed) {
  Serve("", {"bench.example.com", "10.0.0.7:8080"});
  const std::string port = std::to_string(port_);
  for (const std::string& host : std::vector<std::string>{
           "bench.example.com", "bench.example.com:" + port, "10.0.0.7:8080"}) {
    auto ok = client_->Get("/api/v1/campaigns", {{"Host", host}});
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 200) << host;
  }
  auto other_port = client_->Get("/api/v1/campaigns", {{"Host", "10.0.0.7:" + port}});
  ASSERT_TRUE(other_port);
  EXPECT_EQ(other_port->status, 421) << "a name given with its port is served on that port only";
  const std::string body = R"({"window_ids": [)" + std::to_string(nginx1_) + "]}";
  auto post = client_->Post(
      "/api/v1/rerun",
      {{"Host", "bench.example.com:" + port}, {"Origin", "http://bench.example.com:" + port}}, body,
      "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 202) << post->body;
}

TEST_F(HttpServerTest, APathThatIsNotUtf8IsAJsonBadRequest) {
  Serve("");
  auto encoded = client_->Get("/api/v1/campaigns/%FF");
  ASSERT_TRUE(encoded);
  EXPECT_EQ(encoded->status, 400);
  EXPECT_EQ(encoded->get_header_value("Content-Type"), "application/json");
  EXPECT_NE(ojson::parse(encoded->body)["error"].get<std::string>().find("UTF-8"),
            std::string::npos);
  auto query = client_->Get("/api/v1/campaigns/demo/report?format=%C0%AF");
  ASSERT_TRUE(query);
  EXPECT_EQ(query->status, 400) << "an overlong form is not UTF-8";

  const std::string host = "Host: 127.0.0.1:" + std::to_string(port_) + "\r\n";
  const std::string raw =
      Raw("GET /api/v1/campaigns/\xff\xfe HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n");
  ASSERT_EQ(raw.rfind("HTTP/1.1 400", 0), 0u) << raw;
  const std::string raw_body = raw.substr(raw.find("\r\n\r\n") + 4);
  EXPECT_TRUE(ojson::parse(raw_body).contains("error")) << raw;
  const std::string garbage = Raw("\x01\x02 nonsense\r\n\r\n");
  ASSERT_EQ(garbage.rfind("HTTP/1.1 400", 0), 0u) << garbage;
  EXPECT_TRUE(ojson::parse(garbage.substr(garbage.find("\r\n\r\n") + 4)).contains("error"))
      << "whatever the HTTP layer refuses is JSON too";

  auto still = client_->Get("/api/v1/campaigns");
  ASSERT_TRUE(still);
  EXPECT_EQ(still->status, 200);
}

TEST(AllowedHostsTest, LoopbackAndWildcardAddressesServeTheLoopbackNames) {
  auto loopback = AllowedHosts({"127.0.0.1", 8080}, {});
  ASSERT_TRUE(loopback.ok());
  EXPECT_EQ(*loopback, (std::set<std::string>{"127.0.0.1:8080", "localhost:8080", "[::1]:8080"}));
  auto any = AllowedHosts({"0.0.0.0", 8080}, {"Bench.Example.com"});
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(*any, (std::set<std::string>{"127.0.0.1:8080", "localhost:8080", "[::1]:8080",
                                         "bench.example.com", "bench.example.com:8080"}));
  auto lan = AllowedHosts({"10.0.0.7", 8080}, {});
  ASSERT_TRUE(lan.ok());
  EXPECT_EQ(*lan, (std::set<std::string>{"10.0.0.7:8080"}));
  auto bad = AllowedHosts({"127.0.0.1", 8080}, {"http://x/"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--http-host"), std::string::npos);
}

TEST_F(HttpServerTest, StopRightAfterStartReturns) {
  Serve("");
  api_->Stop();
  api_->Stop();  // twice is fine
  client_->set_connection_timeout(1, 0);
  EXPECT_FALSE(client_->Get("/api/v1/campaigns"));  // nothing listens any more
}

// The Authorization header of a token.
httplib::Headers Bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

TEST_F(HttpServerTest, OnLoopbackReadsAreOpenAndReRunsNeedAnOperatorsToken) {
  Serve("");
  httplib::Client anonymous("127.0.0.1", port_);
  auto read = anonymous.Get("/api/v1/campaigns");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, 200);
  const std::string body = R"({"window_ids": [)" + std::to_string(nginx1_) + "]}";

  auto nobody = anonymous.Post("/api/v1/rerun", body, "application/json");
  ASSERT_TRUE(nobody);
  EXPECT_EQ(nobody->status, 401);
  EXPECT_EQ(nobody->get_header_value("WWW-Authenticate"), "Bearer");
  EXPECT_EQ(RerunRequests(), 0u);
  AuditRow row = LastAudit();
  EXPECT_EQ(row.call, "DashboardRerun");
  EXPECT_EQ(row.outcome, "refused");
  EXPECT_EQ(row.identity, "dashboard:anonymous");

  const std::string viewer = MakeToken("watcher", "viewer");
  auto as_viewer = anonymous.Post("/api/v1/rerun", Bearer(viewer), body, "application/json");
  ASSERT_TRUE(as_viewer);
  EXPECT_EQ(as_viewer->status, 403);
  EXPECT_EQ(RerunRequests(), 0u);
  row = LastAudit();
  EXPECT_EQ(row.identity, "dashboard:watcher");
  EXPECT_EQ(row.role, "viewer");
  EXPECT_EQ(row.outcome, "refused");
  EXPECT_NE(row.peer.find("127.0.0.1:"), std::string::npos);
  EXPECT_EQ(row.reason.find(viewer), std::string::npos) << "no token in the audit trail";

  auto as_operator = anonymous.Post("/api/v1/rerun", Bearer(operator_), body, "application/json");
  ASSERT_TRUE(as_operator);
  EXPECT_EQ(as_operator->status, 202) << as_operator->body;
  EXPECT_EQ(RerunRequests(), 1u);
  row = LastAudit();
  EXPECT_EQ(row.identity, "dashboard:ops");
  EXPECT_EQ(row.outcome, "ok");
  EXPECT_EQ(row.subject, "windows " + std::to_string(nginx1_));
}

TEST_F(HttpServerTest, AWrongRevokedOrExpiredTokenIs401EvenForReads) {
  Serve("");
  httplib::Client anonymous("127.0.0.1", port_);
  const std::string expired = MakeToken("old", "viewer", "2020-01-01T00:00:00.000Z");
  const std::string revoked = MakeToken("gone", "operator");
  ASSERT_TRUE(store_->RevokeToken("gone", "2026-12-01T00:00:00.000Z").ok());
  auto forged = NewDashboardToken();
  ASSERT_TRUE(forged.ok());
  for (const std::string& token : {*forged, expired, revoked, std::string("blt_short")}) {
    auto read = anonymous.Get("/api/v1/campaigns", Bearer(token));
    ASSERT_TRUE(read);
    EXPECT_EQ(read->status, 401) << token;
    EXPECT_EQ(read->body.find(token), std::string::npos) << "the answer never repeats a token";
  }
  auto basic = anonymous.Get("/api/v1/campaigns", {{"Authorization", "Basic b3BzOm9wcw=="}});
  ASSERT_TRUE(basic);
  EXPECT_EQ(basic->status, 401);
  const std::string body = R"({"window_ids": [)" + std::to_string(nginx1_) + "]}";
  auto rerun = anonymous.Post("/api/v1/rerun", Bearer(revoked), body, "application/json");
  ASSERT_TRUE(rerun);
  EXPECT_EQ(rerun->status, 401);
  EXPECT_EQ(RerunRequests(), 0u);
  EXPECT_NE(LastAudit().reason.find("revoked"), std::string::npos);
}

TEST_F(HttpServerTest, ALogInGivesASessionCookieThatEndsWithItsToken) {
  Serve("");
  httplib::Client browser("127.0.0.1", port_);
  auto wrong = browser.Post("/api/v1/session", R"({"token": "blt_nope"})", "application/json");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  EXPECT_FALSE(wrong->has_header("Set-Cookie"));
  EXPECT_EQ(LastAudit().call, "DashboardLogIn");
  EXPECT_EQ(LastAudit().outcome, "refused");

  auto login =
      browser.Post("/api/v1/session", R"({"token": ")" + operator_ + R"("})", "application/json");
  ASSERT_TRUE(login);
  ASSERT_EQ(login->status, 200) << login->body;
  const std::string set_cookie = login->get_header_value("Set-Cookie");
  EXPECT_EQ(set_cookie.rfind("benchlab_session=", 0), 0u) << set_cookie;
  EXPECT_NE(set_cookie.find("; HttpOnly"), std::string::npos);
  EXPECT_NE(set_cookie.find("; SameSite=Strict"), std::string::npos);
  EXPECT_EQ(set_cookie.find("Secure"), std::string::npos) << "plain HTTP on loopback";
  EXPECT_EQ(set_cookie.find(operator_.substr(4)), std::string::npos)
      << "the cookie is not the token";
  EXPECT_EQ(ojson::parse(login->body)["role"], "operator");
  const std::string cookie = set_cookie.substr(0, set_cookie.find(';'));

  auto who = browser.Get("/api/v1/session", {{"Cookie", cookie}});
  ASSERT_TRUE(who);
  EXPECT_EQ(ojson::parse(who->body)["name"], "ops");
  EXPECT_EQ(ojson::parse(who->body)["can_rerun"], true);
  const std::string body = R"({"window_ids": [)" + std::to_string(nginx1_) + "]}";
  auto rerun = browser.Post("/api/v1/rerun", {{"Cookie", cookie}}, body, "application/json");
  ASSERT_TRUE(rerun);
  EXPECT_EQ(rerun->status, 202) << rerun->body;

  // A forged cookie, or one with a character changed, is no session.
  std::string changed = cookie;
  changed.back() = changed.back() == 'A' ? 'B' : 'A';
  for (const std::string& bad : {std::string("benchlab_session=forged"), changed}) {
    auto refused = browser.Get("/api/v1/campaigns", {{"Cookie", bad}});
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 401) << bad;
  }

  // Revoking the token ends its session at the next request.
  ASSERT_TRUE(store_->RevokeToken("ops", FormatIsoTime(std::chrono::system_clock::now())).ok());
  auto after = browser.Get("/api/v1/campaigns", {{"Cookie", cookie}});
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 401);

  // Logging out ends a session too.
  const std::string viewer = MakeToken("watcher", "viewer");
  auto again =
      browser.Post("/api/v1/session", R"({"token": ")" + viewer + R"("})", "application/json");
  ASSERT_TRUE(again);
  const std::string viewer_cookie = again->get_header_value("Set-Cookie")
                                        .substr(0, again->get_header_value("Set-Cookie").find(';'));
  auto as_viewer =
      browser.Post("/api/v1/rerun", {{"Cookie", viewer_cookie}}, body, "application/json");
  ASSERT_TRUE(as_viewer);
  EXPECT_EQ(as_viewer->status, 403);
  auto out = browser.Delete("/api/v1/session", {{"Cookie", viewer_cookie}});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, 200);
  EXPECT_NE(out->get_header_value("Set-Cookie").find("Max-Age=0"), std::string::npos);
  auto gone = browser.Get("/api/v1/agents", {{"Cookie", viewer_cookie}});
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->status, 401);
}

// Beyond loopback: HTTPS only (or --insecure), and every read needs a token. The wildcard
// address is not loopback, so the test listens there and connects through 127.0.0.1.
TEST_F(HttpServerTest, BeyondLoopbackItIsHttpsAndEveryCallNeedsAToken) {
  MakeApi();
  auto plain = api_->Start({"0.0.0.0", 0}, "");
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(plain.status().message().find("--http-tls-cert"), std::string::npos);

  const std::string ca = (dir_ / "ca").string();
  ASSERT_TRUE(InitCa(ca).ok());
  ASSERT_TRUE(IssueCertificate(ca, {"coordinator", Role::kCoordinator, {"127.0.0.1"}, 30}).ok());
  const CaPaths paths(ca);
  auto mismatched =
      api_->Start({"0.0.0.0", 0}, "", {}, HttpTls{paths.Cert("coordinator"), paths.key});
  ASSERT_FALSE(mismatched.ok());
  EXPECT_EQ(mismatched.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(mismatched.status().message().find(paths.key), std::string::npos);

  auto bound = api_->Start({"0.0.0.0", 0}, "", {"127.0.0.1"},
                           HttpTls{paths.Cert("coordinator"), paths.Key("coordinator")});
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  const std::string host = "127.0.0.1:" + std::to_string(bound->port);
  httplib::SSLClient client("127.0.0.1", bound->port);
  client.set_ca_cert_path(paths.cert.c_str());
  client.enable_server_certificate_verification(true);
  client.set_read_timeout(10, 0);

  auto anonymous = client.Get("/api/v1/campaigns", {{"Host", host}});
  ASSERT_TRUE(anonymous) << httplib::to_string(anonymous.error());
  EXPECT_EQ(anonymous->status, 401);
  const std::string viewer = MakeToken("watcher", "viewer");
  httplib::Headers as_viewer = Bearer(viewer);
  as_viewer.emplace("Host", host);
  auto read = client.Get("/api/v1/campaigns", as_viewer);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, 200);
  // A series is a read like the others.
  auto series_anonymous = client.Get("/api/v1/series/demo", {{"Host", host}});
  ASSERT_TRUE(series_anonymous);
  EXPECT_EQ(series_anonymous->status, 401);
  auto series_read = client.Get("/api/v1/series/demo", as_viewer);
  ASSERT_TRUE(series_read);
  EXPECT_EQ(series_read->status, 200) << series_read->body;
  auto session = client.Get("/api/v1/session", as_viewer);
  ASSERT_TRUE(session);
  EXPECT_EQ(ojson::parse(session->body)["reads_open"], false);
  // /metrics is a read like the API's.
  auto metrics_anonymous = client.Get("/metrics", {{"Host", host}});
  ASSERT_TRUE(metrics_anonymous);
  EXPECT_EQ(metrics_anonymous->status, 401);
  auto metrics_read = client.Get("/metrics", as_viewer);
  ASSERT_TRUE(metrics_read);
  EXPECT_EQ(metrics_read->status, 200);
  EXPECT_NE(metrics_read->body.find("benchlab_windows_total"), std::string::npos);

  auto login = client.Post("/api/v1/session", {{"Host", host}}, R"({"token": ")" + viewer + R"("})",
                           "application/json");
  ASSERT_TRUE(login);
  EXPECT_NE(login->get_header_value("Set-Cookie").find("; Secure"), std::string::npos);
  // A POST from the page's own origin is https://, not http://.
  const std::string body = R"({"window_ids": [)" + std::to_string(nginx1_) + "]}";
  const std::string op = MakeToken("ops-https", "operator");
  httplib::Headers own = Bearer(op);
  own.emplace("Host", host);
  own.emplace("Origin", "http://" + host);
  auto http_origin = client.Post("/api/v1/rerun", own, body, "application/json");
  ASSERT_TRUE(http_origin);
  EXPECT_EQ(http_origin->status, 403);
  own.erase("Origin");
  own.emplace("Origin", "https://" + host);
  auto https_origin = client.Post("/api/v1/rerun", own, body, "application/json");
  ASSERT_TRUE(https_origin);
  EXPECT_EQ(https_origin->status, 202) << https_origin->body;

  // Plain HTTP to the HTTPS port gets no answer.
  httplib::Client clear("127.0.0.1", bound->port);
  clear.set_read_timeout(5, 0);
  auto refused = clear.Get("/api/v1/campaigns", Bearer(viewer));
  EXPECT_TRUE(!refused || refused->status == 400);
}

// /metrics on loopback: open like the API's reads, in Prometheus's text format, with the
// windows recorded, the campaigns by state and the store's size.
TEST_F(HttpServerTest, MetricsAreOpenOnLoopbackAndCountRecordedWindows) {
  Serve("");
  WindowReason foreign, drift;
  foreign.kind = drift.kind = ReasonKind::kGate;
  foreign.name = "foreign_cpu";
  drift.name = "selftest_drift";
  metrics_->RecordWindow("invalid", {foreign, drift}, 12.0);
  metrics_->RecordWindow("valid", {}, 3.0);
  httplib::Client anonymous("127.0.0.1", port_);
  auto res = anonymous.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), kMetricsContentType);
  const std::string& body = res->body;
  for (const char* line : {
           "benchlab_windows_total{verdict=\"invalid\"} 1\n",
           "benchlab_windows_total{verdict=\"valid\"} 1\n",
           "benchlab_windows_total{verdict=\"failed\"} 0\n",
           "benchlab_window_reasons_total{kind=\"gate\",reason=\"foreign_cpu\"} 1\n",
           "benchlab_window_reasons_total{kind=\"gate\",reason=\"selftest_drift\"} 1\n",
           "benchlab_window_duration_seconds_bucket{verdict=\"invalid\",le=\"10\"} 0\n",
           "benchlab_window_duration_seconds_bucket{verdict=\"invalid\",le=\"20\"} 1\n",
           "benchlab_campaigns{state=\"running\"} 1\n",
           "benchlab_campaigns{state=\"done\"} 0\n",
           "benchlab_agents{state=\"ready\"} 0\n",
           "# TYPE benchlab_windows_total counter\n",
           "# TYPE benchlab_store_bytes gauge\n",
       }) {
    EXPECT_NE(body.find(line), std::string::npos) << line << " not in\n" << body;
  }
  // The database is there, so its size is not 0.
  EXPECT_EQ(body.find("benchlab_store_bytes{file=\"db\"} 0\n"), std::string::npos) << body;
  EXPECT_NE(body.find("benchlab_store_bytes{file=\"db\"} "), std::string::npos) << body;
}

// Two hundred clients from the timed request's own address, each trickling a header line every
// 100 ms and never ending its head, once held all eight of the HTTP server's threads: nothing
// else was answered until they stopped. The front reads heads without a thread per connection.
TEST_F(HttpServerTest, AnswersWithinASecondWhile200ClientsTrickleTheirHeads) {
  Serve("");
  SlowClients slow(port_, 200, "GET /api/v1/campaigns HTTP/1.1\r\n", "X-Slow: 1\r\n");
  ASSERT_EQ(slow.connected(), 200u);
  slow.WaitRounds(3);  // every connection accepted and mid-head
  httplib::Client timed("127.0.0.1", port_);
  timed.set_read_timeout(5, 0);
  const auto start = std::chrono::steady_clock::now();
  auto res = timed.Get("/api/v1/campaigns");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_LT(took, std::chrono::seconds(1));
  EXPECT_EQ(slow.open(), 200u) << "the slow clients were held, not refused";
}

// The same over HTTPS, where a slow client stalls the TLS handshake instead: each sends a record
// header announcing a ClientHello, then one byte of it every 100 ms.
TEST_F(HttpServerTest, HttpsAnswersWithinASecondWhile200HandshakesTrickle) {
  MakeApi();
  const std::string ca = (dir_ / "ca").string();
  ASSERT_TRUE(InitCa(ca).ok());
  ASSERT_TRUE(IssueCertificate(ca, {"coordinator", Role::kCoordinator, {"127.0.0.1"}, 30}).ok());
  const CaPaths paths(ca);
  auto bound = api_->Start({"127.0.0.1", 0}, "", {},
                           HttpTls{paths.Cert("coordinator"), paths.Key("coordinator")});
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  SlowClients slow(bound->port, 200, std::string("\x16\x03\x01\x02\x00\x01", 6), "\x03");
  ASSERT_EQ(slow.connected(), 200u);
  slow.WaitRounds(3);
  httplib::SSLClient timed("127.0.0.1", bound->port);
  timed.set_ca_cert_path(paths.cert.c_str());
  timed.enable_server_certificate_verification(true);
  timed.set_read_timeout(5, 0);
  timed.set_connection_timeout(5, 0);
  const auto start = std::chrono::steady_clock::now();
  auto res = timed.Get("/api/v1/campaigns");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_LT(took, std::chrono::seconds(1));
}

// A page that another site frames, or whose content a browser sniffs as script, or that leaks
// its URL to other sites: every answer says none of that may happen, files, documents and errors
// alike (docs/api.md, "Security headers").
TEST_F(HttpServerTest, EveryAnswerCarriesTheSecurityHeaders) {
  fs::create_directories(dir_ / "web" / "assets");
  std::ofstream(dir_ / "web" / "index.html") << "<!doctype html><title>dash</title>";
  std::ofstream(dir_ / "web" / "assets" / "app.js") << "console.log(1)";
  Serve((dir_ / "web").string());
  std::vector<std::pair<std::string, httplib::Result>> answers;
  answers.emplace_back("page", client_->Get("/"));
  answers.emplace_back("script", client_->Get("/assets/app.js"));
  answers.emplace_back("document", client_->Get("/api/v1/campaigns"));
  answers.emplace_back("metrics", client_->Get("/metrics"));
  answers.emplace_back("404", client_->Get("/api/v1/campaigns/helo"));
  answers.emplace_back("421", client_->Get("/api/v1/campaigns", {{"Host", "evil.example"}}));
  answers.emplace_back(
      "413", client_->Post("/api/v1/rerun", std::string(100 * 1024, ' '), "application/json"));
  for (const auto& [what, res] : answers) {
    ASSERT_TRUE(res) << what;
    const std::string csp = res->get_header_value("Content-Security-Policy");
    for (const char* directive :
         {"default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'",
          "base-uri 'none'", "form-action 'self'", "object-src 'none'"}) {
      EXPECT_NE(csp.find(directive), std::string::npos) << what << ": " << csp;
    }
    EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << what << ": " << csp;
    EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff") << what;
    EXPECT_EQ(res->get_header_value("X-Frame-Options"), "DENY") << what;
    EXPECT_EQ(res->get_header_value("Referrer-Policy"), "no-referrer") << what;
  }
  EXPECT_EQ(answers[6].second->status, 413);
  // What the front refuses before any route sees it, too: a head of 64 KiB.
  const std::string raw = Raw("GET / HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port_) +
                              "\r\nX-Big: " + std::string(64 * 1024, 'a') + "\r\n\r\n");
  ASSERT_EQ(raw.rfind("HTTP/1.1 431", 0), 0u) << raw.substr(0, 200);
  EXPECT_NE(raw.find("\r\nX-Frame-Options: DENY\r\n"), std::string::npos) << raw;
  EXPECT_NE(raw.find("\r\nContent-Security-Policy: default-src 'self'"), std::string::npos) << raw;
}

// The database's path is the coordinator's business: an answer about something that is not
// there says what is missing, not where the store lives.
TEST_F(HttpServerTest, NoAnswerNamesTheDatabaseFile) {
  Serve("");
  const std::string db = (dir_ / "bench.db").string();
  struct Ask {
    std::string what;
    httplib::Result res;
    std::string says;
  };
  std::vector<Ask> asks;
  asks.push_back({"campaign", client_->Get("/api/v1/campaigns/helo"), "helo"});
  asks.push_back({"report", client_->Get("/api/v1/campaigns/helo/report"), "helo"});
  asks.push_back({"series", client_->Get("/api/v1/series/helo"), "helo"});
  asks.push_back({"window", client_->Get("/api/v1/windows/99999"), "99999"});
  asks.push_back({"rerun of a window",
                  client_->Post("/api/v1/rerun", R"({"window_ids": [99999]})", "application/json"),
                  "no window has id 99999"});
  asks.push_back({"rerun of a campaign",
                  client_->Post("/api/v1/rerun", R"({"campaign": "helo", "invalid": true})",
                                "application/json"),
                  "no window matches"});
  for (const Ask& ask : asks) {
    ASSERT_TRUE(ask.res) << ask.what;
    EXPECT_EQ(ask.res->status, 404) << ask.what << ": " << ask.res->body;
    const std::string error = ojson::parse(ask.res->body)["error"];
    EXPECT_EQ(error.find(db), std::string::npos) << ask.what << ": " << error;
    EXPECT_EQ(error.find("bench.db"), std::string::npos) << ask.what << ": " << error;
    EXPECT_NE(error.find(ask.says), std::string::npos) << ask.what << ": " << error;
  }
}

TEST_F(HttpServerTest, InsecureAllowsPlainHttpBeyondLoopback) {
  MakeApi();
  HttpTls insecure;
  insecure.insecure = true;
  auto bound = api_->Start({"0.0.0.0", 0}, "", {"127.0.0.1"}, insecure);
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  httplib::Client client("127.0.0.1", bound->port);
  auto anonymous =
      client.Get("/api/v1/campaigns", {{"Host", "127.0.0.1:" + std::to_string(bound->port)}});
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401) << "still a token for every read";
}

}  // namespace
}  // namespace benchlab
