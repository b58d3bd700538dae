// The campaign file v1 schema: which keys exist, their forms and defaults (docs/campaign.md).
// [[target]], [[scenario]] and [[negative]] tables are read in campaign_tables.cc.
#include "coordinator/campaign.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/host_requirement.h"
#include "common/parse.h"
#include "coordinator/campaign_tables.h"
#include "coordinator/gates_toml.h"

namespace benchlab {
namespace {

using config::Describe;
using config::Issues;
using config::NameBook;
using config::Table;
using config::Value;
namespace fields = config;

// The [[target]] names, for an error that expects one: the first kListedNames and a count, so
// that a file of thousands of targets still gets an error a person (and a gRPC status) can carry.
std::string TargetNames(const Campaign& c) {
  std::vector<std::string> names;
  for (const auto& t : c.targets) names.push_back(t.name);
  return ListNames(names);
}

// Hex digits of the SHA-256 a redacted env value keeps (RedactedEnvValue).
constexpr size_t kRedactedHexDigits = 12;

void ReadConnections(Table& matrix, const Value& v, std::vector<int>& out) {
  if (!v.is_array()) return matrix.Expect(v, "connections", "a list of positive integers");
  const auto& items = v.as_array();
  if (items.empty())
    return matrix.Expect(v, "connections", "a non-empty list of positive integers");
  for (size_t i = 0; i < items.size(); ++i) {
    std::string sub = "connections[" + std::to_string(i) + "]";
    auto n = fields::ReadInt(matrix, sub, items[i], 1, 100000, "a positive integer up to 100000");
    if (!n) continue;
    // A level listed twice would measure the same cell twice and skew its median.
    if (std::find(out.begin(), out.end(), *n) != out.end()) {
      matrix.Expect(items[i], sub, "a level not listed before");
      continue;
    }
    out.push_back(*n);
  }
}

void ReadRates(Table& matrix, const Value& v, std::vector<double>& out) {
  if (!v.is_array()) return matrix.Expect(v, "rates", "a list of positive numbers");
  const auto& items = v.as_array();
  if (items.empty()) return matrix.Expect(v, "rates", "a non-empty list of positive numbers");
  for (size_t i = 0; i < items.size(); ++i) {
    std::string sub = "rates[" + std::to_string(i) + "]";
    auto rate = fields::ReadRate(matrix, sub, items[i]);
    if (!rate) continue;
    if (std::find(out.begin(), out.end(), *rate) != out.end()) {
      matrix.Expect(items[i], sub, "a level not listed before");
      continue;
    }
    out.push_back(*rate);
  }
}

// A string that must be one of a few words; `form` lists them for the error.
template <typename E>
std::optional<E> ReadChoice(Table& t, std::string_view sub, const Value& v,
                            std::initializer_list<std::pair<std::string_view, E>> choices,
                            std::string_view form) {
  if (v.is_string()) {
    for (const auto& [word, choice] : choices) {
      if (v.as_string().str == word) return choice;
    }
  }
  t.Expect(v, sub, form);
  return std::nullopt;
}

// rounds = 5 (a fixed plan) or rounds = { min = 3, max = 20 } (an adaptive plan).
void ReadRounds(Table& matrix, const Value& v, Campaign& c) {
  if (!v.is_table()) {
    if (auto n = fields::ReadInt(matrix, "rounds", v, 1, 1000,
                                 "a positive integer up to 1000, or { min = 3, max = 20 }")) {
      c.rounds = c.min_rounds = *n;
    }
    return;
  }
  for (const auto& [key, item] : v.as_table()) {
    if (key != "min" && key != "max") {
      return matrix.Fail(v, "rounds", "unknown key \"" + key + "\" (known: min, max)");
    }
  }
  const auto& entries = v.as_table();
  auto bound = [&](const char* key) -> std::optional<int> {
    auto it = entries.find(key);
    if (it == entries.end()) {
      matrix.Fail(v, "rounds", std::string("missing ") + key + " (rounds = { min = 3, max = 20 })");
      return std::nullopt;
    }
    // An interval needs two ratios, so an adaptive plan looks after two rounds at the earliest.
    return fields::ReadInt(matrix, std::string("rounds.") + key, it->second, 2, 1000,
                           "an integer from 2 to 1000");
  };
  const auto lo = bound("min");
  const auto hi = bound("max");
  if (!lo || !hi) return;
  if (*lo > *hi) return matrix.Expect(entries.at("max"), "rounds.max", "max >= min");
  c.min_rounds = *lo;
  c.rounds = *hi;
  c.adaptive = true;
}

void ReadMatrix(const Value& v, Issues& issues, Campaign& c) {
  Table matrix(v, "matrix",
               {"connections", "rates", "open_connections", "rounds", "order", "seed",
                "fresh_process", "warmup", "duration"},
               issues);
  const Value* connections = matrix.Get("connections");
  const Value* rates = matrix.Get("rates");
  if (connections == nullptr && rates == nullptr) {
    matrix.Require("connections", "a list such as [16, 64], or rates = [1000, 5000] for open loop");
  }
  if (connections != nullptr) ReadConnections(matrix, *connections, c.connections);
  if (rates != nullptr) ReadRates(matrix, *rates, c.rates);
  if (const Value* x = matrix.Get("open_connections")) {
    // Without rates it would change nothing; saying so catches a forgotten `rates`.
    if (rates == nullptr) {
      matrix.Expect(*x, "open_connections", "no open_connections without rates");
    } else if (auto n = fields::ReadInt(matrix, "open_connections", *x, 1, 100000,
                                        "a positive integer up to 100000")) {
      c.open_connections = *n;
    }
  }
  if (const Value* x = matrix.Get("rounds")) ReadRounds(matrix, *x, c);
  bool order_known = true;
  if (const Value* x = matrix.Get("order")) {
    auto order = ReadChoice<Order>(
        matrix, "order", *x,
        {{"rotate", Order::kRotate}, {"fixed", Order::kFixed}, {"shuffle", Order::kShuffle}},
        "\"rotate\", \"fixed\" or \"shuffle\"");
    if (order) c.order = *order;
    order_known = order.has_value();
  }
  if (const Value* x = matrix.Get("seed")) {
    // A seed that orders nothing would suggest a reproducibility the plan does not depend on.
    if (order_known && c.order != Order::kShuffle) {
      matrix.Expect(*x, "seed", "no seed unless order = \"shuffle\"");
    } else if (x->is_integer() && x->as_integer() >= 0 && x->as_integer() <= 0xffffffffLL) {
      c.seed = static_cast<uint64_t>(x->as_integer());
    } else {
      matrix.Expect(*x, "seed", "an integer from 0 to 4294967295");
    }
  }
  if (const Value* x = matrix.Get("fresh_process")) {
    auto mode = ReadChoice<FreshProcess>(matrix, "fresh_process", *x,
                                         {{"window", FreshProcess::kWindow},
                                          {"cell", FreshProcess::kCell},
                                          {"round", FreshProcess::kRound}},
                                         "\"window\", \"cell\" or \"round\"");
    if (mode) c.fresh_process = *mode;
  }
  if (const Value* x = matrix.Get("warmup")) {
    if (auto d = fields::ReadDuration(matrix, "warmup", *x, /*allow_zero=*/true)) c.warmup = *d;
  }
  if (const Value* x = matrix.Get("duration")) {
    if (auto d = fields::ReadDuration(matrix, "duration", *x, /*allow_zero=*/false)) {
      c.duration = *d;
    }
  }
}

// A list of agent names or "label:NAME" selectors (docs/fleet.md).
void ReadAgentList(Table& table, std::string_view key, const Value& v,
                   std::vector<std::string>& out) {
  const char* form = "a list of agent names or \"label:NAME\" selectors";
  if (v.is_string()) {
    out.push_back(v.as_string().str);
  } else if (v.is_array() && !v.as_array().empty()) {
    for (const auto& item : v.as_array()) {
      if (!item.is_string() || item.as_string().str.empty()) return table.Expect(v, key, form);
      out.push_back(item.as_string().str);
    }
  } else {
    return table.Expect(v, key, form);
  }
  for (const std::string& s : out) {
    if (s == "label:") {
      return table.Expect(v, key, form);
    }
  }
}

// pairs = [["srv1", "load1"], ...] or "all".
void ReadPairs(Table& table, const Value& v, Campaign& c) {
  const char* form = "\"all\" or a list of [server, load] agent name pairs";
  if (v.is_string()) {
    if (v.as_string().str != "all") return table.Expect(v, "pairs", form);
    c.all_pairs = true;
    return;
  }
  if (!v.is_array() || v.as_array().empty()) return table.Expect(v, "pairs", form);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& item : v.as_array()) {
    if (!item.is_array() || item.as_array().size() != 2 || !item.as_array()[0].is_string() ||
        !item.as_array()[1].is_string() || item.as_array()[0].as_string().str.empty() ||
        item.as_array()[1].as_string().str.empty()) {
      return table.Expect(v, "pairs", form);
    }
    pairs.emplace_back(item.as_array()[0].as_string().str, item.as_array()[1].as_string().str);
  }
  // One window at a time per pair: an agent in two pairs would run two windows at once.
  for (size_t i = 0; i < pairs.size(); ++i) {
    for (size_t j = 0; j < pairs.size(); ++j) {
      for (const std::string& a : {pairs[i].first, pairs[i].second}) {
        if ((i != j && (a == pairs[j].first || a == pairs[j].second)) ||
            pairs[i].first == pairs[i].second) {
          return table.Expect(v, "pairs", "pairs that share no agent");
        }
      }
    }
  }
  c.placement_pairs = std::move(pairs);
}

void ReadPlacement(const Value& v, Issues& issues, Campaign& c) {
  Table placement(v, "placement", {"server", "load", "pairs"}, issues);
  if (const Value* x = placement.Get("pairs")) ReadPairs(placement, *x, c);
  if (const Value* x = placement.Get("server")) {
    ReadAgentList(placement, "server", *x, c.placement_server);
  }
  if (const Value* x = placement.Get("load"))
    ReadAgentList(placement, "load", *x, c.placement_load);
}

// [host] require = ["governor=performance", "smt_siblings_idle"]: requirements on the agents'
// host findings (docs/host.md).
void ReadHost(const Value& v, Issues& issues, Campaign& c) {
  Table host(v, "host", {"require"}, issues);
  const Value* require = host.Get("require");
  if (require == nullptr) return;
  const char* form = "a list of host requirements such as \"governor=performance\"";
  if (!require->is_array()) return host.Expect(*require, "require", form);
  std::vector<std::string> out;
  for (size_t i = 0; i < require->as_array().size(); ++i) {
    const Value& item = require->as_array()[i];
    const std::string sub = "require[" + std::to_string(i) + "]";
    if (!item.is_string()) return host.Expect(item, sub, form);
    const std::string& text = item.as_string().str;
    if (!KnownRequirement(text)) {
      return host.Fail(item, sub,
                       "unknown host requirement " + config::Quote(text) +
                           ": expected NAME=VALUE or a bare NAME, with NAME one of " +
                           KnownRequirementNames());
    }
    if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(text);
  }
  c.host_require = std::move(out);
}

// [profile] enabled = true, frequency = 99, targets = ["a"] (docs/profiles.md). The frequency is
// checked even when profiles are off, so a mistyped one is found before it is switched on.
// Returns the value of `targets`, whose names are checked once the targets are read.
const Value* ReadProfile(const Value& v, Issues& issues, Campaign& c) {
  Table profile(v, "profile", {"enabled", "frequency", "targets"}, issues);
  const Value* targets = profile.Get("targets");
  if (targets != nullptr) {
    const char* form = "a list of [[target]] names, each once, such as [\"nginx\"]";
    if (!targets->is_array() || targets->as_array().empty()) {
      profile.Expect(*targets, "targets", form);
      targets = nullptr;
    } else {
      for (const Value& item : targets->as_array()) {
        auto name = item.is_string() ? fields::ReadName(profile, "targets", item) : std::nullopt;
        if (!name || std::find(c.profile_targets.begin(), c.profile_targets.end(), *name) !=
                         c.profile_targets.end()) {
          profile.Expect(item, "targets", form);
          targets = nullptr;
          break;
        }
        c.profile_targets.push_back(*name);
      }
    }
  }
  if (const Value* x = profile.Get("frequency")) {
    const std::string form =
        "an integer from 1 to " + std::to_string(kMaxProfileHz) + " (samples per second)";
    if (auto n = fields::ReadInt(profile, "frequency", *x, 1, kMaxProfileHz, form)) {
      c.profile_hz = *n;
    }
  }
  if (const Value* x = profile.Get("enabled")) {
    if (x->is_boolean()) {
      c.profile = x->as_boolean();
    } else {
      profile.Expect(*x, "enabled", "true or false");
    }
  }
  return targets;
}

// tool = "wrk" or ["benchlab", "wrk"]: which load generators measure every level.
void ReadTools(Table& table, const Value& v, Campaign& c) {
  const char* form = "\"benchlab\", \"wrk\" or \"h2load\", or a list of them without repeats";
  std::vector<std::string> tools;
  if (v.is_string()) {
    tools.push_back(v.as_string().str);
  } else if (v.is_array() && !v.as_array().empty()) {
    for (const auto& item : v.as_array()) {
      if (!item.is_string()) return table.Expect(v, "tool", form);
      tools.push_back(item.as_string().str);
    }
  } else {
    return table.Expect(v, "tool", form);
  }
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string& t = tools[i];
    if ((t != "benchlab" && t != "wrk" && t != "h2load") ||
        std::find(tools.begin(), tools.begin() + static_cast<long>(i), t) !=
            tools.begin() + static_cast<long>(i)) {
      return table.Expect(v, "tool", form);
    }
    // The external tools are closed-loop generators; their own limits are checked here so a
    // campaign fails before it starts, not at its first window.
    if (t != "benchlab" && !c.rates.empty()) {
      return table.Fail(v, "tool",
                        "expected a tool that runs open-loop levels (benchlab), got \"" + t +
                            "\" with [matrix] rates: " + t + " measures closed loop only");
    }
  }
  c.load_tools = std::move(tools);
}

