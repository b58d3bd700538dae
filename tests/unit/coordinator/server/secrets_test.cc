// A target's env secret submitted to the coordinator is kept only as a hash: not in the
// database's bytes, the reports, the API's documents or the report RPC.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/report_format.h"
#include "coordinator/server/coordinator_service.h"
#include "coordinator/server/http_api.h"
#include "coordinator/server/scheduler.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSecret = "s3cr3t-value";
constexpr const char* kCampaign = R"(name = "secret"
baseline = "api"
public_env = ["NODE_ENV"]
[matrix]
connections = [1]
rounds = 1
[[target]]
name = "api"
command = ["./api"]
env = { API_TOKEN = "s3cr3t-value", NODE_ENV = "production" }
[[scenario]]
name = "s"
path = "/"
expect = { status = 200 }
)";

std::string Bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SecretsTest, AnEnvSecretIsNowhereButAsAHash) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("benchlab_secrets_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    auto store = Store::Open((dir / "bench.db").string());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    AgentRegistry registry;
    Scheduler scheduler(**store, registry);
    auto submitted = scheduler.Submit(kCampaign, "secret.toml", "");
    ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
    WindowRow w;
    w.campaign_id = submitted->campaign_id;
    w.target = "api";
    w.scenario = "s";
    w.connections = 1;
    w.load_level = "c1";
    w.round = 1;
    w.verdict = "valid";
    w.started_at = w.ended_at = "2026-12-01T10:00:00Z";
    w.server_agent = "srv";
    w.load_agent = "ld";
    w.requests = 100;
    w.duration_s = 1;
    w.rps = 100;
    ASSERT_TRUE((*store)->InsertWindow(w, {}).ok());

    auto input = LoadReportInput(**store, "secret");
    ASSERT_TRUE(input.ok()) << input.status().ToString();
    for (const char* format : {"md", "json", "csv"}) {
      auto text = FormatReport(*input, format);
      ASSERT_TRUE(text.ok()) << format;
      EXPECT_EQ(text->find(kSecret), std::string::npos) << format << ":\n" << *text;
    }
    auto json = FormatReport(*input, "json");
    EXPECT_NE(json->find("API_TOKEN = \\\"" + RedactedEnvValue(kSecret) + "\\\""),
              std::string::npos)
        << "the name stays, the value is its hash";
    EXPECT_NE(json->find("NODE_ENV = \\\"production\\\""), std::string::npos) << "public";

    auto doc = CampaignDoc(**store, "secret");
    ASSERT_TRUE(doc.ok()) << doc.status().ToString();
    EXPECT_EQ(doc->dump().find(kSecret), std::string::npos) << "GET /api/v1/campaigns/secret";

    CoordinatorService service(**store, registry, scheduler);
    v1::GetReportRequest req;
    req.set_campaign("secret");
    req.set_format("json");
    v1::GetReportReply reply;
    ASSERT_TRUE(service.GetReport(nullptr, &req, &reply).ok());
    EXPECT_EQ(reply.text().find(kSecret), std::string::npos) << "GetReport";

    for (const char* file : {"bench.db", "bench.db-wal"}) {
      EXPECT_EQ(Bytes(dir / file).find(kSecret), std::string::npos) << file;
    }
  }
  EXPECT_EQ(Bytes(dir / "bench.db").find(kSecret), std::string::npos) << "after checkpointing";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace benchlab
