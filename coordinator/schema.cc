// benchlab's schema, migration by migration. docs/store.md documents every column; change both
// together. Released migrations are never edited: a new column or table is a new migration.
#include "coordinator/schema.h"

#include <sqlite3.h>

#include <array>

namespace benchlab::schema {
namespace {

// Version 1: campaigns with their targets and scenarios, windows (one row per attempt) and the
// per-interval samples of each window. Text columns that hold JSON are checked to be JSON of the
// right shape so users' json_each() queries never meet a malformed row.
constexpr const char* kV1 = R"sql(
CREATE TABLE campaigns (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL UNIQUE,
  state         TEXT NOT NULL
                CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  baseline      TEXT,
  spec_toml     TEXT NOT NULL,
  source        TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  finished_at   TEXT,
  total_windows INTEGER NOT NULL DEFAULT 0,
  error         TEXT
);

CREATE TABLE targets (
  id           INTEGER PRIMARY KEY,
  campaign_id  INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  command_json TEXT NOT NULL CHECK (json_valid(command_json)),
  cpus         TEXT NOT NULL,
  UNIQUE (campaign_id, name)
);

CREATE TABLE scenarios (
  id            INTEGER PRIMARY KEY,
  campaign_id   INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  kind          TEXT NOT NULL CHECK (kind IN ('scenario', 'negative')),
  method        TEXT NOT NULL,
  path          TEXT NOT NULL,
  expect_status INTEGER NOT NULL,
  expect_body   TEXT,
  UNIQUE (campaign_id, name)
);

CREATE TABLE windows (
  id                 INTEGER PRIMARY KEY,
  campaign_id        INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  campaign           TEXT NOT NULL,
  target             TEXT NOT NULL,
  scenario           TEXT NOT NULL,
  connections        INTEGER NOT NULL,
  round              INTEGER NOT NULL,
  position           INTEGER NOT NULL,
  attempt            INTEGER NOT NULL CHECK (attempt >= 1),
  verdict            TEXT NOT NULL CHECK (verdict IN ('valid', 'invalid', 'failed', 'skipped')),
  reasons            TEXT NOT NULL DEFAULT '[]' CHECK (
                       CASE WHEN json_valid(reasons) THEN json_type(reasons) = 'array' ELSE 0 END),
  started_at         TEXT NOT NULL,
  ended_at           TEXT NOT NULL,
  server_agent       TEXT NOT NULL,
  load_agent         TEXT NOT NULL,
  requests           INTEGER NOT NULL,
  duration_s         REAL NOT NULL,
  rps                REAL NOT NULL,
  p50_us             INTEGER NOT NULL,
  p90_us             INTEGER NOT NULL,
  p99_us             INTEGER NOT NULL,
  p999_us            INTEGER NOT NULL,
  max_us             INTEGER NOT NULL,
  mean_us            REAL NOT NULL,
  errors             INTEGER NOT NULL,
  errors_connect     INTEGER NOT NULL,
  errors_read        INTEGER NOT NULL,
  errors_write       INTEGER NOT NULL,
  errors_timeout     INTEGER NOT NULL,
  errors_parse       INTEGER NOT NULL,
  errors_status      INTEGER NOT NULL,
  status_counts      TEXT NOT NULL DEFAULT '{}' CHECK (
                       CASE WHEN json_valid(status_counts)
                       THEN json_type(status_counts) = 'object' ELSE 0 END),
  server_cpu_s       REAL NOT NULL,
  cpu_us_per_request REAL NOT NULL,
  rss_peak_kb        INTEGER NOT NULL,
  rss_mean_kb        INTEGER NOT NULL,
  startup_ms         REAL NOT NULL,
  first_request_ms   REAL NOT NULL,
  idle_rss_kb        INTEGER NOT NULL,
  load_cpu_s         REAL NOT NULL,
  align_error_ms     REAL NOT NULL,
  histogram          TEXT NOT NULL,
  UNIQUE (campaign_id, target, scenario, connections, round, attempt)
);
CREATE INDEX windows_by_campaign ON windows (campaign_id, id);

CREATE TABLE samples (
  window_id INTEGER NOT NULL REFERENCES windows (id) ON DELETE CASCADE,
  source    TEXT NOT NULL CHECK (source IN ('server', 'load')),
  t_s       REAL NOT NULL,
  cpu_pct   REAL NOT NULL,
  rss_kb    INTEGER NOT NULL,
  requests  INTEGER NOT NULL
);
CREATE INDEX samples_by_window ON samples (window_id);
)sql";

// Version 2: what the agents see of their machines over each window (foreign CPU, steal, thermal,
// frequency, swap), the checks before it (self-test, power, background scheduling), the target's
// version and threads, host facts; the host series in samples; and results agents offered again
// from their spools. A NULL reading means the machine does not offer it.
constexpr const char* kV2 = R"sql(
ALTER TABLE windows ADD COLUMN target_version TEXT NOT NULL DEFAULT '';
ALTER TABLE windows ADD COLUMN cpu_accounting TEXT NOT NULL DEFAULT '';
ALTER TABLE windows ADD COLUMN threads INTEGER NOT NULL DEFAULT 0;
ALTER TABLE windows ADD COLUMN ctx_switches_voluntary INTEGER NOT NULL DEFAULT 0;
ALTER TABLE windows ADD COLUMN ctx_switches_involuntary INTEGER NOT NULL DEFAULT 0;
ALTER TABLE windows ADD COLUMN selftest_server_ms REAL;
ALTER TABLE windows ADD COLUMN selftest_load_ms REAL;
ALTER TABLE windows ADD COLUMN selftest_drift REAL;
ALTER TABLE windows ADD COLUMN server_busy_pct REAL;
ALTER TABLE windows ADD COLUMN server_steal_pct REAL;
ALTER TABLE windows ADD COLUMN server_foreign_cpu_pct REAL;
ALTER TABLE windows ADD COLUMN server_foreign_cpu_max_pct REAL;
ALTER TABLE windows ADD COLUMN server_top_foreign TEXT NOT NULL DEFAULT '[]'
  CHECK (CASE WHEN json_valid(server_top_foreign)
         THEN json_type(server_top_foreign) = 'array' ELSE 0 END);
ALTER TABLE windows ADD COLUMN load_busy_pct REAL;
ALTER TABLE windows ADD COLUMN load_steal_pct REAL;
ALTER TABLE windows ADD COLUMN load_foreign_cpu_pct REAL;
ALTER TABLE windows ADD COLUMN load_foreign_cpu_max_pct REAL;
ALTER TABLE windows ADD COLUMN load_top_foreign TEXT NOT NULL DEFAULT '[]'
  CHECK (CASE WHEN json_valid(load_top_foreign)
         THEN json_type(load_top_foreign) = 'array' ELSE 0 END);
ALTER TABLE windows ADD COLUMN max_temp_c REAL;
ALTER TABLE windows ADD COLUMN throttle_events INTEGER;
ALTER TABLE windows ADD COLUMN min_freq_ratio REAL;
ALTER TABLE windows ADD COLUMN swap_in_pages INTEGER;
ALTER TABLE windows ADD COLUMN swap_out_pages INTEGER;
ALTER TABLE windows ADD COLUMN server_host TEXT NOT NULL DEFAULT '{}'
  CHECK (CASE WHEN json_valid(server_host) THEN json_type(server_host) = 'object' ELSE 0 END);
ALTER TABLE windows ADD COLUMN load_host TEXT NOT NULL DEFAULT '{}'
  CHECK (CASE WHEN json_valid(load_host) THEN json_type(load_host) = 'object' ELSE 0 END);

ALTER TABLE samples ADD COLUMN host_busy_pct REAL;
ALTER TABLE samples ADD COLUMN foreign_pct REAL;
ALTER TABLE samples ADD COLUMN steal_pct REAL;

CREATE TABLE agent_results (
  key         TEXT NOT NULL,
  agent       TEXT NOT NULL,
  payload     BLOB NOT NULL,
  received_at TEXT NOT NULL,
  PRIMARY KEY (agent, key)
);
)sql";