void ReadLoadTls(Table& load, const Value& v, Issues& issues, Campaign& c);

void ReadLoad(const Value& v, Issues& issues, Campaign& c) {
  Table load(v, "load",
             {"threads", "cpus", "depth", "arrival", "max_conns", "tool", "engine", "tls",
              "requests_per_connection"},
             issues);
  if (const Value* x = load.Get("tls")) ReadLoadTls(load, *x, issues, c);
  if (const Value* x = load.Get("requests_per_connection")) {
    if (auto n = fields::ReadInt(load, "requests_per_connection", *x, 0, 1'000'000'000,
                                 "0 (keep connections) or a number of requests")) {
      c.load_requests_per_connection = static_cast<uint32_t>(*n);
    }
  }
  if (const Value* x = load.Get("tool")) ReadTools(load, *x, c);
  if (const Value* x = load.Get("tls");
      x != nullptr && c.load_tools != std::vector<std::string>{"benchlab"}) {
    load.Fail(*x, "tls", "only tool \"benchlab\" drives the load over TLS; drop wrk and h2load");
  }
  if (const Value* x = load.Get("depth")) {
    if (auto n = fields::ReadInt(load, "depth", *x, 1, 1024, "an integer from 1 to 1024")) {
      c.load_depth = *n;
    }
  }
  if (const Value* x = load.Get("arrival")) {
    if (x->is_string() && (x->as_string().str == "constant" || x->as_string().str == "poisson")) {
      c.load_poisson = x->as_string().str == "poisson";
    } else {
      load.Expect(*x, "arrival", "\"constant\" or \"poisson\"");
    }
  }
  if (const Value* x = load.Get("engine")) {
    const bool known =
        x->is_string() && (x->as_string().str == "auto" || x->as_string().str == "io_uring" ||
                           x->as_string().str == "epoll");
    if (known) {
      c.load_engine = x->as_string().str;
    } else {
      load.Expect(*x, "engine", "\"auto\", \"io_uring\" or \"epoll\"");
    }
  }
  if (const Value* x = load.Get("max_conns")) {
    if (auto n =
            fields::ReadInt(load, "max_conns", *x, 1, 100000, "a positive integer up to 100000")) {
      c.load_max_conns = *n;
    }
  }
  if (const Value* x = load.Get("threads")) {
    if (auto n = fields::ReadInt(load, "threads", *x, 1, 1024, "a positive integer up to 1024")) {
      c.load_threads = *n;
    }
  }
  if (const Value* x = load.Get("cpus")) {
    if (auto cpus = fields::ReadCpus(load, "cpus", *x)) c.load_cpus = *cpus;
  }
}

