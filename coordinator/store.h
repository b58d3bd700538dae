// Store: the one door to benchlab's SQLite database. All SQL lives in the store*.cc files and
// the schema and its migrations in schema.cc; the public tables are documented in
// docs/store.md. WAL mode, so readers (benchlab windows --db, users' own queries) never block the
// coordinator. A window and its samples are written in one transaction: a crash leaves either
// all of it or none. Thread-safe: calls are serialised on one connection.
//
// Store's methods are implemented one table family to a file, over the connection and statement
// core of store.cc and store_sql.h (one handle, one mutex, BEGIN IMMEDIATE transactions):
//   store_campaigns.cc  campaigns, targets, scenarios, placement, self-test calibrations
//   store_windows.cc    windows and their samples, services, probes and profiles
//   store_claims.cc     window claims, re-run requests, agents' kept results
//   store_audit.cc      the audit trail and the dashboard's tokens
//   store_series.cc     a series' campaigns and its confirmations
//   store_bisect.cc     bisections of regressions and their steps
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

struct sqlite3;

namespace benchlab {

// Where a campaign is: queued, running, or ended (done, failed, cancelled).
enum class CampaignState { kQueued, kRunning, kDone, kFailed, kCancelled };
// "queued", "running", "done", "failed", "cancelled": the store's spelling.
const char* CampaignStateName(CampaignState state);
// nullopt for any other text.
std::optional<CampaignState> ParseCampaignState(std::string_view text);
// done, failed or cancelled.
bool Ended(CampaignState state);

struct CampaignRow {
  int64_t id = 0;
  std::string name;
  std::string state;  // CampaignStateName, as stored: "queued" | "running" | ... (Is() compares)
  bool Is(CampaignState s) const { return state == CampaignStateName(s); }
  std::string baseline;
  std::string spec_toml;   // the campaign file's text
  std::string source;      // the file name it came from
  std::string created_at;  // ISO 8601 UTC
  std::string finished_at;
  int total_windows = 0;
  std::string error;             // why a campaign failed, when it did
  std::string placement = "{}";  // JSON {"server": name, "load": [names]} once placed
  std::string gates_mode;        // "warn" | "enforce" overrides the file's [gates] mode; "" not
  std::string series;            // the history it belongs to (docs/history.md); "": its name
  bool profile = false;          // `--profile`: profiles whatever the file's [profile] enabled says
};

// What names one planned window of a campaign across its attempts: target, scenario, load level
// ("c64" closed loop, "r5000" open loop), round (0 for noise windows), position (which tells
// noise windows apart; for matrix windows it follows from the rest) and, in a fleet campaign that
// runs its matrix on several pairs, the pair.
struct WindowKey {
  std::string target;
  std::string scenario;
  std::string load_level;
  int round = 0;
  int position = 0;
  std::string pair;  // fleet campaigns: the server agent of the pair; "" otherwise
  auto operator<=>(const WindowKey&) const = default;
};

// The window a campaign is running: written before it starts, removed when its attempt is
// stored. One left behind by a crash becomes a failed attempt (see FailClaimedWindows).
struct WindowClaim {
  int64_t campaign_id = 0;
  WindowKey key;
  bool noise = false;
  int connections = 0;
  int attempt = 1;
  std::string server_agent;
  std::string load_agent;
  std::string started_at;  // set by the store when the claim is written (ListClaims reads it)
};

struct TargetRow {
  std::string name;
  std::string command_json;  // argv as a JSON array ("[]" when the agent's catalogue holds it)
  std::string cpus;
};

struct ScenarioRow {
  std::string name;
  std::string kind;  // "scenario" | "negative"
  std::string method;
  std::string path;
  int expect_status = 0;
  std::string expect_body;  // empty when not checked
};

struct WindowRow {
  int64_t id = 0;
  int64_t campaign_id = 0;
  std::string campaign;  // name
  std::string target;
  std::string scenario;
  int connections = 0;
  int round = 0;
  int position = 0;
  int attempt = 1;
  std::string
      verdict;  // VerdictName (coordinator/outcome.h): "valid" | "invalid" | "failed" | "skipped"
  std::string reasons;  // JSON array of the reasons' texts, "[]" when there are none
  // The reasons for machines, one object per text of `reasons` in the same order (OutcomeJson,
  // coordinator/outcome.h): {"kind": "gate" | "step" | "agent_lost" | "coordinator_restart",
  // "name", "code", "host", "value", "threshold"}; "[]" when there are none.
  std::string outcome;
  std::string started_at;
  std::string ended_at;
  std::string server_agent;
  std::string load_agent;
  uint64_t requests = 0;
  double duration_s = 0;
  double rps = 0;
  uint64_t p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
  double mean_us = 0;
  uint64_t errors = 0;  // all error classes plus non-2xx responses of a 2xx scenario
  uint64_t errors_connect = 0, errors_read = 0, errors_write = 0, errors_timeout = 0,
           errors_parse = 0, errors_status = 0;
  std::string status_counts;  // JSON object {"200": n, ...}
  double server_cpu_s = 0;    // user+sys of the target's process tree over the interval
  double cpu_us_per_request = 0;
  uint64_t rss_peak_kb = 0;
  uint64_t rss_mean_kb = 0;
  double startup_ms = 0;        // spawn to first 2xx on the readiness path
  double first_request_ms = 0;  // latency of that first 2xx
  uint64_t idle_rss_kb = 0;
  double load_cpu_s = 0;      // the load generator's worker threads, summed
  double align_error_ms = 0;  // bound on the server/load interval misalignment
  std::string histogram;      // Histogram::Serialize() of the latency
  // Since schema version 2. A nullopt reading is stored as NULL: not measured, or not offered by
  // the machine ("unavailable"); never an invented 0.
  std::string target_version;
  // Since schema version 15: the 40-hex commit the agent built the target from
  // (StartTargetReply.commit, [[target]] commit); "" for a target run as its catalogue has it.
  std::string target_commit;
  std::string cpu_accounting;  // "cgroup" or "proc": how server_cpu_s was measured
  int64_t threads = 0;
  uint64_t ctx_switches_voluntary = 0, ctx_switches_involuntary = 0;
  std::optional<double> selftest_server_ms, selftest_load_ms, selftest_drift;
  std::optional<double> server_busy_pct, server_steal_pct, server_foreign_cpu_pct,
      server_foreign_cpu_max_pct;
  std::string server_top_foreign = "[]";  // JSON [{"comm": ..., "cpu_pct": ...}]
  std::optional<double> load_busy_pct, load_steal_pct, load_foreign_cpu_pct,
      load_foreign_cpu_max_pct;
  std::string load_top_foreign = "[]";
  std::optional<double> max_temp_c;
  std::optional<int64_t> throttle_events;
  std::optional<double> min_freq_ratio;
  std::optional<int64_t> swap_in_pages, swap_out_pages;
  std::string server_host = "{}";  // host facts of each agent's machine, JSON
  std::string load_host = "{}";
  // Since schema version 3: the load generator's figures (docs/load.md).
  int load_depth = 1;                    // requests in flight per connection
  std::optional<double> load_rate;       // open loop: requested req/s; nullopt: closed loop
  std::optional<int64_t> sent;           // requests of the interval handed to a connection
  std::optional<int64_t> dropped;        // open loop: slots never sent
  uint64_t errors_mismatch = 0;          // responses that failed the scenario's expect
  int generator_bound = 0;               // 1: the load generator, not the server, limited the run
  std::optional<double> throughput_rps;  // responses completed inside the interval, per second
  std::optional<int64_t> p99_uncorrected_us;  // open loop: from the actual send
  std::string histogram_uncorrected;          // open loop: Histogram::Serialize(), else empty
  std::string load_record = "{}";             // the generator's JSON record, verbatim
  std::string load_level;                     // "c64" or "r5000"; part of the window's name
  int noise = 0;                              // 1: a noise-phase window (round 0)
  std::string pair;                           // fleet campaigns: the pair's server agent; else ""
  // Since schema version 4: responses cut off at the load agent's body limit (an error class of
  // its own, counted in `errors`).
  uint64_t errors_body_too_large = 0;