// Version 3: the load generator's full record per window (docs/load.md) and the figures read
// most: depth and open-loop rate, requests sent and dropped, response mismatches, whether the
// generator limited the run, the uncorrected latency of open loop; per-second p99 in samples.
// NULL: not applicable (closed loop has no rate, no dropped slots, no uncorrected latency).
// A window is now named by its load level ("c64", "r5000") and, for noise windows, its position,
// so the windows table is rebuilt with that key (SQLite cannot change a UNIQUE constraint in
// place; foreign keys are off while migrations run, so samples keep their rows). Also the
// scheduler's state: the window each campaign is running (a claim, turned into a failed attempt
// after a coordinator crash), re-runs asked for, and where a campaign was placed.
constexpr const char* kV3 = R"sql(
CREATE TABLE windows_v3 (
  id                 INTEGER PRIMARY KEY,
  campaign_id        INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  campaign           TEXT NOT NULL,
  target             TEXT NOT NULL,
  scenario           TEXT NOT NULL,
  connections        INTEGER NOT NULL,
  round              INTEGER NOT NULL,
  position           INTEGER NOT NULL,
  attempt            INTEGER NOT NULL CHECK (attempt >= 1),
  verdict            TEXT NOT NULL CHECK (verdict IN ('valid', 'invalid', 'failed', 'skipped')),
  reasons            TEXT NOT NULL DEFAULT '[]' CHECK (
                       CASE WHEN json_valid(reasons) THEN json_type(reasons) = 'array' ELSE 0 END),
  started_at         TEXT NOT NULL,
  ended_at           TEXT NOT NULL,
  server_agent       TEXT NOT NULL,
  load_agent         TEXT NOT NULL,
  requests           INTEGER NOT NULL,
  duration_s         REAL NOT NULL,
  rps                REAL NOT NULL,
  p50_us             INTEGER NOT NULL,
  p90_us             INTEGER NOT NULL,
  p99_us             INTEGER NOT NULL,
  p999_us            INTEGER NOT NULL,
  max_us             INTEGER NOT NULL,
  mean_us            REAL NOT NULL,
  errors             INTEGER NOT NULL,
  errors_connect     INTEGER NOT NULL,
  errors_read        INTEGER NOT NULL,
  errors_write       INTEGER NOT NULL,
  errors_timeout     INTEGER NOT NULL,
  errors_parse       INTEGER NOT NULL,
  errors_status      INTEGER NOT NULL,
  status_counts      TEXT NOT NULL DEFAULT '{}' CHECK (
                       CASE WHEN json_valid(status_counts)
                       THEN json_type(status_counts) = 'object' ELSE 0 END),
  server_cpu_s       REAL NOT NULL,
  cpu_us_per_request REAL NOT NULL,
  rss_peak_kb        INTEGER NOT NULL,
  rss_mean_kb        INTEGER NOT NULL,
  startup_ms         REAL NOT NULL,
  first_request_ms   REAL NOT NULL,
  idle_rss_kb        INTEGER NOT NULL,
  load_cpu_s         REAL NOT NULL,
  align_error_ms     REAL NOT NULL,
  histogram          TEXT NOT NULL,
  target_version TEXT NOT NULL DEFAULT '',
  cpu_accounting TEXT NOT NULL DEFAULT '',
  threads INTEGER NOT NULL DEFAULT 0,
  ctx_switches_voluntary INTEGER NOT NULL DEFAULT 0,
  ctx_switches_involuntary INTEGER NOT NULL DEFAULT 0,
  selftest_server_ms REAL,
  selftest_load_ms REAL,
  selftest_drift REAL,
  server_busy_pct REAL,
  server_steal_pct REAL,
  server_foreign_cpu_pct REAL,
  server_foreign_cpu_max_pct REAL,
  server_top_foreign TEXT NOT NULL DEFAULT '[]' CHECK (CASE WHEN json_valid(server_top_foreign)
    THEN json_type(server_top_foreign) = 'array' ELSE 0 END),
  load_busy_pct REAL,
  load_steal_pct REAL,
  load_foreign_cpu_pct REAL,
  load_foreign_cpu_max_pct REAL,
  load_top_foreign TEXT NOT NULL DEFAULT '[]' CHECK (CASE WHEN json_valid(load_top_foreign) THEN
    json_type(load_top_foreign) = 'array' ELSE 0 END),
  max_temp_c REAL,
  throttle_events INTEGER,
  min_freq_ratio REAL,
  swap_in_pages INTEGER,
  swap_out_pages INTEGER,
  server_host TEXT NOT NULL DEFAULT '{}' CHECK (CASE WHEN json_valid(server_host) THEN
    json_type(server_host) = 'object' ELSE 0 END),
  load_host TEXT NOT NULL DEFAULT '{}' CHECK (CASE WHEN json_valid(load_host) THEN
    json_type(load_host) = 'object' ELSE 0 END),
  load_depth INTEGER NOT NULL DEFAULT 1,
  load_rate REAL,
  sent INTEGER,
  dropped INTEGER,
  errors_mismatch INTEGER NOT NULL DEFAULT 0,
  generator_bound INTEGER NOT NULL DEFAULT 0 CHECK (generator_bound IN (0, 1)),
  throughput_rps REAL,
  p99_uncorrected_us INTEGER,
  histogram_uncorrected TEXT NOT NULL DEFAULT '',
  load_record TEXT NOT NULL DEFAULT '{}' CHECK (CASE WHEN json_valid(load_record) THEN
    json_type(load_record) = 'object' ELSE 0 END),
  load_level         TEXT NOT NULL DEFAULT '',
  noise              INTEGER NOT NULL DEFAULT 0 CHECK (noise IN (0, 1)),
  pair               TEXT NOT NULL DEFAULT '',
  UNIQUE (campaign_id, pair, target, scenario, load_level, round, position, attempt)
);
INSERT INTO windows_v3 (id, campaign_id, campaign, target, scenario, connections, round, position,
    attempt, verdict, reasons, started_at, ended_at, server_agent, load_agent, requests,
    duration_s, rps, p50_us, p90_us, p99_us, p999_us, max_us, mean_us, errors, errors_connect,
    errors_read, errors_write, errors_timeout, errors_parse, errors_status, status_counts,
    server_cpu_s, cpu_us_per_request, rss_peak_kb, rss_mean_kb, startup_ms, first_request_ms,
    idle_rss_kb, load_cpu_s, align_error_ms, histogram, target_version, cpu_accounting, threads,
    ctx_switches_voluntary, ctx_switches_involuntary, selftest_server_ms, selftest_load_ms,
    selftest_drift, server_busy_pct, server_steal_pct, server_foreign_cpu_pct,
    server_foreign_cpu_max_pct, server_top_foreign, load_busy_pct, load_steal_pct,
    load_foreign_cpu_pct, load_foreign_cpu_max_pct, load_top_foreign, max_temp_c, throttle_events,
    min_freq_ratio, swap_in_pages, swap_out_pages, server_host, load_host, load_level)
  SELECT id, campaign_id, campaign, target, scenario, connections, round, position, attempt,
    verdict, reasons, started_at, ended_at, server_agent, load_agent, requests, duration_s, rps,
    p50_us, p90_us, p99_us, p999_us, max_us, mean_us, errors, errors_connect, errors_read,
    errors_write, errors_timeout, errors_parse, errors_status, status_counts, server_cpu_s,
    cpu_us_per_request, rss_peak_kb, rss_mean_kb, startup_ms, first_request_ms, idle_rss_kb,
    load_cpu_s, align_error_ms, histogram, target_version, cpu_accounting, threads,
    ctx_switches_voluntary, ctx_switches_involuntary, selftest_server_ms, selftest_load_ms,
    selftest_drift, server_busy_pct, server_steal_pct, server_foreign_cpu_pct,
    server_foreign_cpu_max_pct, server_top_foreign, load_busy_pct, load_steal_pct,
    load_foreign_cpu_pct, load_foreign_cpu_max_pct, load_top_foreign, max_temp_c, throttle_events,
    min_freq_ratio, swap_in_pages, swap_out_pages, server_host, load_host, 'c' || connections FROM
    windows;