// [matrix], [load], [gates] and [noise] are tables; `matrix = 5` or [[matrix]] is reported as such.
const Value* SubTable(Table& root, const Value* v, std::string_view key) {
  if (v == nullptr) return nullptr;
  if (v->is_table()) return v;
  root.Expect(*v, key, "a table ([" + std::string(key) + "])");
  return nullptr;
}

// public_env = ["NODE_ENV", ...]: variable names, each once.
void ReadPublicEnv(Table& root, const Value& v, Campaign& c) {
  const char* form = "a list of variable names such as [\"NODE_ENV\"]";
  if (!v.is_array()) return root.Expect(v, "public_env", form);
  for (const auto& item : v.as_array()) {
    const bool name =
        item.is_string() && !item.as_string().str.empty() &&
        std::isdigit(static_cast<unsigned char>(item.as_string().str[0])) == 0 &&
        std::all_of(item.as_string().str.begin(), item.as_string().str.end(), [](char ch) {
          return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_';
        });
    if (!name || std::find(c.public_env.begin(), c.public_env.end(), item.as_string().str) !=
                     c.public_env.end()) {
      return root.Expect(item, "public_env", form);
    }
    c.public_env.push_back(item.as_string().str);
  }
}

// A number from lo to hi, integer or float.
std::optional<double> ReadFraction(Table& t, std::string_view key, const Value& v, double lo,
                                   double hi, std::string_view form) {
  double x = 0;
  if (v.is_floating()) {
    x = v.as_floating();
  } else if (v.is_integer()) {
    x = static_cast<double>(v.as_integer());
  } else {
    t.Expect(v, key, form);
    return std::nullopt;
  }
  if (!(x >= lo && x <= hi)) {
    t.Expect(v, key, form);
    return std::nullopt;
  }
  return x;
}

