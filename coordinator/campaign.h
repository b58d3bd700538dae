// Campaign: the parsed, validated form of a campaign file (TOML, v1; see docs/campaign.md).
// Parsing checks the whole file before anything runs; every error names file:line, the key and
// the expected form, e.g.
//   hello.toml:5: matrix.connections: expected a list of positive integers, got "ten"
// Value type; safe to copy and share read-only between threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/folded_profile.h"
#include "common/status.h"
#include "coordinator/gates.h"
// TargetDef lives in common/ because agents read the same shape from their own catalogues; the
// parser sets its campaign_dir and line.
#include "common/service.h"
#include "common/target.h"

namespace benchlab {

struct Expectation {
  int status = 200;
  std::optional<std::string> body;                           // exact bytes when set
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

// The order of targets within a round (docs/campaign.md, "The plan").
enum class Order { kRotate, kFixed, kShuffle };

// Which consecutive windows may share one target process (docs/campaign.md, "Target processes").
enum class FreshProcess {
  kWindow,  // every window starts its own process
  kCell,    // kept across consecutive windows of the same target, scenario and round
  kRound,   // kept across consecutive windows of the same target and round
};

// One load level. Closed loop when rate == 0: `connections` connections, one request in flight
// each. Open loop when rate > 0: `rate` requests per second over `connections` connections.
struct LoadLevel {
  int connections = 0;
  double rate = 0;
  std::string tool = "benchlab";  // the load generator: "benchlab", "wrk" or "h2load"
  bool operator==(const LoadLevel&) const = default;
};

// "c64" for 64 connections, "r5000" / "r2500.5" for an open-loop rate (shortest exact decimal),
// with "@wrk" / "@h2load" appended when an external tool measures it ("c64@wrk"). Stable: it
// appears in window labels, spool keys and reports.
std::string LoadLevelLabel(const LoadLevel& level);

// [noise]: identical windows of one cell spread through the campaign, measuring its noise floor.
struct NoiseSpec {
  std::string target;    // a [[target]]
  std::string scenario;  // a [[scenario]]
  LoadLevel level;       // one of the matrix's levels; default its first
  int windows = 5;       // 2 to 100
  int line = 0;          // where [noise] starts in its file
};

// [stats]: how comparisons with the baseline are judged (docs/methodology.md, "Intervals and
// verdicts") and, for an adaptive plan, the budget.
struct StatsSpec {
  double confidence = 0.95;  // two-sided confidence of every interval, 0.5 to 0.999
  double margin = 0.02;      // the smallest difference worth reporting, a fraction, 0 to 0.5
  // An adaptive plan starts no new round once this much time has passed since the campaign's
  // first window; nullopt: no budget. Only with rounds = { min, max }.
  std::optional<std::chrono::nanoseconds> max_duration;
  // The figures whose comparisons must all be decided for an adaptive plan to stop measuring a
  // cell (MetricName of analysis/stats.h): req/s and CPU per request by default.
  std::vector<std::string> decide_on = {"rps", "cpu_us_per_request"};
  int line = 0;  // where [stats] starts in its file; 0 when absent
};

struct Campaign {
  std::string name;  // [a-z0-9-]+
  // The history this campaign belongs to (docs/history.md): `series = "..."`, else its name.
  std::string series;
  std::string baseline;          // a target name
  std::vector<int> connections;  // closed-loop levels, file order; may be empty when rates is not
  std::vector<double> rates;     // open-loop levels in requests/second, file order
  int open_connections = 16;     // connections opened for every open-loop level
  // [matrix] rounds: an integer N measures every cell N times (a fixed plan); a table
  // { min, max } measures each cell until every comparison in it is decided, at least min and
  // at most max rounds (an adaptive plan: docs/methodology.md, "Rounds until decided").
  int rounds = 3;      // the fixed count, or max: the plan holds this many rounds
  int min_rounds = 3;  // min of an adaptive plan; equal to rounds for a fixed one
  bool adaptive = false;
  StatsSpec stats;  // [stats]
  Order order = Order::kRotate;
  uint64_t seed = 1;  // order = shuffle only
  FreshProcess fresh_process = FreshProcess::kWindow;
  std::optional<NoiseSpec> noise;
  std::chrono::nanoseconds warmup{std::chrono::seconds(1)};
  std::chrono::nanoseconds duration{std::chrono::seconds(2)};
  int load_threads = 1;
  std::vector<int> load_cpus;  // empty: not pinned
  int load_depth = 1;          // requests in flight per connection (HTTP/1.1 pipelining)
  bool load_poisson = false;   // open loop: Poisson arrivals instead of a constant schedule
  int load_max_conns = 0;      // open loop: connections may grow to this many; 0: no growth
  // benchlab's generator's I/O engine: "auto", "io_uring" or "epoll" (docs/load.md, "Engines").
  std::string load_engine = "auto";
  // [load] tls: the load goes over TLS (docs/load.md, "HTTPS"; RunLoadRequest.tls). A target
  // that serves TLS itself ([[target]] tls) has it without [load] tls, with its defaults.
  struct LoadTls {
    double resumption = 1.0;
    std::string version = "1.3";
    std::vector<std::string> alpn = {"http/1.1"};
    bool verify = true;
    std::string server_name;  // empty: the host the load agent dials
  };
  std::optional<LoadTls> load_tls;
  // [load] requests_per_connection: reconnect after this many requests; 0 keeps connections.
  uint32_t load_requests_per_connection = 0;
  // [load] tool: the generators that measure every closed-loop level, each a level of its own
  // ("c64", "c64@wrk"); benchlab alone by default (docs/load.md, "External tools").
  std::vector<std::string> load_tools = {"benchlab"};
  GateConfig gates;  // [gates]; docs/gates.md
  // [placement]: agent names or "label:NAME" selectors; empty: any ready agents.
  std::vector<std::string> placement_server;
  std::vector<std::string> placement_load;
  // A fleet campaign runs its whole matrix on each pair at once, one window at a time per pair:
  // the pairs named ([server, load] agent names), or with all_pairs every disjoint pair of ready
  // agents that the server/load selectors allow.
  std::vector<std::pair<std::string, std::string>> placement_pairs;
  bool all_pairs = false;
  bool Fleet() const { return all_pairs || !placement_pairs.empty(); }
  // [host] require: what an agent's host findings must show for the campaign to be placed on it
  // ("governor=performance", "smt_siblings_idle"; docs/host.md). Checked at load time against
  // the known names (common/host_requirement.h).
  std::vector<std::string> host_require;
  // [profile]: a CPU profile of the server's target and side services over every window's
  // measured interval (enabled, or `--profile`), at profile_hz samples per second
  // (docs/profiles.md).
  bool profile = false;
  int profile_hz = kDefaultProfileHz;
  // [profile] targets: the targets profiled; empty, every target.
  std::vector<std::string> profile_targets;
  std::vector<TargetDef> targets;
  // [[service]]: side services targets name (docs/services.md). Run by the embedded lab's server
  // agent, which gets them as its configuration; a fleet's agents run their own.
  std::vector<ServiceDef> services;
  std::vector<ScenarioDef> scenarios;
  std::vector<ScenarioDef> negatives;
  // public_env: the env names whose values the store and reports keep as written; every other
  // env value of every target is stored redacted (RedactCampaignText).
  std::vector<std::string> public_env;
  // [labels]: what was measured, per target: a version string or a git commit, given by whoever
  // submits the campaign (the file's [labels], or `--label TARGET=VALUE`). The history takes it
  // as the target's version for this campaign over the one its windows recorded
  // (docs/history.md). Keys are targets of the campaign; values are label values (IsLabelValue).
  std::map<std::string, std::string> labels;