DROP TABLE windows;
ALTER TABLE windows_v3 RENAME TO windows;
CREATE INDEX windows_by_campaign ON windows (campaign_id, id);

ALTER TABLE samples ADD COLUMN p99_us INTEGER;

CREATE TABLE window_claims (
  campaign_id  INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  pair         TEXT NOT NULL,
  target       TEXT NOT NULL,
  scenario     TEXT NOT NULL,
  load_level   TEXT NOT NULL,
  round        INTEGER NOT NULL,
  position     INTEGER NOT NULL,
  noise        INTEGER NOT NULL CHECK (noise IN (0, 1)),
  connections  INTEGER NOT NULL,
  attempt      INTEGER NOT NULL CHECK (attempt >= 1),
  server_agent TEXT NOT NULL,
  load_agent   TEXT NOT NULL,
  started_at   TEXT NOT NULL,
  PRIMARY KEY (campaign_id, pair, target, scenario, load_level, round, position)
);

CREATE TABLE rerun_requests (
  campaign_id  INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  pair         TEXT NOT NULL,
  target       TEXT NOT NULL,
  scenario     TEXT NOT NULL,
  load_level   TEXT NOT NULL,
  round        INTEGER NOT NULL,
  position     INTEGER NOT NULL,
  requested_at TEXT NOT NULL,
  PRIMARY KEY (campaign_id, pair, target, scenario, load_level, round, position)
);