// [load] tls = { resumption = 0.5, version = "1.3", alpn = ["http/1.1"], verify = true,
// server_name = "..." }: checked here as the generator will (ValidateTlsOptions), so a bad value
// fails the campaign before its first window.
void ReadLoadTls(Table& load, const Value& v, Issues& issues, Campaign& c) {
  if (!v.is_table()) {
    return load.Expect(v, "tls", "a table such as { resumption = 1.0, version = \"1.3\" }");
  }
  Table tls(v, load.Path("tls"), {"resumption", "version", "alpn", "verify", "server_name"},
            issues);
  Campaign::LoadTls t;
  if (const Value* x = tls.Get("resumption")) {
    if (auto share = ReadFraction(tls, "resumption", *x, 0, 1, "a share from 0.0 to 1.0")) {
      t.resumption = *share;
    }
  }
  if (const Value* x = tls.Get("version")) {
    if (x->is_string() && (x->as_string().str == "1.3" || x->as_string().str == "1.2")) {
      t.version = x->as_string().str;
    } else {
      tls.Expect(*x, "version", "\"1.3\" or \"1.2\"");
    }
  }
  if (const Value* x = tls.Get("alpn")) {
    const char* form = "a list of protocol names holding \"http/1.1\", or []";
    bool ok = x->is_array() && x->as_array().size() <= 8;
    std::vector<std::string> alpn;
    if (ok) {
      for (const Value& p : x->as_array()) {
        ok = ok && p.is_string() && !p.as_string().str.empty() && p.as_string().str.size() < 256;
        if (ok) alpn.push_back(p.as_string().str);
      }
    }
    ok = ok && (alpn.empty() || std::find(alpn.begin(), alpn.end(), "http/1.1") != alpn.end());
    if (ok) {
      t.alpn = std::move(alpn);
    } else {
      tls.Expect(*x, "alpn", form);
    }
  }
  if (const Value* x = tls.Get("verify")) {
    if (x->is_boolean()) {
      t.verify = x->as_boolean();
    } else {
      tls.Expect(*x, "verify", "true or false");
    }
  }
  if (const Value* x = tls.Get("server_name")) {
    if (auto name = fields::ReadString(tls, "server_name", *x)) t.server_name = *name;
  }
  c.load_tls = std::move(t);
}

// The figures [stats] decide_on may name: the per-cell figures of a window.
constexpr std::string_view kDecidingFigures[] = {"rps", "cpu_us_per_request", "requests_per_cpu_s",
                                                 "p50_us", "p99_us"};