  WindowKey Key() const { return {target, scenario, load_level, round, position, pair}; }
};

// One sample of a window's per-interval series.
struct SampleRow {
  std::string source;  // "server" | "load"
  double t_s = 0;      // seconds since the measured interval began
  double cpu_pct = 0;  // % of one core over the sample's period (server: target tree)
  uint64_t rss_kb = 0;
  uint64_t requests = 0;  // responses completed in the period (load samples)
  // Server samples: the whole host over the same period.
  std::optional<double> host_busy_pct = {};
  std::optional<double> foreign_pct = {};
  std::optional<double> steal_pct = {};
  std::optional<int64_t> p99_us = {};  // load samples: latency p99 of the second
};

// A side service over a window's measured interval (docs/services.md); window_services.
struct ServiceRow {
  std::string service;
  double cpu_user_s = 0, cpu_sys_s = 0;
  uint64_t rss_mean_kb = 0, rss_peak_kb = 0;
  std::string cpu_accounting;
  bool alive = true;
  std::string exit;
  bool started = false;  // started for this window
  std::optional<double> startup_ms, reset_ms;
};

// A probe's readings around a window's measured interval; window_probes. delta is nullopt when
// unavailable says why.
struct ProbeRow {
  std::string service;
  std::string probe;
  std::optional<double> before, after, delta;
  std::string unavailable;
};

// One window's CPU profile (docs/profiles.md): its folded stacks as CompressFolded made them, or
// why it has none (perf missing, refused by the kernel, an agent's profile that was refused).
struct ProfileRow {
  int64_t window_id = 0;  // set by the store
  int frequency_hz = 0;
  uint64_t samples = 0;
  std::string folded_z;  // empty when error is not
  std::string error;
};

struct WindowFilter {
  std::optional<std::string> campaign;  // by name
  int64_t after_id = 0;                 // rows with id > after_id
  int limit = 0;                        // 0: no limit
};

// One audited call (the audit table, docs/store.md).
struct AuditRow {
  int64_t id = 0;
  std::string at;        // ISO 8601 UTC, "2026-12-01T10:00:00.123Z"
  std::string identity;  // benchlab://ROLE/NAME from the caller's certificate; "plaintext"
  std::string role;      // the certificate's role; "" on a plaintext listener
  std::string peer;      // the caller's address as gRPC gives it ("ipv4:10.0.0.5:53412")
  std::string call;      // "SubmitCampaign", "RerunWindows", "CancelCampaign", "RegisterAgent", ...
  std::string subject;   // what the call was about: a campaign, windows, an agent
  std::string outcome;   // "ok", "refused" (its certificate may not) or "failed"
  std::string reason;    // the refusal's or failure's message; "" when ok
  int64_t count = 1;     // the identical refusals this row stands for (Store::AppendAudit)
};
// Each text field of an audit row is kept to this many bytes, cut between UTF-8 characters and
// marked "…[+N bytes]" (common/printable.h, Truncated).
inline constexpr size_t kMaxAuditFieldBytes = 256;
// A refusal identical to one stored from the same peer address within this long after that
// row's `at` is counted on that row rather than stored again.
inline constexpr std::chrono::seconds kAuditCoalesceWindow{60};
// How much of the audit trail the coordinator keeps (docs/security.md, "Audit"): rows younger
// than keep_days (--audit-keep-days) and, of those, the newest max_rows (--audit-max-rows).
inline constexpr int kDefaultAuditKeepDays = 90;
inline constexpr int64_t kDefaultAuditMaxRows = 100'000;
struct AuditRetention {
  int keep_days = kDefaultAuditKeepDays;
  int64_t max_rows = kDefaultAuditMaxRows;
};

// One dashboard token (the tokens table, docs/store.md): never the token itself, only its hash.
struct TokenRow {
  std::string name;
  std::string role;        // "viewer" or "operator"
  std::string hash;        // hex SHA-256 of the token (coordinator/dashboard_token.h)
  std::string created_at;  // ISO 8601 UTC
  std::string expires_at;  // ISO 8601 UTC; "" for never
  std::string revoked_at;  // ISO 8601 UTC; "" while valid
};

// One agent's self-test calibration at the start of a campaign (the selftest_calibrations table,
// docs/store.md; docs/gates.md, "selftest_drift"). A campaign keeps the latest of each agent: a
// resumed campaign calibrates again and replaces it.
struct SelftestCalibrationRow {
  int64_t campaign_id = 0;
  std::string agent;
  int runs = 0;                  // self-tests that ran at the start
  double median_ms = 0;          // their median
  std::optional<double> spread;  // fraction: their MAD from the median, x 1.4826; nullopt: too few
  double threshold_pct = 0;      // the |drift| above which the agent's windows fail, in %
  // Where threshold_pct comes from: "configured" (selftest_drift_max_pct), "calibrated"
  // (selftest_drift_spread_multiple x spread) or "capped" (that, held at the cap).
  std::string threshold_source = "configured";
  std::string calibrated_at;  // ISO 8601 UTC; the store sets it to now when empty
  auto operator<=>(const SelftestCalibrationRow&) const = default;
};

// The re-measurement of one suspected change (the confirmations table, docs/store.md;
// docs/history.md, "Confirmation by re-measurement"): which change (the series' line, the figure
// and the first campaign after the change), which builds were measured against each other (those
// of old_campaign_id and new_campaign_id), by which campaign, and what that showed: the interval
// of the ratios new / old over `rounds` rounds. Unique by series, line, figure and
// after_campaign_id: recording a change again replaces its row.
struct ConfirmationRow {
  int64_t id = 0;
  std::string series;
  std::string pair;
  std::string scenario;
  std::string load_level;
  std::string target;
  std::string figure;  // a MetricName: "rps", "cpu_us_per_request", ...
  int64_t after_campaign_id = 0;
  int64_t old_campaign_id = 0;
  int64_t new_campaign_id = 0;
  std::string campaign;  // the re-measurement campaign's name; "" when none could run
  // "measuring" | "confirmed" | "false alarm" | "undecided" | "unconfirmed" | "not measured"
  std::string status;
  std::optional<double> estimate, low, high;  // new / old; absent without two rounds
  int rounds = 0;
  std::string detail;       // one line: the decision's reason, or why nothing was measured
  std::string recorded_at;  // ISO 8601 UTC; "" means now
};

// A bisection of a confirmed regression (the bisections table, docs/store.md; docs/methodology.md,
// "Bisection"): the range (good and bad commits and how many commits from one to the other), what
// it bisects (target, cell, figure), the regression's size bad / good with its interval, and
// where the search is.
struct BisectionRow {
  int64_t id = 0;
  std::string created_at;  // ISO 8601 UTC; "" means now
  std::string good_oid;
  std::string bad_oid;
  std::string target;
  std::string cell;    // "scenario/c64"
  std::string figure;  // a MetricName: "cpu_us_per_request", "rps", ...
  int commits = 0;     // in the range, both ends included
  // "running" | "found" | "unsplittable" | "failed" | "cancelled"
  std::string state = "running";
  std::string result;   // one line: the search's result or why it stopped
  std::string culprit;  // the first bad commit's oid; "found" only
  std::optional<double> size, size_low, size_high;  // bad / good and its interval
  std::optional<double> confidence;                 // the whole search's bound so far
  // Since schema version 16: what a stopped search goes on from (`benchlab bisect --resume`).
  int64_t change_id = 0;        // the confirmations row it bisects; 0: named by hand
  std::string campaign_toml;    // the campaign file its looks are cut from, as read
  std::string campaign_source;  // that file's name, for messages
  std::string campaign_dir;     // what fills {campaign_dir} in it
  std::string rule = "{}";      // its BisectRule as JSON (cli/bisect_run.cc BisectRuleJson)
  // Since schema version 17: the campaign that measured a found culprit against its parent
  // (its profile diff, docs/profiles.md); "" when none did.
  std::string culprit_campaign;
  // Since schema version 18: a search the coordinator runs (docs/methodology.md, "On a
  // coordinator"): its pair "SERVER/LOAD" ("" on the embedded lab) and its range as the server
  // agent listed it, JSON [[oid, subject], ...] from the good end to the bad ("[]" on the
  // embedded lab, which lists it again from the source).
  std::string pair;
  std::string range_json = "[]";
};

// One decided commit of a bisection (the bisect_steps table), in the order decided.
struct BisectStepRow {
  int64_t bisection_id = 0;
  int step = 0;  // 1-based; AppendBisectStep numbers it
  std::string oid;
  std::string subject;
  std::string build = "built";                 // "built" | "failed"
  std::vector<int64_t> campaigns;              // the campaigns that measured it
  int rounds = 0;                              // rounds with all three figures
  std::string decision;                        // "good" | "bad" | "build failed" | "undecided"
  std::optional<double> estimate, low, high;   // candidate / midpoint of the ends, its interval
  std::vector<std::array<double, 3>> figures;  // per round: candidate, good end, bad end
  std::string recorded_at;                     // ISO 8601 UTC; "" means now
  // Since schema version 17: the commit's index in the range, the good end 0 and the bad end
  // commits - 1; -1 for a step stored before.
  int position = -1;
};

struct BisectionRecord {
  BisectionRow bisection;
  std::vector<BisectStepRow> steps;  // by step
};

class Store {
 public:
  // Opens or creates the database, sets WAL and applies pending migrations. A new database file
  // is created 0600 (its -wal and -shm files take the same mode), and missing directories on
  // its path 0700. The lab secret is made on the first open and read on every one. `clock`
  // (which must outlive the store) is the audit trail's: see clock().
  static Result<std::unique_ptr<Store>> Open(const std::string& path,
                                             Clock& clock = RealClockInstance());
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The database's PRAGMA user_version, or -1 when it cannot be read.
  int SchemaVersion();