-- A result an agent offers again is kept once per content: the same bytes offered twice are one
-- row, a different result under the same key is a row of its own, never an overwrite.
CREATE TABLE agent_results_v3 (
  key          TEXT NOT NULL,
  agent        TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  payload      BLOB NOT NULL,
  received_at  TEXT NOT NULL,
  PRIMARY KEY (agent, key, content_hash)
);
INSERT INTO agent_results_v3 (key, agent, content_hash, payload, received_at)
  SELECT key, agent, '', payload, received_at FROM agent_results;
DROP TABLE agent_results;
ALTER TABLE agent_results_v3 RENAME TO agent_results;

ALTER TABLE campaigns ADD COLUMN gates_mode TEXT NOT NULL DEFAULT ''
  CHECK (gates_mode IN ('', 'warn', 'enforce'));
ALTER TABLE campaigns ADD COLUMN placement TEXT NOT NULL DEFAULT '{}'
  CHECK (CASE WHEN json_valid(placement) THEN json_type(placement) = 'object' ELSE 0 END);
)sql";

// Version 4: responses cut off at the load agent's body limit, an error class of their own, and
// the lab's settings: one row per name, among them the secret the coordinator derives window
// tokens from (docs/store.md; never served or logged).
constexpr const char* kV4 = R"sql(
ALTER TABLE windows ADD COLUMN errors_body_too_large INTEGER NOT NULL DEFAULT 0;