void ReadStats(const Value& v, Issues& issues, Campaign& c) {
  Table stats(v, "stats", {"confidence", "margin", "max_duration", "decide_on"}, issues);
  StatsSpec& s = c.stats;
  s.line = static_cast<int>(stats.line());
  if (const Value* x = stats.Get("confidence")) {
    if (auto n = ReadFraction(stats, "confidence", *x, 0.5, 0.999, "a number from 0.5 to 0.999"))
      s.confidence = *n;
  }
  if (const Value* x = stats.Get("margin")) {
    if (auto n = ReadFraction(stats, "margin", *x, 0, 0.5,
                              "a fraction from 0 to 0.5, such as 0.02 for 2%")) {
      s.margin = *n;
    }
  }
  if (const Value* x = stats.Get("max_duration")) {
    if (auto d = fields::ReadDuration(stats, "max_duration", *x, /*allow_zero=*/false)) {
      s.max_duration = *d;
    }
  }
  if (const Value* x = stats.Get("decide_on")) {
    const std::string form =
        "a non-empty list of figures among rps, cpu_us_per_request, requests_per_cpu_s, p50_us, "
        "p99_us";
    std::vector<std::string> names;
    bool ok = x->is_array() && !x->as_array().empty();
    if (ok) {
      for (const auto& item : x->as_array()) {
        ok = ok && item.is_string() &&
             std::find(std::begin(kDecidingFigures), std::end(kDecidingFigures),
                       item.as_string().str) != std::end(kDecidingFigures) &&
             std::find(names.begin(), names.end(), item.as_string().str) == names.end();
        if (ok) names.push_back(item.as_string().str);
      }
    }
    if (ok) {
      s.decide_on = std::move(names);
    } else {
      stats.Expect(*x, "decide_on", form);
    }
  }
}

constexpr std::string_view kLabelForm =
    "a version string or a git commit of 1 to 256 printable characters";

// [labels]: target = "version". Which targets exist is checked once they are read
// (CheckLabelTargets).
void ReadLabels(const Value& v, Issues& issues, Campaign& c) {
  for (const auto& [target, value] : config::EntriesInFileOrder(v)) {
    const std::string path = "labels." + config::KeyForPath(target);
    if (!value->is_string() || !IsLabelValue(value->as_string().str)) {
      issues.Add(*value,
                 path + ": expected " + std::string(kLabelForm) + ", got " + Describe(*value));
      continue;
    }
    c.labels[target] = value->as_string().str;
  }
}

void CheckLabelTargets(const Value& v, Issues& issues, const Campaign& c) {
  const std::string names = TargetNames(c);
  for (const auto& [target, value] : config::EntriesInFileOrder(v)) {
    if (c.FindTarget(target) != nullptr) continue;
    issues.Add(*value, "labels." + config::KeyForPath(target) +
                           ": expected the name of a [[target]] (" + names + "), got " +
                           config::Quote(target));
  }
}