  // kLabSecretBytes random bytes made when the database was created and kept in its settings
  // table: the key window tokens are derived from (coordinator/window_token.h), the same after a
  // restart. Never log it or serve it.
  static constexpr size_t kLabSecretBytes = 32;
  const std::string& lab_secret() const { return lab_secret_; }

  // The wall time of the audit trail: its writers stamp a row's `at` with it, AppendAudit prunes
  // at it when a row's `at` cannot be read, and AuditText (coordinator/server/audit_format.h)
  // counts "24h" back from it. The store's other timestamps are SQLite's own 'now'.
  Clock& clock() const { return clock_; }

  // Inserts the campaign with its targets and scenarios in one transaction; AlreadyExists when
  // the name is taken. An empty state means "queued", an empty created_at means now.
  Result<int64_t> CreateCampaign(const CampaignRow& campaign, const std::vector<TargetRow>& targets,
                                 const std::vector<ScenarioRow>& scenarios);
  // Sets finished_at to now for done/failed/cancelled and clears it otherwise; NotFound when
  // no campaign has the id.
  Status SetCampaignState(int64_t campaign_id, CampaignState state, const std::string& error = "");
  Result<std::vector<CampaignRow>> ListCampaigns();
  Result<std::optional<CampaignRow>> FindCampaign(const std::string& name);
  Result<std::optional<CampaignRow>> FindCampaignById(int64_t id);
  // The campaigns of a series (docs/history.md), oldest first (by id).
  Result<std::vector<CampaignRow>> ListSeries(const std::string& series);
  // Inserts a change's re-measurement, or replaces the row of the same change; returns its id.
  // InvalidArgument for a status outside the table's list.
  Result<int64_t> RecordConfirmation(const ConfirmationRow& row);
  // The re-measurements of a series' changes, by id.
  Result<std::vector<ConfirmationRow>> ListConfirmations(const std::string& series);
  // The rows a re-measurement campaign (by name) was run for, by id.
  Result<std::vector<ConfirmationRow>> ListConfirmationsBy(const std::string& campaign);
  // The re-measurement recorded with `id`; nullopt when none has it.
  Result<std::optional<ConfirmationRow>> LoadConfirmation(int64_t id);
  // Bisections (docs/methodology.md, "Bisection"). CreateBisection stores a new search and returns
  // its id (InvalidArgument for a value its CHECKs refuse). AppendBisectStep adds the next step
  // in one transaction and returns its number: NotFound without the bisection,
  // FailedPrecondition when it is no longer running, AlreadyExists when the commit has a step.
  // UpdateBisection sets state, result, culprit, size, confidence and culprit_campaign of row.id
  // (NotFound when none). LoadBisection: the search with its steps, nullopt when none has the id.
  Result<int64_t> CreateBisection(const BisectionRow& row);
  Result<int> AppendBisectStep(const BisectStepRow& step);
  Status UpdateBisection(const BisectionRow& row);
  Result<std::optional<BisectionRecord>> LoadBisection(int64_t id);
  // Every bisection, by id (without steps).
  Result<std::vector<BisectionRow>> ListBisections();
  // A campaign's targets and scenarios in the order CreateCampaign was given them.
  Result<std::vector<TargetRow>> ListTargets(int64_t campaign_id);
  Result<std::vector<ScenarioRow>> ListScenarios(int64_t campaign_id);