CREATE TABLE settings (
  name  TEXT PRIMARY KEY,
  value BLOB NOT NULL
);
)sql";

// Version 5: each window's reasons for machines (coordinator/outcome.h): one object per text of
// `reasons`, in the same order. Windows stored before have theirs made from their texts, by the
// name before the first ':' (the gates' names are fixed; "conformance: agent ..." was the
// conformance call failing, not the gate).
constexpr const char* kV5 = R"sql(
ALTER TABLE windows ADD COLUMN outcome TEXT NOT NULL DEFAULT '[]'
  CHECK (CASE WHEN json_valid(outcome) THEN json_type(outcome) = 'array' ELSE 0 END);

UPDATE windows SET outcome = (
  SELECT json_group_array(json_object(
    'kind', CASE
      WHEN r.value LIKE 'agent_lost:%' THEN 'agent_lost'
      WHEN r.value LIKE 'coordinator_restart:%' THEN 'coordinator_restart'
      WHEN r.value LIKE 'conformance: agent %' THEN 'step'
      WHEN substr(r.value, 1, instr(r.value, ':') - 1) IN ('conformance', 'target_exited',
        'background_scheduling', 'on_battery', 'selftest_drift', 'foreign_cpu', 'steal',
        'throttling', 'frequency', 'swap', 'generator_bound', 'error_rate') THEN 'gate'
      ELSE 'step' END,
    'name', substr(r.value, 1, instr(r.value, ':') - 1)))
  FROM (SELECT value FROM json_each(windows.reasons) ORDER BY key) AS r)
WHERE json_valid(reasons) AND json_array_length(reasons) > 0;
)sql";

// Version 6: the audit trail (docs/security.md, "Audit"): every call that changes something and
// every call refused for its certificate, with who made it, from where, and what became of it.
constexpr const char* kV6 = R"sql(
CREATE TABLE audit (
  id       INTEGER PRIMARY KEY,
  at       TEXT NOT NULL,
  identity TEXT NOT NULL,
  role     TEXT NOT NULL,
  peer     TEXT NOT NULL,
  call     TEXT NOT NULL,
  subject  TEXT NOT NULL,
  outcome  TEXT NOT NULL CHECK (outcome IN ('ok', 'refused', 'failed')),
  reason   TEXT NOT NULL
);
CREATE INDEX audit_at ON audit (at);
)sql";

// Version 7: the dashboard's tokens (docs/security.md, "The dashboard"): only each token's
// SHA-256 is kept, never the token; a revoked token keeps its row, so its name is not reused.
constexpr const char* kV7 = R"sql(
CREATE TABLE tokens (
  name       TEXT PRIMARY KEY,
  role       TEXT NOT NULL CHECK (role IN ('viewer', 'operator')),
  hash       TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  revoked_at TEXT NOT NULL
);
)sql";

// Version 8: each agent's self-test calibration at a campaign's start (docs/gates.md,
// "selftest_drift"): the latest one per campaign and agent, with the threshold it set.
constexpr const char* kV8 = R"sql(
CREATE TABLE selftest_calibrations (
  campaign_id      INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  agent            TEXT NOT NULL,
  runs             INTEGER NOT NULL CHECK (runs >= 0),
  median_ms        REAL NOT NULL,
  spread           REAL,
  threshold_pct    REAL NOT NULL,
  threshold_source TEXT NOT NULL CHECK (threshold_source IN ('configured', 'calibrated', 'capped')),
  calibrated_at    TEXT NOT NULL,
  PRIMARY KEY (campaign_id, agent)
);
)sql";