void ReadCampaignTable(const Value& doc, Issues& issues, Campaign& c) {
  Table root(
      doc, "",
      {"name", "series", "baseline", "matrix", "load", "gates", "noise", "placement", "host",
       "profile", "stats", "target", "scenario", "negative", "public_env", "service", "labels"},
      issues);
  if (const Value* v = root.Get("public_env")) ReadPublicEnv(root, *v, c);
  if (const Value* v = root.Require("name", "a name such as \"hello\"")) {
    if (auto name = fields::ReadName(root, "name", *v)) c.name = *name;
  }
  if (const Value* v = root.Get("series")) {
    if (auto name = fields::ReadName(root, "series", *v)) c.series = *name;
  }
  if (c.series.empty()) c.series = c.name;
  const Value* baseline = root.Require("baseline", "the name of a [[target]], such as \"nginx\"");
  if (baseline != nullptr) {
    if (auto name = fields::ReadName(root, "baseline", *baseline)) c.baseline = *name;
  }
  if (auto* v = SubTable(
          root, root.Require("matrix", "a [matrix] table with connections = [16, 64]"), "matrix")) {
    ReadMatrix(*v, issues, c);
  }
  if (auto* v = SubTable(root, root.Get("load"), "load")) ReadLoad(*v, issues, c);
  if (auto* v = SubTable(root, root.Get("gates"), "gates")) ReadGatesTable(*v, issues, c.gates);
  if (auto* v = SubTable(root, root.Get("placement"), "placement")) ReadPlacement(*v, issues, c);
  if (auto* v = SubTable(root, root.Get("host"), "host")) ReadHost(*v, issues, c);
  const Value* profile_targets = nullptr;
  if (auto* v = SubTable(root, root.Get("profile"), "profile")) {
    profile_targets = ReadProfile(*v, issues, c);
  }
  const Value* stats = SubTable(root, root.Get("stats"), "stats");
  if (stats != nullptr) ReadStats(*stats, issues, c);
  const Value* noise = SubTable(root, root.Get("noise"), "noise");
  if (noise != nullptr) fields::ReadNoise(*noise, issues, c.noise.emplace());
  const Value* labels = SubTable(root, root.Get("labels"), "labels");
  if (labels != nullptr) ReadLabels(*labels, issues, c);

  if (const Value* v = root.Get("service")) {
    NameBook service_names;
    for (const auto& [label, item] : fields::TablesOf(root, *v, "service", service_names, issues)) {
      fields::ReadService(*item, label, issues, c.campaign_dir, c.services.emplace_back());
    }
  }
  NameBook target_names;
  if (const Value* v = root.Require("target", "one or more [[target]] tables")) {
    for (const auto& [label, item] : fields::TablesOf(root, *v, "target", target_names, issues)) {
      fields::ReadTarget(*item, label, issues, c.campaign_dir, c.targets.emplace_back(),
                         fields::TargetFile::kCampaign);
    }
  }
  // Scenarios and negatives share one namespace: windows, diffs and reports name either.
  NameBook request_names;
  if (const Value* v = root.Require("scenario", "one or more [[scenario]] tables")) {
    for (const auto& [label, item] :
         fields::TablesOf(root, *v, "scenario", request_names, issues)) {
      fields::ReadScenario(*item, label, issues, c.scenarios.emplace_back());
    }
  }
  if (const Value* v = root.Get("negative")) {
    for (const auto& [label, item] :
         fields::TablesOf(root, *v, "negative", request_names, issues)) {
      fields::ReadScenario(*item, label, issues, c.negatives.emplace_back());
    }
  }

  // References are checked only on an otherwise clean file: a misspelt target name would
  // otherwise also be reported as a bad baseline, at an earlier line, hiding the real mistake.
  if (issues.empty() && baseline != nullptr && c.FindTarget(c.baseline) == nullptr) {
    root.Fail(
        *baseline, "baseline",
        "expected the name of a [[target]] (" + TargetNames(c) + "), got " + Describe(*baseline));
  }
  if (issues.empty() && profile_targets != nullptr) {
    for (size_t i = 0; i < c.profile_targets.size(); ++i) {
      if (c.FindTarget(c.profile_targets[i]) != nullptr) continue;
      const Value& item = profile_targets->as_array()[i];
      root.Fail(
          item, "profile.targets",
          "expected the name of a [[target]] (" + TargetNames(c) + "), got " + Describe(item));
      break;
    }
  }
  if (issues.empty()) fields::CheckServiceReferences(c.targets, c.services, issues);
  if (issues.empty() && labels != nullptr) CheckLabelTargets(*labels, issues, c);
  // With its services in the file (the embedded lab), a bound on a probe no service has is a
  // typo that would refuse every window of the targets with services.
  if (issues.empty() && !c.services.empty() && !c.gates.probe_max.empty()) {
    std::string known;
    for (const ServiceDef& s : c.services) {
      for (const ProbeDef& p : s.probes) known += (known.empty() ? "" : ", ") + p.name;
    }
    const Value& probe = doc.at("gates").at("probe");
    for (const auto& [name, bound] : config::EntriesInFileOrder(probe)) {
      bool found = false;
      for (const ServiceDef& s : c.services) {
        for (const ProbeDef& p : s.probes) found = found || p.name == name;
      }
      if (!found) {
        issues.Add(*bound, "gates.probe." + config::KeyForPath(name) +
                               ": expected the name of a [[service.probe]] (" +
                               (known.empty() ? "none defined" : known) + ")");
      }
    }
  }
  if (issues.empty() && noise != nullptr) fields::CheckNoise(*noise, issues, c);
  // A budget bounds how many rounds an adaptive plan adds; a fixed plan has none to drop.
  if (issues.empty() && c.stats.max_duration && !c.adaptive) {
    issues.Add(
        stats->as_table().at("max_duration"),
        "stats.max_duration: needs an adaptive plan: [matrix] rounds = { min = 3, max = 20 }");
  }
}

}  // namespace

const TargetDef* Campaign::FindTarget(const std::string& target_name) const {
  for (const auto& t : targets) {
    if (t.name == target_name) return &t;
  }
  return nullptr;
}

bool Campaign::Profiles(const std::string& target_name) const {
  return profile &&
         (profile_targets.empty() || std::find(profile_targets.begin(), profile_targets.end(),
                                               target_name) != profile_targets.end());
}

const ScenarioDef* Campaign::FindScenario(const std::string& scenario_name) const {
  for (const auto& s : scenarios) {
    if (s.name == scenario_name) return &s;
  }
  return nullptr;
}

std::vector<LoadLevel> Campaign::LoadLevels() const {
  std::vector<LoadLevel> levels;
  levels.reserve((connections.size() + rates.size()) * load_tools.size());
  // Each level with every tool back to back, so the tools compare on the same target, close in
  // time; open-loop levels exist only for benchlab (checked when parsing).
  for (int n : connections) {
    for (const std::string& tool : load_tools) levels.push_back({n, 0, tool});
  }
  for (double rate : rates) levels.push_back({open_connections, rate, "benchlab"});
  return levels;
}

std::string LoadLevelLabel(const LoadLevel& level) {
  const std::string suffix = level.tool.empty() || level.tool == "benchlab" ? "" : "@" + level.tool;
  if (level.rate <= 0) return "c" + std::to_string(level.connections) + suffix;
  // Fixed notation, shortest digits that read back as the same double: 5000 -> "5000" (never
  // "5e+03"), 2500.5 -> "2500.5". std::to_chars is exact and locale-free on every platform.
  char buffer[400];
  auto [end, ec] =
      std::to_chars(buffer, buffer + sizeof buffer, level.rate, std::chars_format::fixed);
  if (ec != std::errc()) return "r?";
  return "r" + std::string(buffer, end);
}

Result<Campaign> ParseCampaignText(const std::string& text, const std::string& source_name,
                                   const std::string& campaign_dir) {
  // ParseToml refuses a text over kMaxTomlBytes (4 MiB), before anything else is read.
  auto doc = config::ParseToml(text, source_name);
  if (!doc.ok()) return doc.status();
  Campaign c;
  c.source_name = source_name;
  c.campaign_dir = campaign_dir;
  c.text = text;
  Issues issues(source_name);
  ReadCampaignTable(*doc, issues, c);
  if (!issues.empty()) return issues.First();
  return c;
}

