#include "cli/agents_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/text_table.h"

namespace benchlab {
namespace {

v1::AgentInfo MakeAgent(const std::string& name, const std::string& state, int64_t age_ms) {
  v1::AgentInfo a;
  a.set_name(name);
  a.set_state(state);
  a.set_address("10.0.0.7:7701");
  a.set_lease_age_ms(age_ms);
  return a;
}

TEST(AgentsFormatTest, LeaseAge) {
  EXPECT_EQ(FormatLeaseAge(0), "0ms");
  EXPECT_EQ(FormatLeaseAge(-5), "0ms");
  EXPECT_EQ(FormatLeaseAge(999), "999ms");
  EXPECT_EQ(FormatLeaseAge(1000), "1.0s");
  EXPECT_EQ(FormatLeaseAge(4250), "4.2s");
  EXPECT_EQ(FormatLeaseAge(59'999), "59.9s");
  EXPECT_EQ(FormatLeaseAge(185'000), "3m05s");
  EXPECT_EQ(FormatLeaseAge(7'620'000), "2h07m");
}

TEST(AgentsFormatTest, HostSummary) {
  v1::AgentInfo a = MakeAgent("s", "ready", 0);
  EXPECT_EQ(FormatHostSummary(a), "-") << "no host facts sent";
  a.mutable_host()->set_hostname("box");
  EXPECT_EQ(FormatHostSummary(a), "box");
  a.mutable_host()->set_logical_cores(16);
  a.mutable_host()->set_physical_cores(8);
  EXPECT_EQ(FormatHostSummary(a), "box 8c/16t");
  a.mutable_host()->set_physical_cores(0);
  EXPECT_EQ(FormatHostSummary(a), "box 16t");
}

TEST(AgentsFormatTest, TableAlignsColumnsAndDashesEmptyLists) {
  v1::AgentInfo s = MakeAgent("server-1", "busy", 1200);
  s.add_roles("server");
  s.add_labels("rack-1");
  s.add_catalogue("nginx");
  s.add_catalogue("hello-server");
  s.mutable_host()->set_hostname("box");
  s.mutable_host()->set_physical_cores(4);
  s.mutable_host()->set_logical_cores(8);
  s.set_certificate_expires("2027-12-01T10:00:00Z");
  v1::AgentInfo l = MakeAgent("l", "lost", 61'000);
  l.add_roles("load");
  EXPECT_EQ(
      FormatAgentTable({s, l}),
      "name      state  roles   labels  address        lease  cert until  targets             "
      "host\n"
      "server-1  busy   server  rack-1  10.0.0.7:7701  1.2s   2027-12-01  nginx,hello-server  "
      "box 4c/8t\n"
      "l         lost   load    -       10.0.0.7:7701  1m01s  -           -                   "
      "-\n");
  EXPECT_EQ(FormatAgentTable({}), "no agents registered\n");
}

TEST(AgentsFormatTest, JsonHoldsEveryFieldAndHostOnlyWhenSent) {
  v1::AgentInfo s = MakeAgent("server-1", "suspect", 7000);
  s.add_roles("server");
  s.add_roles("load");
  s.add_labels("rack-1");
  s.add_catalogue("nginx");
  (*s.mutable_versions())["nginx"] = "nginx/1.24";
  s.mutable_host()->set_cpu_model("Xeon");
  v1::AgentInfo l = MakeAgent("l", "ready", 5);
  auto json = nlohmann::json::parse(FormatAgentsJson({s, l}));
  ASSERT_EQ(json["agents"].size(), 2u);
  const auto& a = json["agents"][0];
  EXPECT_EQ(a["name"], "server-1");
  EXPECT_EQ(a["state"], "suspect");
  EXPECT_EQ(a["roles"], nlohmann::json({"server", "load"}));
  EXPECT_EQ(a["labels"], nlohmann::json({"rack-1"}));
  EXPECT_EQ(a["address"], "10.0.0.7:7701");
  EXPECT_EQ(a["lease_age_ms"], 7000);
  EXPECT_EQ(a["catalogue"], nlohmann::json({"nginx"}));
  EXPECT_EQ(a["versions"]["nginx"], "nginx/1.24");
  EXPECT_EQ(a["host"]["cpu_model"], "Xeon");
  EXPECT_FALSE(json["agents"][1].contains("host"));
  EXPECT_FALSE(a.contains("certificate_expires")) << "plaintext: no certificate";
  EXPECT_EQ(json["agents"][1]["roles"], nlohmann::json::array());
  EXPECT_EQ(FormatAgentsJson({}), "{\n  \"agents\": []\n}\n");
}

void AddFinding(v1::AgentInfo& a, const std::string& name, const std::string& value,
                const std::string& status) {
  v1::HostFinding* f = a.mutable_host()->add_findings();
  f->set_name(name);
  f->set_value(value);
  f->set_status(status);
  f->set_why("because");
}

TEST(AgentsFormatTest, HostWarningsFollowTheTableEscaped) {
  v1::AgentInfo s = MakeAgent("load-1", "ready", 0);
  s.add_roles("load");
  AddFinding(s, "governor", "powersave", "warn");
  AddFinding(s, "aslr", "0", "ok");
  AddFinding(s, "cstates", "unavailable", "unavailable");
  AddFinding(s, "thp", "always\x1b[2J", "warn");
  EXPECT_EQ(FormatHostWarnings(s), "governor=powersave (warn), thp=always\\x1b[2J (warn)");
  v1::AgentInfo quiet = MakeAgent("quiet", "ready", 0);
  AddFinding(quiet, "aslr", "0", "ok");
  EXPECT_EQ(FormatHostWarnings(quiet), "");
  const std::string table = FormatAgentTable({s, quiet});
  EXPECT_NE(table.find("\nload-1 host: governor=powersave (warn), thp=always\\x1b[2J (warn)\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("quiet host:"), std::string::npos);

  auto json = nlohmann::json::parse(FormatAgentsJson({s}));
  const auto& findings = json["agents"][0]["host"]["findings"];
  ASSERT_EQ(findings.size(), 4u) << "JSON holds every finding, ok ones too";
  EXPECT_EQ(findings[1]["name"], "aslr");
  EXPECT_EQ(findings[1]["status"], "ok");
  EXPECT_EQ(findings[1]["why"], "because");
}

TEST(AgentsFormatTest, TargetsAnAgentCannotStartFollowTheTable) {
  v1::AgentInfo s = MakeAgent("srv", "ready", 0);
  s.add_catalogue("nginx");
  s.add_catalogue("app");
  (*s.mutable_unstartable())["nginx"] = "command \"nginx\" not found in PATH";
  (*s.mutable_unstartable())["app"] = "cpus: CPU 7 is not one this host offers (0-1)\x1b[2J";
  const std::string table = FormatAgentTable({s, MakeAgent("quiet", "ready", 0)});
  EXPECT_NE(table.find("\nsrv cannot start app: cpus: CPU 7 is not one this host offers "
                       "(0-1)\\x1b[2J\nsrv cannot start nginx: command \"nginx\" not found in "
                       "PATH\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("quiet cannot"), std::string::npos);
  auto json = nlohmann::json::parse(FormatAgentsJson({s}));
  EXPECT_EQ(json["agents"][0]["unstartable"]["nginx"], "command \"nginx\" not found in PATH");
  EXPECT_FALSE(
      nlohmann::json::parse(FormatAgentsJson({MakeAgent("quiet", "ready", 0)}))["agents"][0]
          .contains("unstartable"));
}

TEST(AgentsFormatTest, WhatAnAgentSentPrintsEscapedOneAgentALine) {
  // Stored before the coordinator checked host facts, or sent by a coordinator that does not.
  v1::AgentInfo evil = MakeAgent("evil\x1b[2J\nFAKE-LINE", "ready", 0);
  evil.add_roles("load");
  evil.add_labels("rack\r1");
  evil.set_address("10.0.0.9:1\x9b");
  evil.mutable_host()->set_hostname("box\x1b]0;pwned\x07");
  AddFinding(evil, "thp", "always", "warn");
  evil.set_certificate_expires("2026-12-02T00:00:00Z");
  const std::string table = FormatAgentTable({evil}, kMaxTextWidth);
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 3) << "header, agent, host warnings";
  for (char c : table) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (byte >= 0x20 && byte != 0x7f)) << "control byte in\n" << table;
  }
  EXPECT_NE(table.find("evil\\x1b[2J\\nFAKE-LINE  ready"), std::string::npos) << table;
  EXPECT_NE(table.find("rack\\r1"), std::string::npos) << table;
  EXPECT_NE(table.find("10.0.0.9:1\\x9b"), std::string::npos) << table;
  EXPECT_NE(table.find("box\\x1b]0;pwned\\x07"), std::string::npos) << table;
  EXPECT_NE(table.find("\nevil\\x1b[2J\\nFAKE-LINE host: thp=always (warn)\n"), std::string::npos)
      << table;
  const auto now = std::chrono::system_clock::from_time_t(1796083200);  // 2026-12-01T00:00:00Z
  EXPECT_EQ(CertificateWarnings({evil}, now),
            "warning: agent evil\\x1b[2J\\nFAKE-LINE's certificate ends 2026-12-02T00:00:00Z, "
            "in 1 days\n");
}

TEST(AgentsFormatTest, CertificatesEndingWithinTwoWeeksAreWarnedAbout) {
  const auto now = std::chrono::system_clock::from_time_t(1796083200);  // 2026-12-01T00:00:00Z
  v1::AgentInfo soon = MakeAgent("soon", "ready", 0);
  soon.set_certificate_expires("2026-12-10T00:00:00Z");
  v1::AgentInfo later = MakeAgent("later", "ready", 0);
  later.set_certificate_expires("2027-06-01T00:00:00Z");
  v1::AgentInfo gone = MakeAgent("gone", "ready", 0);
  gone.set_certificate_expires("2026-11-30T00:00:00Z");
  v1::AgentInfo plain = MakeAgent("plain", "ready", 0);
  EXPECT_EQ(CertificateWarnings({soon, later, gone, plain}, now),
            "warning: agent soon's certificate ends 2026-12-10T00:00:00Z, in 9 days\n"
            "warning: agent gone's certificate ended 2026-11-30T00:00:00Z\n");
  auto json = nlohmann::json::parse(FormatAgentsJson({soon}));
  EXPECT_EQ(json["agents"][0]["certificate_expires"], "2026-12-10T00:00:00Z");
}

}  // namespace
}  // namespace benchlab

namespace benchlab {
namespace {

// A fleet with long names, many targets and labels: every line within the width, the two
// agents' names still apart, the lease under its header.
TEST(AgentsFormatTest, TheTableFitsTheWidth) {
  std::vector<v1::AgentInfo> agents;
  for (const std::string name :
       {"server-eu-west-1a-bare-metal-01", "server-eu-west-1a-bare-metal-02"}) {
    v1::AgentInfo a = MakeAgent(name, "ready", 185'000);
    a.add_roles("server");
    a.add_roles("load");
    a.add_labels("rack=eu-west-1a-row-7");
    a.add_labels("cpu=epyc-9654");
    for (const char* t : {"nginx", "caddy", "actix-web", "axum", "hello-server", "node-fastify"}) {
      a.add_catalogue(t);
    }
    a.set_certificate_expires("2027-12-01T00:00:00Z");
    a.mutable_host()->set_hostname("bm-eu-west-1a-01.lab.example.org");
    a.mutable_host()->set_logical_cores(192);
    agents.push_back(a);
  }
  const std::string table = FormatAgentTable(agents, 100);
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end; (end = table.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(table.substr(start, end - start));
    EXPECT_LE(TextColumns(lines.back()), 100u) << lines.back() << "\n" << table;
  }
  ASSERT_EQ(lines.size(), 3u) << table;
  EXPECT_NE(lines[1].find("-01 "), std::string::npos) << table;
  EXPECT_NE(lines[2].find("-02 "), std::string::npos) << table;
  auto column = [](const std::string& line, const std::string& text) {
    const size_t at = line.find(text);
    return at == std::string::npos ? at : TextColumns(line.substr(0, at));
  };
  EXPECT_EQ(column(lines[0], "lease") + 5, column(lines[1], "3m05s") + 5) << table;
  EXPECT_EQ(column(lines[0], "state"), column(lines[1], "ready")) << table;
  // Wide enough, all of it.
  const std::string wide = FormatAgentTable(agents, 300);
  EXPECT_NE(wide.find("bm-eu-west-1a-01.lab.example.org 192t"), std::string::npos) << wide;
  EXPECT_NE(wide.find("nginx,caddy,actix-web,axum,hello-server,node-fastify"), std::string::npos)
      << wide;
}

}  // namespace
}  // namespace benchlab