// Version 9: side services (docs/services.md): each service's CPU and memory over a window's
// measured interval, apart from the target's, and each probe's readings around it. A delta is
// NULL when it could not be known (a missing reading, a counter that fell): never 0.
constexpr const char* kV9 = R"sql(
CREATE TABLE window_services (
  window_id      INTEGER NOT NULL REFERENCES windows (id) ON DELETE CASCADE,
  service        TEXT NOT NULL,
  cpu_user_s     REAL NOT NULL CHECK (cpu_user_s >= 0),
  cpu_sys_s      REAL NOT NULL CHECK (cpu_sys_s >= 0),
  rss_mean_kb    INTEGER NOT NULL,
  rss_peak_kb    INTEGER NOT NULL,
  cpu_accounting TEXT NOT NULL,
  alive          INTEGER NOT NULL CHECK (alive IN (0, 1)),
  exit           TEXT NOT NULL DEFAULT '',
  started        INTEGER NOT NULL CHECK (started IN (0, 1)),
  startup_ms     REAL,
  reset_ms       REAL,
  PRIMARY KEY (window_id, service)
);
CREATE TABLE window_probes (
  window_id   INTEGER NOT NULL REFERENCES windows (id) ON DELETE CASCADE,
  service     TEXT NOT NULL,
  probe       TEXT NOT NULL,
  before      REAL,
  after       REAL,
  delta       REAL,
  unavailable TEXT NOT NULL DEFAULT '',
  CHECK ((delta IS NULL) = (unavailable != '')),
  PRIMARY KEY (window_id, service, probe)
);
)sql";

// A campaign's series (docs/history.md): the campaigns that measure the same thing over time.
// '' for a campaign stored before, which is a series of its own name.
constexpr const char* kV10 = R"sql(
ALTER TABLE campaigns ADD COLUMN series TEXT NOT NULL DEFAULT '';
UPDATE campaigns SET series = name WHERE series = '';
CREATE INDEX campaigns_by_series ON campaigns (series, id);
)sql";

// Re-measurements of suspected changes (docs/history.md, "Confirmation by re-measurement"): one
// row per change point (a series' line, figure and first campaign after the change), with the
// campaign that measured the old build against the new one and what that showed.
constexpr const char* kV11 = R"sql(
CREATE TABLE confirmations (
  id                 INTEGER PRIMARY KEY,
  series             TEXT NOT NULL,
  pair               TEXT NOT NULL,
  scenario           TEXT NOT NULL,
  load_level         TEXT NOT NULL,
  target             TEXT NOT NULL,
  figure             TEXT NOT NULL,
  after_campaign_id  INTEGER NOT NULL,
  old_campaign_id    INTEGER NOT NULL,
  new_campaign_id    INTEGER NOT NULL,
  campaign           TEXT NOT NULL DEFAULT '',
  status             TEXT NOT NULL CHECK (status IN ('measuring', 'confirmed', 'false alarm',
                                                     'undecided', 'unconfirmed', 'not measured')),
  estimate           REAL,
  low                REAL,
  high               REAL,
  rounds             INTEGER NOT NULL DEFAULT 0,
  detail             TEXT NOT NULL DEFAULT '',
  recorded_at        TEXT NOT NULL,
  UNIQUE (series, pair, scenario, load_level, target, figure, after_campaign_id)
);
)sql";

// Version 12: a bounded audit trail (docs/security.md, "Audit"): identical refusals from one peer
// address within a minute are one row with their count; rows stored before count once.
constexpr const char* kV12 = R"sql(
ALTER TABLE audit ADD COLUMN count INTEGER NOT NULL DEFAULT 1 CHECK (count >= 1);
)sql";

// Version 13: CPU profiles (docs/profiles.md): `--profile` on a campaign, and each profiled
// window's folded stacks (zlib, at most kMaxProfileBytes) or why it has none. A window without a
// row was not profiled.
constexpr const char* kV13 = R"sql(
ALTER TABLE campaigns ADD COLUMN profile INTEGER NOT NULL DEFAULT 0 CHECK (profile IN (0, 1));
CREATE TABLE window_profiles (
  window_id    INTEGER PRIMARY KEY REFERENCES windows (id) ON DELETE CASCADE,
  frequency_hz INTEGER NOT NULL CHECK (frequency_hz > 0),
  samples      INTEGER NOT NULL CHECK (samples >= 0),
  folded_z     BLOB,
  error        TEXT NOT NULL DEFAULT '',
  CHECK ((folded_z IS NULL) = (error != ''))
);
)sql";