  // The window and its samples in one transaction; returns the window's id. The campaign is
  // window.campaign_id or, when that is 0, the campaign named window.campaign; the stored name
  // always comes from the campaigns table. AlreadyExists when the cell's round already has this
  // attempt; InvalidArgument when a value breaks a CHECK (verdict, sample source, JSON shape).
  // The same transaction removes the window's claim and any re-run request for it, so a result
  // is either stored with its bookkeeping done or not stored at all.
  Result<int64_t> InsertWindow(const WindowRow& window, const std::vector<SampleRow>& samples,
                               const std::vector<ServiceRow>& services = {},
                               const std::vector<ProbeRow>& probes = {},
                               const std::optional<ProfileRow>& profile = std::nullopt);
  // The profile rows of a campaign's windows (every attempt's that has one), by window id.
  Result<std::vector<ProfileRow>> ListProfiles(int64_t campaign_id);
  // The profile row of one window; nullopt when the window was not profiled (docs/store.md).
  Result<std::optional<ProfileRow>> FindProfile(int64_t window_id);
  // The side services' and probes' rows of one window (docs/services.md).
  Result<std::vector<ServiceRow>> ListWindowServices(int64_t window_id);
  Result<std::vector<ProbeRow>> ListWindowProbes(int64_t window_id);
  // The CPU seconds (user + system) of each attempt's side services together, by window id, for
  // every attempt of the campaign that ran with any; an attempt without services has no entry
  // (never 0). One query for the whole campaign, so a report reads it once, not per window.
  Result<std::map<int64_t, double>> SumServiceCpuByWindow(int64_t campaign_id);
  // Marks a window as running (replacing an earlier claim on the same key).
  Status ClaimWindow(const WindowClaim& claim);
  // The windows a campaign is measuring now (one per pair), oldest claim first.
  Result<std::vector<WindowClaim>> ListClaims(int64_t campaign_id);
  // Turns every claim left by a coordinator that stopped mid-window into a failed attempt with
  // `reason` (a reason of kind coordinator_restart), in one transaction; returns how many there
  // were.
  Result<int> FailClaimedWindows(const std::string& reason);
  // Asks for the windows with these ids to be measured again (a new attempt each): records a
  // re-run request per window and puts a campaign that is not running back in the queue.
  // NotFound names the first id that does not exist. Returns the affected campaigns' names.
  Result<std::vector<std::string>> RequestReruns(const std::vector<int64_t>& window_ids);
  // Re-runs asked for and not yet stored, in request order.
  Result<std::vector<WindowKey>> ListRerunRequests(int64_t campaign_id);
  // Records where the campaign runs and, when total_windows > 0, how many windows that makes.
  Status SetCampaignPlacement(int64_t campaign_id, const std::string& placement_json,
                              int total_windows = 0);