Result<Campaign> ParseCampaignFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) {
    return Status::NotFound("campaign file " + path + ": no such file");
  }
  if (ec) return Status::IoError("campaign file " + path + ": " + ec.message());
  if (fs::is_directory(st)) return Status::IoError("campaign file " + path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::IoError("campaign file " + path + ": cannot open it: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError("campaign file " + path + ": read failed");
  fs::path absolute = fs::absolute(path, ec);
  if (ec) return Status::IoError("campaign file " + path + ": " + ec.message());
  return ParseCampaignText(text.str(), path, absolute.lexically_normal().parent_path().string());
}

std::string RedactedEnvValue(std::string_view value) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(value.data()), value.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = "sha256:";
  for (size_t i = 0; i < kRedactedHexDigits / 2; ++i) {
    text += kHex[digest[i] >> 4];
    text += kHex[digest[i] & 15];
  }
  return text;
}

bool IsRedactedEnvValue(std::string_view value) {
  constexpr std::string_view kPrefix = "sha256:";
  return value.size() == kPrefix.size() + kRedactedHexDigits && value.starts_with(kPrefix) &&
         value.substr(kPrefix.size()).find_first_not_of("0123456789abcdef") ==
             std::string_view::npos;
}

namespace {

// Where each env value to redact lies in the text, as toml11 recorded it.
struct Span {
  uint32_t line;    // 1-based
  uint32_t column;  // 1-based, in bytes
  size_t length;    // bytes, the quotes included
  std::string value;
};

std::vector<Span> SecretEnvSpans(const Value& doc, const Campaign& c) {
  std::vector<Span> spans;
  // Targets' and services' environments alike (a database password is as secret as a key).
  for (const char* key : {"target", "service"}) {
    if (!doc.is_table() || !doc.contains(key) || !doc.at(key).is_array()) continue;
    for (const Value& entry : doc.at(key).as_array()) {
      if (!entry.is_table() || !entry.contains("env") || !entry.at("env").is_table()) continue;
      for (const auto& [name, value] : entry.at("env").as_table()) {
        if (!value.is_string() || IsRedactedEnvValue(value.as_string().str) ||
            std::find(c.public_env.begin(), c.public_env.end(), name) != c.public_env.end()) {
          continue;
        }
        const toml::source_location loc = value.location();
        spans.push_back({loc.line(), loc.column(), loc.region(), value.as_string().str});
      }
    }
  }
  return spans;
}

}  // namespace

Result<std::string> RedactCampaignText(const std::string& text, const std::string& source_name) {
  auto campaign = ParseCampaignText(text, source_name, "");
  if (!campaign.ok()) return campaign.status();
  auto doc = config::ParseToml(text, source_name);
  if (!doc.ok()) return doc.status();
  std::vector<size_t> line_starts = {0};
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') line_starts.push_back(i + 1);
  }
  std::vector<std::pair<size_t, Span>> at;  // byte offset of each value
  for (Span& span : SecretEnvSpans(*doc, *campaign)) {
    const size_t offset = span.line >= 1 && span.line <= line_starts.size()
                              ? line_starts[span.line - 1] + span.column - 1
                              : text.size();
    if (span.column < 1 || offset + span.length > text.size()) {
      return Status::Internal(source_name + ":" + std::to_string(span.line) +
                              ": cannot find an env value to redact");
    }
    at.emplace_back(offset, std::move(span));
  }
  // From the end, so that the offsets still to replace stay where they were.
  std::sort(at.begin(), at.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string redacted = text;
  for (const auto& [offset, span] : at) {
    const std::string hash = RedactedEnvValue(span.value);
    const auto newlines =
        std::count(text.begin() + static_cast<ptrdiff_t>(offset),
                   text.begin() + static_cast<ptrdiff_t>(offset + span.length), '\n');
    // A multi-line value keeps its lines: a line-ending backslash drops them from the string.
    redacted.replace(
        offset, span.length,
        newlines == 0
            ? "\"" + hash + "\""
            : "\"\"\"" + hash + "\\" + std::string(static_cast<size_t>(newlines), '\n') + "\"\"\"");
  }
  return redacted;
}

bool HasRedactedEnv(const Campaign& campaign) {
  for (const TargetDef& target : campaign.targets) {
    for (const auto& [name, value] : target.env) {
      if (IsRedactedEnvValue(value)) return true;
    }
  }
  for (const ServiceDef& service : campaign.services) {
    for (const auto& [name, value] : service.env) {
      if (IsRedactedEnvValue(value)) return true;
    }
  }
  return false;
}

bool IsLabelValue(std::string_view value) {
  return !value.empty() && value.size() <= kMaxLabelBytes &&
         std::all_of(value.begin(), value.end(), [](char ch) { return ch >= ' ' && ch <= '~'; });
}

namespace {

// A `[labels]` table header line: `[labels]`, spaces allowed inside the brackets and a comment
// after them.
bool IsLabelsHeader(std::string_view line) {
  size_t i = 0;
  auto skip_blanks = [&] {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  };
  auto take = [&](std::string_view word) {
    skip_blanks();
    if (line.substr(i, word.size()) != word) return false;
    i += word.size();
    return true;
  };
  if (!take("[") || !take("labels") || !take("]")) return false;
  skip_blanks();
  return i == line.size() || line[i] == '#' || line.substr(i) == "\r";
}

}  // namespace