  std::string source_name;   // the file name errors cite, e.g. "examples/hello.toml"
  std::string campaign_dir;  // absolute directory of the file, for {campaign_dir}
  std::string text;          // the file's text, stored with the campaign

  // Lookups by name; nullptr when absent. FindScenario searches scenarios only, not negatives.
  const TargetDef* FindTarget(const std::string& target_name) const;
  // Whether the windows of `target_name` are profiled: profiles on, and the target among
  // [profile] targets when that is set.
  bool Profiles(const std::string& target_name) const;
  const ScenarioDef* FindScenario(const std::string& scenario_name) const;
  // Every load level in the order they run: connections in file order, then rates in file order.
  std::vector<LoadLevel> LoadLevels() const;
};

// Reads and validates a campaign file. Errors: InvalidArgument with a one-line
// "file:line: key: expected ..., got ..." message (NotFound/IoError when unreadable).
Result<Campaign> ParseCampaignFile(const std::string& path);
// The same from text; source_name is what errors cite, campaign_dir fills {campaign_dir}.
Result<Campaign> ParseCampaignText(const std::string& text, const std::string& source_name,
                                   const std::string& campaign_dir);

// A label value is at most as long as a target's version line (kMaxVersionBytes of
// coordinator/server/agent_limits.h), since it stands for one.
inline constexpr size_t kMaxLabelBytes = 256;
// Whether `value` can be a label: 1 to kMaxLabelBytes printable ASCII characters (' ' to '~').
bool IsLabelValue(std::string_view value);
// The campaign text with `labels` (target -> value) added, for `--label TARGET=VALUE`
// (docs/campaign.md, "[labels]"): as a [labels] table appended at the end of the text when
// the text has no labels, else as lines right after its `[labels]` header, sorted by target.
// `campaign` is the text parsed. InvalidArgument, naming the label, for a target the campaign
// does not have, a value that is not a label value, a target the text labels already (a label
// is given in one place), or labels the text holds in another form than a `[labels]` table.
Result<std::string> AddCampaignLabels(const Campaign& campaign, const std::string& text,
                                      const std::map<std::string, std::string>& labels);
// The [labels] of a stored campaign text; empty when it has none or does not parse.
std::map<std::string, std::string> CampaignTextLabels(const std::string& text);

// The embedded lab's server agent's catalogue, made from the campaign file itself: one entry per
// distinct catalogue name a target runs (its `of`, else its name), copied from the first target
// with a command that runs it, named by it and without commit or of. InvalidArgument (file:line,
// the same form as parsing) for a target whose catalogue entry no target with a command defines,
// a second command for one entry that differs from the first, or a `commit` of an entry without a
// build recipe.
Result<std::vector<TargetDef>> EmbeddedCatalogue(const Campaign& campaign);
// The agents' catalogue targets the campaign's targets run (each one's `of`, else its name),
// each once, in file order: what a server agent's catalogue must hold to be placed.
std::vector<std::string> CatalogueNames(const Campaign& campaign);
// EmbeddedCatalogue's status: whether the campaign's targets can run from the file itself.
Status RequireCommands(const Campaign& campaign);

// A target's env value as the store and reports keep it unless its name is in public_env:
// "sha256:" and the first 12 hex digits of the SHA-256 of the value (docs/campaign.md).
std::string RedactedEnvValue(std::string_view value);
// Whether a value has that form, i.e. was redacted already.
bool IsRedactedEnvValue(std::string_view value);
// The campaign text with each target's env values redacted: every value whose name is not in
// public_env and that is not redacted already is replaced, in place, by its RedactedEnvValue as
// a TOML string; lines, comments and everything else stay as they were (a multi-line value
// keeps its line breaks, outside the string), so file:line errors still point where they did,
// and redacting twice changes nothing. Errors as ParseCampaignText.
Result<std::string> RedactCampaignText(const std::string& text, const std::string& source_name);
// Whether a target's env holds a redacted value: the text was stored redacted and its targets
// cannot run from it as they are (the embedded lab needs the campaign file itself).
bool HasRedactedEnv(const Campaign& campaign);

}  // namespace benchlab