// Version 14: bisections of confirmed regressions (docs/methodology.md, "Bisection"): one row
// per search, and one per commit it decided, in order, so that a coordinator that restarts
// replays the steps and goes on (analysis/bisect.h, ReplayBisect).
constexpr const char* kV14 = R"sql(
CREATE TABLE bisections (
  id          INTEGER PRIMARY KEY,
  created_at  TEXT NOT NULL,
  good_oid    TEXT NOT NULL CHECK (good_oid != ''),
  bad_oid     TEXT NOT NULL CHECK (bad_oid != ''),
  target      TEXT NOT NULL,
  cell        TEXT NOT NULL,
  figure      TEXT NOT NULL,
  commits     INTEGER NOT NULL CHECK (commits >= 2),
  state       TEXT NOT NULL CHECK (state IN ('running', 'found', 'unsplittable', 'failed',
                                             'cancelled')),
  result      TEXT NOT NULL DEFAULT '',
  culprit     TEXT NOT NULL DEFAULT '',
  size        REAL,
  size_low    REAL,
  size_high   REAL,
  confidence  REAL,
  CHECK ((culprit != '') = (state = 'found'))
);
CREATE TABLE bisect_steps (
  bisection_id INTEGER NOT NULL REFERENCES bisections (id) ON DELETE CASCADE,
  step         INTEGER NOT NULL CHECK (step >= 1),
  oid          TEXT NOT NULL CHECK (oid != ''),
  subject      TEXT NOT NULL DEFAULT '',
  build        TEXT NOT NULL CHECK (build IN ('built', 'failed')),
  campaigns    TEXT NOT NULL DEFAULT '[]' CHECK (
                 CASE WHEN json_valid(campaigns) THEN json_type(campaigns) = 'array' ELSE 0 END),
  rounds       INTEGER NOT NULL DEFAULT 0 CHECK (rounds >= 0),
  decision     TEXT NOT NULL CHECK (decision IN ('good', 'bad', 'build failed', 'undecided')),
  estimate     REAL,
  low          REAL,
  high         REAL,
  figures      TEXT NOT NULL DEFAULT '[]' CHECK (
                 CASE WHEN json_valid(figures) THEN json_type(figures) = 'array' ELSE 0 END),
  recorded_at  TEXT NOT NULL,
  CHECK ((build = 'failed') = (decision = 'build failed')),
  PRIMARY KEY (bisection_id, step),
  UNIQUE (bisection_id, oid)
);
)sql";

// Version 15: the commit a window's target was built from ([[target]] commit).
constexpr const char* kV15 = R"sql(
ALTER TABLE windows ADD COLUMN target_commit TEXT NOT NULL DEFAULT '';
)sql";

// Version 16: what a bisection goes on from after a stop (`benchlab bisect --resume`): the
// change it bisects, the campaign file its looks are cut from and its decision rule.
constexpr const char* kV16 = R"sql(
ALTER TABLE bisections ADD COLUMN change_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bisections ADD COLUMN campaign_toml TEXT NOT NULL DEFAULT '';
ALTER TABLE bisections ADD COLUMN campaign_source TEXT NOT NULL DEFAULT '';
ALTER TABLE bisections ADD COLUMN campaign_dir TEXT NOT NULL DEFAULT '';
ALTER TABLE bisections ADD COLUMN rule TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(rule));
)sql";

// Version 17: where each step's commit lies in its range (the dashboard draws the range
// shrinking), and the campaign that measured a found culprit against its parent.
constexpr const char* kV17 = R"sql(
ALTER TABLE bisect_steps ADD COLUMN position INTEGER NOT NULL DEFAULT -1 CHECK (position >= -1);
ALTER TABLE bisections ADD COLUMN culprit_campaign TEXT NOT NULL DEFAULT '';
)sql";

// Version 18: bisections on a coordinator (docs/methodology.md, "On a coordinator"): the pair
// that measures them and the range its server agent listed, which the coordinator has no
// checkout to list again after a restart.
constexpr const char* kV18 = R"sql(
ALTER TABLE bisections ADD COLUMN pair TEXT NOT NULL DEFAULT '';
ALTER TABLE bisections ADD COLUMN range_json TEXT NOT NULL DEFAULT '[]' CHECK (
  CASE WHEN json_valid(range_json) THEN json_type(range_json) = 'array' ELSE 0 END);
)sql";

