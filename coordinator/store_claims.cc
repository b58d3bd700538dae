// Store's claims family (store.h): the windows running now (claims), the re-runs asked for, and
// the results agents offered that matched no window.
#include <openssl/sha.h>
#include <sqlite3.h>

#include <algorithm>
#include <string>
#include <utility>

#include "coordinator/outcome.h"
#include "coordinator/store.h"
#include "coordinator/store_sql.h"

namespace benchlab {

using store_sql::Collect;
using store_sql::Quoted;
using store_sql::Run;
using store_sql::SqlError;
using store_sql::Stmt;
using store_sql::Transaction;

using store_sql::BindKey;

namespace {

std::string Sha256Hex(const std::string& bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * sizeof digest);
  for (unsigned char b : digest) {
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return hex;
}

}  // namespace

Status Store::ClaimWindow(const WindowClaim& claim) {
  std::lock_guard lock(mu_);
  Stmt insert(db_,
              "INSERT OR REPLACE INTO window_claims (campaign_id, target, scenario, load_level, "
              "round, position, pair, noise, connections, attempt, server_agent, load_agent, "
              "started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
              "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
  BindKey(insert, claim.campaign_id, claim.key);
  insert.Bind(8, claim.noise ? 1 : 0);
  insert.Bind(9, claim.connections);
  insert.Bind(10, claim.attempt);
  insert.Bind(11, claim.server_agent);
  insert.Bind(12, claim.load_agent);
  return Run(db_, insert, path_,
             "claim window " + claim.key.target + "/" + claim.key.scenario + "/" +
                 claim.key.load_level + " round " + std::to_string(claim.key.round));
}

Result<std::vector<WindowClaim>> Store::ListClaims(int64_t campaign_id) {
  std::lock_guard lock(mu_);
  Stmt select(db_,
              "SELECT target, scenario, load_level, round, position, pair, noise, connections, "
              "attempt, server_agent, load_agent, started_at FROM window_claims "
              "WHERE campaign_id = ?1 ORDER BY started_at, pair");
  select.Bind(1, campaign_id);
  return Collect<WindowClaim>(db_, select, path_, "list window claims", [&](Stmt& s) {
    WindowClaim c;
    c.campaign_id = campaign_id;
    c.key = {
        s.Text(0), s.Text(1), s.Text(2), static_cast<int>(s.Int64(3)), static_cast<int>(s.Int64(4)),
        s.Text(5)};
    c.noise = s.Int64(6) != 0;
    c.connections = static_cast<int>(s.Int64(7));
    c.attempt = static_cast<int>(s.Int64(8));
    c.server_agent = s.Text(9);
    c.load_agent = s.Text(10);
    c.started_at = s.Text(11);
    return c;
  });
}

Result<int> Store::FailClaimedWindows(const std::string& reason) {
  std::vector<WindowRow> failed;
  {
    std::lock_guard lock(mu_);
    Stmt select(db_,
                "SELECT campaign_id, target, scenario, load_level, round, position, noise, "
                "connections, attempt, server_agent, load_agent, started_at, pair "
                "FROM window_claims");
    // Each claim as the failed attempt it becomes.
    auto attempt_of = [&](Stmt& s) {
      WindowRow w;
      w.campaign_id = s.Int64(0);
      w.target = s.Text(1);
      w.scenario = s.Text(2);
      w.load_level = s.Text(3);
      w.round = static_cast<int>(s.Int64(4));
      w.position = static_cast<int>(s.Int64(5));
      w.noise = static_cast<int>(s.Int64(6));
      w.connections = static_cast<int>(s.Int64(7));
      w.attempt = static_cast<int>(s.Int64(8));
      w.server_agent = s.Text(9);
      w.load_agent = s.Text(10);
      w.started_at = s.Text(11);
      w.pair = s.Text(12);
      w.ended_at = w.started_at;
      WindowReason cut;
      cut.kind = ReasonKind::kCoordinatorRestart;
      cut.name = "coordinator_restart";
      cut.text = reason;
      w.verdict = VerdictName(Verdict::kFailed);
      w.reasons = ReasonTextsJson({cut});
      w.outcome = OutcomeJson({cut});
      return w;
    };
    BENCHLAB_ASSIGN_OR_RETURN(
        failed, Collect<WindowRow>(db_, select, path_, "list window claims", attempt_of));
  }
  // Each becomes an attempt of its own, stored with its claim's removal in one transaction.
  // Named rather than InsertWindow's default arguments: inlined into this loop (a unity batch
  // holds store_windows.cc), the default profile's temporary trips GCC 12's -Wmaybe-uninitialized.
  static const std::vector<SampleRow> kNoSamples;
  static const std::vector<ServiceRow> kNoServices;
  static const std::vector<ProbeRow> kNoProbes;
  static const std::optional<ProfileRow> kNoProfile;
  for (const WindowRow& w : failed) {
    BENCHLAB_RETURN_IF_ERROR(
        InsertWindow(w, kNoSamples, kNoServices, kNoProbes, kNoProfile).status());
  }
  return static_cast<int>(failed.size());
}

Result<std::vector<std::string>> Store::RequestReruns(const std::vector<int64_t>& window_ids) {
  std::lock_guard lock(mu_);
  const std::string what = "request re-runs";
  Transaction tx(db_, path_);
  BENCHLAB_RETURN_IF_ERROR(tx.Begin(what));
  std::vector<std::string> campaigns;
  for (int64_t id : window_ids) {
    Stmt find(db_,
              "SELECT w.campaign_id, w.target, w.scenario, w.load_level, w.round, w.position, "
              "c.name, c.state, w.pair FROM windows w JOIN campaigns c ON c.id = w.campaign_id "
              "WHERE w.id = ?1");
    find.Bind(1, id);
    const int rc = find.Step();
    if (rc == SQLITE_DONE) {
      return Status::NotFound(path_ + ": " + what + ": no window has id " + std::to_string(id));
    }
    if (rc != SQLITE_ROW) return SqlError(db_, rc, path_, what);
    const int64_t campaign_id = find.Int64(0);
    WindowKey key{find.Text(1),
                  find.Text(2),
                  find.Text(3),
                  static_cast<int>(find.Int64(4)),
                  static_cast<int>(find.Int64(5)),
                  find.Text(8)};
    const std::string name = find.Text(6);
    const std::string state = find.Text(7);
    Stmt request(db_,
                 "INSERT OR IGNORE INTO rerun_requests (campaign_id, target, scenario, "
                 "load_level, round, position, pair, requested_at) VALUES (?1, ?2, ?3, ?4, ?5, "
                 "?6, ?7, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
    BindKey(request, campaign_id, key);
    BENCHLAB_RETURN_IF_ERROR(Run(db_, request, path_, what + ": window " + std::to_string(id)));
    if (state != "running" && state != "queued") {
      Stmt requeue(db_,
                   "UPDATE campaigns SET state = 'queued', finished_at = NULL, error = NULL "
                   "WHERE id = ?1");
      requeue.Bind(1, campaign_id);
      BENCHLAB_RETURN_IF_ERROR(Run(db_, requeue, path_, what + ": requeue " + Quoted(name)));
    }
    if (std::find(campaigns.begin(), campaigns.end(), name) == campaigns.end()) {
      campaigns.push_back(name);
    }
  }
  BENCHLAB_RETURN_IF_ERROR(tx.Commit(what));
  return campaigns;
}

Result<std::vector<WindowKey>> Store::ListRerunRequests(int64_t campaign_id) {
  std::lock_guard lock(mu_);
  Stmt select(db_,
              "SELECT target, scenario, load_level, round, position, pair FROM rerun_requests "
              "WHERE campaign_id = ?1 ORDER BY requested_at, rowid");
  select.Bind(1, campaign_id);
  return Collect<WindowKey>(db_, select, path_,
                            "list re-runs of campaign " + std::to_string(campaign_id), [](Stmt& s) {
                              return WindowKey{s.Text(0),
                                               s.Text(1),
                                               s.Text(2),
                                               static_cast<int>(s.Int64(3)),
                                               static_cast<int>(s.Int64(4)),
                                               s.Text(5)};
                            });
}

Status Store::KeepAgentResult(const std::string& agent, const std::string& key,
                              const std::string& payload, uint64_t max_total_bytes) {
  std::lock_guard lock(mu_);
  const std::string what = "keep spooled result " + key + " of agent " + agent;
  Transaction tx(db_, path_);
  BENCHLAB_RETURN_IF_ERROR(tx.Begin(what));
  const std::string hash = Sha256Hex(payload);
  // The bytes every other kept result holds: one kept already is offered again for free.
  Stmt held(db_,
            "SELECT coalesce(sum(length(payload)), 0) FROM agent_results "
            "WHERE NOT (agent = ?1 AND key = ?2 AND content_hash = ?3)");
  held.Bind(1, agent);
  held.Bind(2, key);
  held.Bind(3, hash);
  BENCHLAB_ASSIGN_OR_RETURN(
      std::vector<int64_t> bytes,
      Collect<int64_t>(db_, held, path_, what, [](Stmt& s) { return s.Int64(0); }));
  if (static_cast<uint64_t>(bytes.at(0)) + payload.size() > max_total_bytes) {
    return Status::ResourceExhausted(path_ + ": " + what + ": kept results would exceed " +
                                     std::to_string(max_total_bytes) + " bytes (" +
                                     std::to_string(bytes.at(0)) + " held)");
  }
  Stmt insert(db_,
              "INSERT OR IGNORE INTO agent_results (key, agent, content_hash, payload, "
              "received_at) VALUES (?1, ?2, ?3, ?4, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
  insert.Bind(1, key);
  insert.Bind(2, agent);
  insert.Bind(3, hash);
  insert.BindBlob(4, payload);
  BENCHLAB_RETURN_IF_ERROR(Run(db_, insert, path_, what));
  return tx.Commit(what);
}

Result<int> Store::CountAgentResults() {
  std::lock_guard lock(mu_);
  Stmt count(db_, "SELECT count(*) FROM agent_results");
  BENCHLAB_ASSIGN_OR_RETURN(std::vector<int> rows,
                            Collect<int>(db_, count, path_, "count spooled results",
                                         [](Stmt& s) { return static_cast<int>(s.Int64(0)); }));
  return rows.empty() ? 0 : rows[0];
}

}  // namespace benchlab