Result<std::string> AddCampaignLabels(const Campaign& campaign, const std::string& text,
                                      const std::map<std::string, std::string>& labels) {
  const std::string names = TargetNames(campaign);
  std::string lines;
  for (const auto& [target, value] : labels) {
    const std::string label = target + "=" + value;
    if (campaign.FindTarget(target) == nullptr) {
      return Status::InvalidArgument(config::Quote(label) +
                                     ": expected the name of a [[target]] (" + names +
                                     ") before '=', got " + config::Quote(target));
    }
    if (!IsLabelValue(value)) {
      return Status::InvalidArgument(config::Quote(label) + ": expected " +
                                     std::string(kLabelForm) + " after '=', got " +
                                     config::Quote(value));
    }
    if (auto it = campaign.labels.find(target); it != campaign.labels.end()) {
      return Status::InvalidArgument(
          config::Quote(label) + ": " + campaign.source_name + " labels " + target + " already (" +
          config::Quote(it->second) + "); give a target's label in one place");
    }
    lines += target + " = " + config::Quote(value) + "\n";
  }
  if (labels.empty()) return text;
  auto doc = config::ParseToml(text, campaign.source_name);
  if (!doc.ok()) return doc.status();
  std::string out;
  if (!doc->contains("labels")) {
    // A table of its own at the end: every line of the file stays where it was.
    out = text;
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += "\n[labels]\n" + lines;
  } else {
    // One [labels] table only: its keys right after its header.
    std::istringstream in(text);
    std::string line;
    int headers = 0;
    while (std::getline(in, line)) {
      out += line + (in.eof() ? "" : "\n");
      if (IsLabelsHeader(line)) {
        if (in.eof()) out += "\n";
        out += lines;
        ++headers;
      }
    }
    if (headers != 1) {
      return Status::InvalidArgument(campaign.source_name +
                                     ": labels must be a [labels] table for labels to be added "
                                     "to it (write `[labels]` and a line per target)");
    }
  }
  // What was written must read back as the file's labels and the new ones: a `[labels]` line
  // inside a multi-line string, say, is no header.
  auto parsed = ParseCampaignText(out, campaign.source_name, campaign.campaign_dir);
  std::map<std::string, std::string> expected = campaign.labels;
  expected.insert(labels.begin(), labels.end());
  if (!parsed.ok() || parsed->labels != expected) {
    return Status::InvalidArgument(campaign.source_name +
                                   ": cannot add labels to its [labels] table; write them in it");
  }
  return out;
}

std::map<std::string, std::string> CampaignTextLabels(const std::string& text) {
  auto campaign = ParseCampaignText(text, "campaign", "");
  return campaign.ok() ? campaign->labels : std::map<std::string, std::string>{};
}

Result<std::vector<TargetDef>> EmbeddedCatalogue(const Campaign& campaign) {
  auto where = [&](const TargetDef& t) {
    return campaign.source_name + ":" + std::to_string(t.line) + ": target " +
           config::Quote(t.name);
  };
  auto entry_of = [](const TargetDef& t) { return t.of.empty() ? t.name : t.of; };
  std::vector<TargetDef> catalogue;
  std::vector<const TargetDef*> defined_by;  // the campaign target each entry is copied from
  for (const auto& t : campaign.targets) {
    if (t.command.empty()) continue;
    const std::string name = entry_of(t);
    auto it = std::find_if(catalogue.begin(), catalogue.end(),
                           [&](const TargetDef& e) { return e.name == name; });
    if (it == catalogue.end()) {
      TargetDef& entry = catalogue.emplace_back(t);
      entry.name = name;
      entry.commit.clear();
      entry.of.clear();
      defined_by.push_back(&t);
      continue;
    }
    const TargetDef& first = *defined_by[static_cast<size_t>(it - catalogue.begin())];
    if (t.command != it->command) {
      return Status::InvalidArgument(
          where(t) + ".command: differs from target " + config::Quote(first.name) + "'s (line " +
          std::to_string(first.line) + "), which defines the lab's catalogue target " +
          config::Quote(name) + ": give both the same command, or leave this one out");
    }
  }
  for (const auto& t : campaign.targets) {
    const std::string name = entry_of(t);
    auto it = std::find_if(catalogue.begin(), catalogue.end(),
                           [&](const TargetDef& e) { return e.name == name; });
    if (it == catalogue.end()) {
      if (t.of.empty() || t.of == t.name) {
        return Status::InvalidArgument(where(t) +
                                       ".command: expected a list of strings (argv, no shell), "
                                       "got nothing");
      }
      return Status::InvalidArgument(where(t) +
                                     ".of: no target of the campaign with a command "
                                     "defines the lab's catalogue target " +
                                     config::Quote(name));
    }
    if (!t.commit.empty() && it->recipe.empty()) {
      return Status::InvalidArgument(where(t) + ".commit: catalogue target " + config::Quote(name) +
                                     " has no build recipe (source and build) to build " +
                                     config::Quote(t.commit) + " by");
    }
  }
  return catalogue;
}

std::vector<std::string> CatalogueNames(const Campaign& campaign) {
  std::vector<std::string> names;
  for (const auto& t : campaign.targets) {
    const std::string& name = t.of.empty() ? t.name : t.of;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

Status RequireCommands(const Campaign& campaign) { return EmbeddedCatalogue(campaign).status(); }

}  // namespace benchlab