constexpr std::array<Migration, 18> kMigrations = {{
    {1, "campaigns, targets, scenarios, windows and samples", kV1},
    {2, "host figures, checks and self-test per window; host samples; spooled agent results", kV2},
    {3, "the load generator's record, load levels, window claims, re-runs and placement", kV3},
    {4, "responses over the body limit; the lab's settings", kV4},
    {5, "each window's reasons for machines", kV5},
    {6, "the audit trail", kV6},
    {7, "the dashboard's tokens", kV7},
    {8, "each agent's self-test calibration per campaign", kV8},
    {9, "side services' figures and probes per window", kV9},
    {10, "each campaign's series", kV10},
    {11, "re-measurements of suspected changes", kV11},
    {12, "the count of identical refusals per audit row", kV12},
    {13, "CPU profiles per window", kV13},
    {14, "bisections of regressions and their steps", kV14},
    {15, "the commit each window's target was built from", kV15},
    {16, "what a bisection goes on from: its change, campaign file and rule", kV16},
    {17, "each bisection step's position; the culprit's campaign against its parent", kV17},
    {18, "a bisection's pair and listed range, on a coordinator", kV18},
}};

std::string Errmsg(sqlite3* db) { return sqlite3_errmsg(db); }

Status TooNew(const std::string& path, int version, int newest) {
  return Status::FailedPrecondition(path + ": database schema version " + std::to_string(version) +
                                    " is newer than this benchlab (knows " +
                                    std::to_string(newest) + "); upgrade benchlab");
}

// Runs SQL that needs no parameters (transaction control, the migrations' own text).
Status Exec(sqlite3* db, const std::string& path, const std::string& sql, const std::string& what) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string message = path + ": " + what + ": " + (err != nullptr ? err : Errmsg(db));
  sqlite3_free(err);
  // Another process holding the write lock past the busy timeout is worth retrying later.
  const int primary = rc & 0xff;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
    return Status::Unavailable(std::move(message));
  }
  return Status::Internal(std::move(message));
}

// Applies one migration unless another connection already did while this one waited for the
// write lock, which is why the version is read again inside the transaction.
Status ApplyOne(sqlite3* db, const std::string& path, const Migration& m, int newest) {
  const std::string what = "migration " + std::to_string(m.version) + " (" + m.description + ")";
  BENCHLAB_RETURN_IF_ERROR(Exec(db, path, "BEGIN IMMEDIATE", "begin " + what));
  Result<int> version = UserVersion(db, path);
  Status st = version.status();
  if (st.ok() && *version > newest) {
    st = TooNew(path, *version, newest);
  } else if (st.ok() && *version < m.version) {
    st = Exec(db, path, m.sql, what);
    // PRAGMA takes no bound parameters; the value is our own integer, not user input.
    if (st.ok()) {
      st = Exec(db, path, "PRAGMA user_version = " + std::to_string(m.version),
                "set user_version after " + what);
    }
  }
  if (st.ok()) st = Exec(db, path, "COMMIT", "commit " + what);
  if (!st.ok()) (void)Exec(db, path, "ROLLBACK", "roll back " + what);
  return st;
}

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

int LatestVersion() { return kMigrations.back().version; }

Result<int> UserVersion(sqlite3* db, const std::string& path) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nullptr) != SQLITE_OK) {
    return Status::Internal(path + ": read schema version: " + Errmsg(db));
  }
  int rc = sqlite3_step(stmt);
  int version = rc == SQLITE_ROW ? sqlite3_column_int(stmt, 0) : 0;
  std::string err = rc == SQLITE_ROW ? "" : Errmsg(db);
  sqlite3_finalize(stmt);
  if (rc != SQLITE_ROW) {
    // A file that is not a database surfaces here, on the first read.
    return Status::FailedPrecondition(path + ": read schema version: " + err);
  }
  return version;
}

Status Migrate(sqlite3* db, const std::string& path, std::span<const Migration> migrations) {
  const int newest = migrations.empty() ? 0 : migrations.back().version;
  Result<int> version = UserVersion(db, path);
  if (!version.ok()) return version.status();
  if (*version > newest) return TooNew(path, *version, newest);
  for (const Migration& m : migrations) {
    if (m.version <= *version) continue;
    BENCHLAB_RETURN_IF_ERROR(ApplyOne(db, path, m, newest));
  }
  return Status::Ok();
}

}  // namespace benchlab::schema
