// Campaign: the parsed, validated form of a campaign file (TOML, v1; see docs/campaign.md).
// Parsing checks the whole file before anything runs; every error names file:line, the key and
// the expected form, e.g.
//   hello.toml:5: matrix.connections: expected a list of positive integers, got "ten"
// Value type; safe to copy and share read-only between threads.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
// TargetDef lives in common/ because agents read the same shape from their own catalogues; the
// parser sets its campaign_dir and line.
#include "common/target.h"

namespace benchlab {

struct Expectation {
  int status = 200;
  std::optional<std::string> body;  // exact bytes when set
  std::vector<std::pair<std::string, std::string>> headers;  // named headers, exact values
};

struct ScenarioDef {
  std::string name;
  std::string method = "GET";
  std::string path = "/";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  Expectation expect;
  int line = 0;
};

enum class Order { kRotate, kFixed };

struct Campaign {
  std::string name;      // [a-z0-9-]+
  std::string baseline;  // a target name
  std::vector<int> connections;
  int rounds = 3;
  Order order = Order::kRotate;
  std::chrono::nanoseconds warmup{std::chrono::seconds(1)};
  std::chrono::nanoseconds duration{std::chrono::seconds(2)};
  int load_threads = 1;
  std::vector<int> load_cpus;  // empty: not pinned
  double error_rate_max = 0.01;
  std::vector<TargetDef> targets;
  std::vector<ScenarioDef> scenarios;
  std::vector<ScenarioDef> negatives;

  std::string source_name;   // the file name errors cite, e.g. "examples/hello.toml"
  std::string campaign_dir;  // absolute directory of the file, for {campaign_dir}
  std::string text;          // the file's text, stored with the campaign

  // Lookups by name; nullptr when absent. FindScenario searches scenarios only, not negatives.
  const TargetDef* FindTarget(const std::string& target_name) const;
  const ScenarioDef* FindScenario(const std::string& scenario_name) const;
};

// Reads and validates a campaign file. Errors: InvalidArgument with a one-line
// "file:line: key: expected ..., got ..." message (NotFound/IoError when unreadable).
Result<Campaign> ParseCampaignFile(const std::string& path);
// The same from text; source_name is what errors cite, campaign_dir fills {campaign_dir}.
Result<Campaign> ParseCampaignText(const std::string& text, const std::string& source_name,
                                   const std::string& campaign_dir);

// For the embedded lab, whose targets run from the campaign file itself: every target must have
// a command. Same error form as parsing.
Status RequireCommands(const Campaign& campaign);

}  // namespace benchlab