  // Ordered by id; a campaign name that does not exist yields no rows.
  Result<std::vector<WindowRow>> ListWindows(const WindowFilter& filter);
  Result<std::vector<SampleRow>> ListSamples(int64_t window_id);

  // A result an agent offered from its spool that matched no stored window; kept so that nothing
  // an agent measured is lost, idempotently by agent, key and the SHA-256 of its bytes: the same
  // result offered again is one row, a different one under the same key is a row of its own.
  // ResourceExhausted, keeping nothing, when the kept results of every agent would hold more
  // than `max_total_bytes` of payload together (a result kept already is always accepted again).
  Status KeepAgentResult(const std::string& agent, const std::string& key,
                         const std::string& payload, uint64_t max_total_bytes);
  Result<int> CountAgentResults();

  // The audit trail (docs/security.md, "Audit"), bounded so that a flood of refused calls
  // cannot fill the disk. AppendAudit stores one call with each text field cut to
  // kMaxAuditFieldBytes; a refusal with the identity, role, call and reason of a refusal stored
  // from the same peer address (whatever its port) at most kAuditCoalesceWindow before
  // `row.at` adds one to that row's count instead of storing a row. Once SetAuditRetention was
  // called, AppendAudit prunes (PruneAudit, at `row.at`, or at clock() when that is not a time)
  // every max_rows / 100 rows it adds and at least an hour after the last pruning; without it,
  // it never prunes (a command run on the coordinator's machine leaves that to the coordinator).
  // PruneAudit: deletes the rows older than keep_days before `now`, then all but the newest
  // max_rows; returns how many it deleted.
  // ListAudit: the calls at or after `since` (ISO 8601 UTC; "" for all), oldest first, at most
  // `limit` (0: all).
  Status AppendAudit(const AuditRow& row);
  void SetAuditRetention(const AuditRetention& retention);
  Result<int64_t> PruneAudit(const AuditRetention& retention,
                             std::chrono::system_clock::time_point now);
  Result<std::vector<AuditRow>> ListAudit(const std::string& since, int64_t limit = 0);

