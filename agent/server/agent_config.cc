#include "agent/server/agent_config.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <toml.hpp>

#include "common/config_fields.h"
#include "common/parse.h"
#include "rpc/tls.h"

namespace benchlab {
namespace {

using config::Issues;
using config::NameBook;
using config::Table;
using config::Value;

void ReadRoles(Table& root, const Value& v, std::vector<std::string>& out) {
  const char* form = "a non-empty list of \"server\" and/or \"load\"";
  if (!v.is_array() || v.as_array().empty()) return root.Expect(v, "roles", form);
  for (const auto& item : v.as_array()) {
    if (!item.is_string() || (item.as_string().str != "server" && item.as_string().str != "load")) {
      return root.Expect(item, "roles", form);
    }
    out.push_back(item.as_string().str);
  }
}

std::optional<HostPort> ReadAddress(Table& root, std::string_view key, const Value& v) {
  if (v.is_string()) {
    auto hp = ParseHostPort(v.as_string().str);
    if (hp.ok()) return *hp;
  }
  root.Expect(v, key, "HOST:PORT such as \"127.0.0.1:7700\"");
  return std::nullopt;
}

std::optional<std::string> ReadDir(Table& root, std::string_view key, const Value& v) {
  if (v.is_string() && v.as_string().str.starts_with('/')) return v.as_string().str;
  root.Expect(v, key, "an absolute directory path");
  return std::nullopt;
}

void ReadAllowedTargets(Table& root, const Value& v, AllowedTargets& out) {
  const char* form =
      "a list of CIDRs such as \"10.0.0.0/8\" or \"::1/128\", addresses and host names";
  if (!v.is_array()) return root.Expect(v, "allowed_targets", form);
  AllowedTargets read;
  for (const auto& item : v.as_array()) {
    if (!item.is_string()) return root.Expect(item, "allowed_targets", form);
    Status added = read.Add(item.as_string().str);
    if (!added.ok()) {
      return root.Fail(item, "allowed_targets",
                       added.message() + ", got " + config::Describe(item));
    }
  }
  out = std::move(read);
}

// [tls] ca, cert, key, crl (paths, relative to the configuration's directory) and insecure.
void ReadTls(Table& root, const Value& v, Issues& issues, const std::string& config_dir,
             AgentConfig& c) {
  if (!v.is_table()) return root.Expect(v, "tls", "a table such as [tls]");
  Table t(v, "tls", {"ca", "cert", "key", "crl", "insecure"}, issues);
  bool bad_path = false;
  for (auto [key, field] : {std::pair{"ca", &c.tls.ca}, std::pair{"cert", &c.tls.cert},
                            std::pair{"key", &c.tls.key}, std::pair{"crl", &c.tls.crl}}) {
    const Value* x = t.Get(key);
    if (x == nullptr) continue;
    if (!x->is_string() || x->as_string().str.empty()) {
      t.Expect(*x, key, "a file path (relative to this file's directory)");
      bad_path = true;
      continue;
    }
    const std::string path = x->as_string().str;
    *field = path.starts_with('/') || config_dir.empty() ? path : config_dir + "/" + path;
  }
  if (const Value* x = t.Get("insecure")) {
    if (x->is_boolean()) {
      c.insecure = x->as_boolean();
    } else {
      t.Expect(*x, "insecure", "true or false");
    }
  }
  const bool any = !c.tls.ca.empty() || !c.tls.cert.empty() || !c.tls.key.empty();
  const bool all = !c.tls.ca.empty() && !c.tls.cert.empty() && !c.tls.key.empty();
  if (any && !all && !bad_path) {
    root.Expect(v, "tls", "a table with ca, cert and key together (and optionally crl)");
  }
}

// metrics_listen: "" (not served) or a loopback HOST:PORT. /metrics is plain HTTP without a
// token, so it never listens beyond loopback (docs/metrics.md, "On an agent").
void ReadMetricsListen(Table& root, const Value& v, AgentConfig& c) {
  if (v.is_string() && v.as_string().str.empty()) return;
  auto hp = ReadAddress(root, "metrics_listen", v);
  if (!hp) return;
  if (!IsLoopbackHost(hp->host)) {
    root.Expect(v, "metrics_listen",
                "a loopback HOST:PORT such as \"127.0.0.1:9464\" (plain HTTP, loopback only; "
                "docs/metrics.md) or \"\" for none");
    return;
  }
  c.metrics_listen = *hp;
}

// [build_cache] dir (absolute) and max_bytes.
void ReadBuildCache(Table& root, const Value& v, Issues& issues, AgentConfig& c) {
  if (!v.is_table()) return root.Expect(v, "build_cache", "a table such as [build_cache]");
  Table t(v, "build_cache", {"dir", "max_bytes"}, issues);
  if (const Value* x = t.Get("dir")) {
    if (auto dir = ReadDir(t, "dir", *x)) c.build_cache_dir = *dir;
  }
  if (const Value* x = t.Get("max_bytes")) {
    constexpr int64_t kMin = 1 << 20, kMax = int64_t{1} << 50;
    if (x->is_integer() && x->as_integer() >= kMin && x->as_integer() <= kMax) {
      c.build_cache_max_bytes = static_cast<uint64_t>(x->as_integer());
    } else {
      t.Expect(*x, "max_bytes", "a size in bytes from 1048576 to 2^50 such as 2147483648");
    }
  }
}

void ReadAgent(const Value& doc, Issues& issues, const std::string& config_dir, AgentConfig& c) {
  Table root(doc, "",
             {"name",         "roles",     "labels",        "listen",          "advertise",
              "coordinator",  "state_dir", "run_root",      "service_dir",     "allowed_cpus",
              "agent_cpus",   "spool_dir", "sample_period", "allowed_targets", "limits",
              "campaign_dir", "target",    "tls",           "metrics_listen",  "service",
              "build_cache"},
             issues);
  c.config_dir = config_dir;
  if (const Value* v = root.Require("name", "a name such as \"server-1\"")) {
    if (auto name = config::ReadName(root, "name", *v)) c.name = *name;
  }
  if (const Value* v = root.Require("roles", "a list such as [\"server\"]")) {
    ReadRoles(root, *v, c.roles);
  }
  if (const Value* v = root.Get("listen")) {
    if (auto hp = ReadAddress(root, "listen", *v)) c.listen = *hp;
  }
  if (const Value* v = root.Get("metrics_listen")) ReadMetricsListen(root, *v, c);
  if (const Value* v = root.Get("advertise")) {
    if (auto hp = ReadAddress(root, "advertise", *v)) c.advertise = hp->ToString();
  }
  if (const Value* v = root.Require("coordinator", "the coordinator's HOST:PORT")) {
    if (auto hp = ReadAddress(root, "coordinator", *v)) c.coordinator = hp->ToString();
  }
  if (const Value* v = root.Get("state_dir")) {
    if (auto dir = ReadDir(root, "state_dir", *v)) c.state_dir = *dir;
  }
  if (const Value* v = root.Get("run_root")) {
    if (auto dir = ReadDir(root, "run_root", *v)) c.run_root = *dir;
  }
  if (const Value* v = root.Get("service_dir")) {
    if (auto dir = ReadDir(root, "service_dir", *v)) c.service_dir = *dir;
  }
  if (const Value* v = root.Get("labels")) {
    if (v->is_array()) {
      for (const auto& item : v->as_array()) {
        if (auto label = config::ReadName(root, "labels", item)) c.labels.push_back(*label);
      }
    } else {
      root.Expect(*v, "labels", "a list of names such as [\"rack-1\"]");
    }
  }
  if (const Value* v = root.Get("allowed_cpus")) {
    if (auto cpus = config::ReadCpus(root, "allowed_cpus", *v)) c.allowed_cpus = *cpus;
  }
  if (const Value* v = root.Get("agent_cpus")) {
    if (auto cpus = config::ReadCpus(root, "agent_cpus", *v)) {
      c.agent_cpus = *cpus;
      for (int cpu : c.agent_cpus) {
        if (std::find(c.allowed_cpus.begin(), c.allowed_cpus.end(), cpu) == c.allowed_cpus.end()) {
          continue;
        }
        root.Fail(*v, "agent_cpus",
                  "CPU " + std::to_string(cpu) + " is also in allowed_cpus = \"" +
                      FormatCpuList(c.allowed_cpus) +
                      "\"; the agent's own CPUs must be apart from the benchmark's");
        break;
      }
    }
  }
  if (const Value* v = root.Get("spool_dir")) {
    if (auto dir = ReadDir(root, "spool_dir", *v)) c.spool_dir = *dir;
  }
  if (const Value* v = root.Get("allowed_targets")) ReadAllowedTargets(root, *v, c.allowed_targets);
  if (const Value* v = root.Get("limits")) ReadLimits(root, *v, issues, c.limits);
  if (const Value* v = root.Get("tls")) ReadTls(root, *v, issues, config_dir, c);
  if (const Value* v = root.Get("build_cache")) ReadBuildCache(root, *v, issues, c);
  if (const Value* v = root.Get("sample_period")) {
    auto period = config::ReadDuration(root, "sample_period", *v, /*allow_zero=*/false);
    if (period && *period >= std::chrono::milliseconds(10) && *period <= std::chrono::seconds(10)) {
      c.sample_period = std::chrono::duration_cast<std::chrono::milliseconds>(*period);
    } else if (period) {
      root.Expect(*v, "sample_period", "a duration from \"10ms\" to \"10s\"");
    }
  }
  // {campaign_dir} in the targets: the campaign_dir key's directory (a relative one is relative
  // to this file's), else this file's.
  std::string campaign_dir = config_dir;
  if (const Value* v = root.Get("campaign_dir")) {
    if (v->is_string() && !v->as_string().str.empty()) {
      std::filesystem::path dir = std::filesystem::path(config_dir) / v->as_string().str;
      campaign_dir = dir.lexically_normal().string();
      if (campaign_dir.size() > 1 && campaign_dir.back() == '/') campaign_dir.pop_back();
    } else {
      root.Expect(*v, "campaign_dir", "a directory path (relative to this file's directory)");
    }
  }
  if (const Value* v = root.Get("service")) {
    NameBook names;
    for (const auto& [label, item] : config::TablesOf(root, *v, "service", names, issues)) {
      config::ReadService(*item, label, issues, campaign_dir, c.services.emplace_back());
    }
  }
  if (const Value* v = root.Get("target")) {
    NameBook names;
    for (const auto& [label, item] : config::TablesOf(root, *v, "target", names, issues)) {
      config::ReadTarget(*item, label, issues, campaign_dir, c.catalogue.emplace_back(),
                         config::TargetFile::kCatalogue);
    }
    if (issues.empty()) config::CheckServiceReferences(c.catalogue, c.services, issues);
    for (const auto& def : c.catalogue) {
      if (def.command.empty() && !def.name.empty()) {
        issues.AddMissing(
            static_cast<uint32_t>(def.line), 1,
            "target " + config::Quote(def.name) + ": missing key \"command\" (argv, no shell)");
      }
    }
  }
}

std::string WithDir(const std::string& text, const std::string& dir) {
  std::string out = text;
  const std::string key = "{campaign_dir}";
  for (size_t pos = out.find(key); pos != std::string::npos; pos = out.find(key, pos)) {
    out.replace(pos, key.size(), dir);
    pos += dir.size();
  }
  return out;
}

toml::array StringArray(const std::vector<std::string>& items, const std::string& dir) {
  toml::array out;
  for (const auto& item : items) out.push_back(WithDir(item, dir));
  return out;
}

toml::value ServiceToToml(const ServiceDef& def) {
  const std::string& dir = def.campaign_dir;
  toml::value t{
      {"name", def.name},
      {"kind", ServiceKindName(def.kind)},
      {"command", StringArray(def.command, dir)},
      {"port", def.port},
      {"scope", ServiceScopeName(def.scope)},
      {"ready_timeout", std::to_string(def.ready_timeout.count()) + "ms"},
      {"setup_timeout", std::to_string(def.setup_timeout.count()) + "ms"},
  };
  if (!def.cpus.empty()) t["cpus"] = FormatCpuList(def.cpus);
  if (!def.env.empty()) {
    toml::table env;
    for (const auto& [name, value] : def.env) env[name] = value;
    t["env"] = env;
  }
  if (!def.ready_command.empty()) t["ready_command"] = StringArray(def.ready_command, dir);
  if (!def.setup.empty()) {
    toml::array setup;
    for (const auto& argv : def.setup) setup.push_back(StringArray(argv, dir));
    t["setup"] = std::move(setup);
  }
  if (!def.reset_command.empty()) t["reset"] = StringArray(def.reset_command, dir);
  if (!def.reset_sql.empty()) t["reset_sql"] = def.reset_sql;
  if (def.has_reset()) t["reset_every"] = ResetEveryName(def.reset_every);
  if (!def.run_as.empty()) t["run_as"] = def.run_as;
  if (def.kind == ServiceKind::kPostgres) {
    t["user"] = def.user;
    t["database"] = def.database;
  }
  if (!def.probes.empty()) {
    toml::array probes;
    for (const ProbeDef& probe : def.probes) {
      toml::value p{{"name", probe.name}};
      if (!probe.command.empty()) p["command"] = StringArray(probe.command, dir);
      if (!probe.sql.empty()) p["sql"] = probe.sql;
      probes.push_back(std::move(p));
    }
    t["probe"] = std::move(probes);
  }
  return t;
}

}  // namespace

Result<AgentConfig> ParseAgentConfigText(const std::string& text, const std::string& source_name,
                                         const std::string& config_dir, const StateEnv& env) {
  auto doc = config::ParseToml(text, source_name);
  if (!doc.ok()) return doc.status();
  AgentConfig c;
  Issues issues(source_name);
  ReadAgent(*doc, issues, config_dir, c);
  if (!issues.empty()) return issues.First();
  if (c.state_dir.empty()) {
    auto state = DefaultStateDir(c.name, env);
    if (!state.ok()) return Status::InvalidArgument(source_name + ": " + state.status().message());
    c.state_dir = *state;
  }
  if (c.run_root.empty()) c.run_root = c.state_dir + "/run";
  if (c.spool_dir.empty()) c.spool_dir = c.state_dir + "/spool";
  if (c.build_cache_dir.empty()) c.build_cache_dir = c.state_dir + "/builds";
  return c;
}

Result<AgentConfig> LoadAgentConfig(const std::string& path) {
  namespace fs = std::filesystem;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound("agent configuration " + path +
                            ": cannot open it: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  return ParseAgentConfigText(text.str(), path, absolute.lexically_normal().parent_path().string());
}

Status WriteAgentConfig(const AgentConfig& config, const std::string& path) {
  toml::value root{
      {"name", config.name},
      {"roles", StringArray(config.roles, "")},
      {"listen", config.listen.ToString()},
      {"coordinator", config.coordinator},
      {"run_root", config.run_root},
  };
  if (!config.state_dir.empty()) root["state_dir"] = config.state_dir;
  if (config.service_dir != AgentConfig{}.service_dir) root["service_dir"] = config.service_dir;
  if (!(config.allowed_targets == AllowedTargets::Loopback())) {
    root["allowed_targets"] = StringArray(config.allowed_targets.entries(), "");
  }
  if (toml::table limits = LimitsToToml(config.limits); !limits.empty()) root["limits"] = limits;
  // {campaign_dir} is written out below; the key keeps the directory templates may come from.
  if (!config.catalogue.empty() &&
      std::all_of(config.catalogue.begin(), config.catalogue.end(),
                  [&](const TargetDef& def) {
                    return def.campaign_dir == config.catalogue.front().campaign_dir;
                  }) &&
      config.catalogue.front().campaign_dir.starts_with('/')) {
    root["campaign_dir"] = config.catalogue.front().campaign_dir;
  }
  if (!config.advertise.empty()) root["advertise"] = config.advertise;
  if (!config.labels.empty()) root["labels"] = StringArray(config.labels, "");
  if (!config.allowed_cpus.empty()) root["allowed_cpus"] = FormatCpuList(config.allowed_cpus);
  if (!config.agent_cpus.empty()) root["agent_cpus"] = FormatCpuList(config.agent_cpus);
  if (!config.spool_dir.empty()) root["spool_dir"] = config.spool_dir;
  if (!config.build_cache_dir.empty() ||
      config.build_cache_max_bytes != AgentConfig{}.build_cache_max_bytes) {
    toml::table cache;
    if (!config.build_cache_dir.empty()) cache["dir"] = config.build_cache_dir;
    cache["max_bytes"] = static_cast<int64_t>(config.build_cache_max_bytes);
    root["build_cache"] = cache;
  }
  if (config.metrics_listen) root["metrics_listen"] = config.metrics_listen->ToString();
  if (!config.tls.empty() || config.insecure) {
    toml::table tls;
    for (auto [key, value] :
         {std::pair{"ca", &config.tls.ca}, std::pair{"cert", &config.tls.cert},
          std::pair{"key", &config.tls.key}, std::pair{"crl", &config.tls.crl}}) {
      if (!value->empty()) tls[key] = *value;
    }
    if (config.insecure) tls["insecure"] = true;
    root["tls"] = tls;
  }
  root["sample_period"] = std::to_string(config.sample_period.count()) + "ms";
  if (!config.catalogue.empty()) {
    toml::array targets;
    for (const auto& def : config.catalogue) {
      const std::string& dir = def.campaign_dir;
      toml::value t{
          {"name", def.name},
          {"command", StringArray(def.command, dir)},
          {"port", def.port},
          {"ready", def.ready},
          {"ready_timeout", std::to_string(def.ready_timeout.count()) + "ms"},
      };
      if (!def.cpus.empty()) t["cpus"] = FormatCpuList(def.cpus);
      if (!def.cwd.empty()) t["cwd"] = WithDir(def.cwd, dir);
      if (!def.templates.empty()) t["templates"] = StringArray(def.templates, dir);
      if (!def.version.empty()) t["version"] = StringArray(def.version, dir);
      if (!def.env.empty()) {
        toml::table env;
        for (const auto& [name, value] : def.env) env[name] = value;
        t["env"] = env;
      }
      if (!def.services.empty()) t["services"] = StringArray(def.services, "");
      if (!def.recipe.empty()) {
        t["source"] = def.recipe.source;
        toml::array steps;
        for (const auto& argv : def.recipe.build) steps.push_back(StringArray(argv, ""));
        t["build"] = std::move(steps);
        t["build_timeout"] = std::to_string(def.recipe.time_limit.count()) + "ms";
      }
      if (def.tls) t["tls"] = true;
      targets.push_back(std::move(t));
    }
    root["target"] = std::move(targets);
  }
  if (!config.services.empty()) {
    toml::array services;
    for (const ServiceDef& def : config.services) services.push_back(ServiceToToml(def));
    root["service"] = std::move(services);
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    // No width: toml11 wraps longer strings across lines, and a blank right after a break is
    // lost when the file is read back.
    out << toml::format(root, std::numeric_limits<std::size_t>::max());
    if (!out) return Status::IoError("cannot write agent configuration " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IoError("cannot write agent configuration " + path + ": " +
                           std::strerror(errno));
  }
  return Status::Ok();
}

std::string TargetHost(const AgentConfig& config) {
  std::string host = config.listen.host;
  if (!config.advertise.empty()) {
    auto advertised = ParseHostPort(config.advertise);
    host = advertised.ok() ? advertised->host : "";
  }
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") return "127.0.0.1";
  return host;
}

Status PinAgent(SysEnv& env, AgentConfig& config) {
  if (config.agent_cpus.empty()) return Status::Ok();
  Result<std::vector<int>> before = env.GetAffinity(0);
  if (!before.ok()) return before.status();
  for (int cpu : config.agent_cpus) {
    if (std::find(before->begin(), before->end(), cpu) == before->end()) {
      return Status::InvalidArgument(
          "agent_cpus = \"" + FormatCpuList(config.agent_cpus) + "\": CPU " + std::to_string(cpu) +
          " is not one this process may run on (" + FormatCpuList(*before) + ")");
    }
  }
  if (config.allowed_cpus.empty()) {
    for (int cpu : *before) {
      if (std::find(config.agent_cpus.begin(), config.agent_cpus.end(), cpu) ==
          config.agent_cpus.end()) {
        config.allowed_cpus.push_back(cpu);
      }
    }
    if (config.allowed_cpus.empty()) {
      return Status::InvalidArgument("agent_cpus = \"" + FormatCpuList(config.agent_cpus) +
                                     "\" leaves no CPU for targets and load of the " +
                                     FormatCpuList(*before) + " this process may run on; set " +
                                     "allowed_cpus or give the agent fewer CPUs");
    }
  }
  Status pinned = env.SetAffinity(0, config.agent_cpus);
  if (!pinned.ok()) {
    return Status(pinned.code(),
                  "agent_cpus = \"" + FormatCpuList(config.agent_cpus) + "\": " + pinned.message());
  }
  return Status::Ok();
}

}  // namespace benchlab