  // The dashboard's tokens (coordinator/dashboard_token.h). AddToken: AlreadyExists when a
  // token of that name exists, revoked or not. FindToken: by hash, NotFound when none.
  // ListTokens: by name. RevokeToken: NotFound for an unknown name, FailedPrecondition when it
  // was revoked already.
  Status AddToken(const TokenRow& row);
  Result<TokenRow> FindToken(const std::string& hash);
  Result<std::vector<TokenRow>> ListTokens();
  Status RevokeToken(const std::string& name, const std::string& at);
  // Stores an agent's calibration, replacing the one the campaign held for that agent.
  // InvalidArgument when threshold_source is not one of its three words; NotFound when no
  // campaign has the id.
  Status PutSelftestCalibration(const SelftestCalibrationRow& row);
  // The campaign's calibrations, one per agent, by agent name.
  Result<std::vector<SelftestCalibrationRow>> ListSelftestCalibrations(int64_t campaign_id);
  // How many window attempts a campaign has stored and the newest one's id (0 when none): what
  // changes whenever one is stored, read without reading any of them.
  Result<std::pair<int64_t, int64_t>> CountWindows(int64_t campaign_id);

 private:
  Store(sqlite3* db, std::string path, Clock& clock);
  // The confirmations rows whose `column` ("series" or "campaign", never input) is `value`.
  Result<std::vector<ConfirmationRow>> ListConfirmationsWhere(const char* column,
                                                              const std::string& value);
  // Reads the lab secret, making it first when the database has none.
  Status LoadLabSecret();
  // PruneAudit with mu_ held.
  Result<int64_t> PruneAuditLocked(const AuditRetention& retention,
                                   std::chrono::system_clock::time_point now);
  sqlite3* const db_;
  const std::string path_;  // names the database in every error message
  Clock& clock_;
  std::string lab_secret_;
  std::optional<AuditRetention> audit_retention_;  // guarded by mu_
  double audit_pruned_at_ = -1;  // seconds since the epoch of the last pruning; guarded by mu_
  std::mutex mu_;
};

}  // namespace benchlab
