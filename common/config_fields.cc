#include "common/config_fields.h"

#include <algorithm>
#include <array>

#include "common/git_rev.h"
#include "common/parse.h"

namespace benchlab::config {

bool IsName(std::string_view text) {
  return !text.empty() && text.size() <= 64 && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

std::optional<std::string> ReadName(Table& t, std::string_view sub, const Value& v) {
  if (v.is_string() && IsName(v.as_string().str)) return v.as_string().str;
  t.Expect(v, sub, "a name of lowercase letters, digits and '-' (1 to 64 characters)");
  return std::nullopt;
}

std::optional<int> ReadInt(Table& t, std::string_view sub, const Value& v, int64_t lo, int64_t hi,
                           std::string_view form) {
  // toml11 saturates integers too large for 64 bits, so a huge number fails the range check too.
  if (v.is_integer() && v.as_integer() >= lo && v.as_integer() <= hi) {
    return static_cast<int>(v.as_integer());
  }
  t.Expect(v, sub, form);
  return std::nullopt;
}

std::optional<std::chrono::nanoseconds> ReadDuration(Table& t, std::string_view sub, const Value& v,
                                                     bool allow_zero) {
  // A bare number is refused: "2" could be seconds or milliseconds, so the unit must be written.
  if (v.is_string()) {
    auto d = ParseDuration(v.as_string().str);
    if (d.ok() && (allow_zero || d->count() > 0)) return *d;
    if (d.ok()) {
      t.Expect(v, sub, "a duration greater than zero such as \"2s\"");
      return std::nullopt;
    }
  }
  t.Expect(v, sub, "a duration such as \"500ms\" or \"2s\"");
  return std::nullopt;
}

std::optional<std::vector<int>> ReadCpus(Table& t, std::string_view sub, const Value& v) {
  if (v.is_string()) {
    auto cpus = ParseCpuList(v.as_string().str);
    if (cpus.ok()) return *cpus;
  }
  t.Expect(v, sub, "a CPU list such as \"0\", \"0-3\" or \"0,2-3\"");
  return std::nullopt;
}

std::vector<std::pair<std::string, const Value*>> TablesOf(Table& root, const Value& v,
                                                           std::string_view key, NameBook& names,
                                                           Issues& issues) {
  std::vector<std::pair<std::string, const Value*>> tables;
  bool all_tables = v.is_array() && !v.as_array().empty() &&
                    std::all_of(v.as_array().begin(), v.as_array().end(),
                                [](const Value& item) { return item.is_table(); });
  if (!all_tables) {
    root.Expect(v, key, "one or more [[" + std::string(key) + "]] tables");
    return tables;
  }
  const auto& items = v.as_array();
  for (size_t i = 0; i < items.size(); ++i) {
    std::string label = std::string(key) + "[" + std::to_string(i) + "]";
    const auto& entries = items[i].as_table();
    auto name = entries.find("name");
    if (name != entries.end() && name->second.is_string() && IsName(name->second.as_string().str)) {
      const std::string& text = name->second.as_string().str;
      auto [it, fresh] = names.first_line.emplace(text, name->second.location().line());
      if (fresh) {
        label = std::string(key) + " " + Quote(text);
      } else {
        issues.Add(name->second, label + ".name: expected a unique name, got " +
                                     Describe(name->second) + " (already used at line " +
                                     std::to_string(it->second) + ")");
      }
    }
    tables.emplace_back(std::move(label), &items[i]);
  }
  return tables;
}

namespace {

bool IsEnvName(std::string_view text) {
  return !text.empty() && !std::isdigit(static_cast<unsigned char>(text[0])) &&
         std::all_of(text.begin(), text.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

constexpr std::array<std::string_view, 3> kTlsPlaceholders = {"{tls_cert}", "{tls_key}",
                                                              "{tls_ca}"};

// The agent replaces only these ({out} when the target has a build recipe, which ReadTemplated
// checks); any other {word} would reach the target verbatim, and is almost always a typo such
// as {prot}.
std::string UnknownPlaceholder(std::string_view text) {
  constexpr std::array<std::string_view, 4> kKnown = {"{port}", "{run_dir}", "{campaign_dir}",
                                                      "{out}"};
  for (size_t open = text.find('{'); open != text.npos; open = text.find('{', open + 1)) {
    size_t end = open + 1;
    while (end < text.size() &&
           (std::islower(static_cast<unsigned char>(text[end])) || text[end] == '_')) {
      ++end;
    }
    if (end == open + 1 || end >= text.size() || text[end] != '}') continue;
    std::string_view word = text.substr(open, end - open + 1);
    if (std::find(kKnown.begin(), kKnown.end(), word) == kKnown.end() &&
        std::find(kTlsPlaceholders.begin(), kTlsPlaceholders.end(), word) ==
            kTlsPlaceholders.end()) {
      return std::string(word);
    }
  }
  return "";
}

// Where {tls_cert}, {tls_key} and {tls_ca} may stand: in a target's command, cwd and templates
// when it has tls = true (kFilled); they are refused, saying why, anywhere else.
enum class TlsPlaceholders { kElsewhere, kTlsOff, kFilled };

constexpr std::string_view kOutPlaceholder = "{out}";
// Why {out} cannot stand in `sub`: filled only in a [[target]] with a build recipe.
constexpr std::string_view kOutOnlyWithBuild =
    "{out} is filled only for a target with a build recipe (source and build): the output "
    "directory of the commit the agent built";

std::optional<std::string> ReadTemplated(Table& t, std::string_view sub, const Value& v,
                                         std::string_view form,
                                         TlsPlaceholders tls = TlsPlaceholders::kElsewhere,
                                         bool out_filled = false) {
  if (!v.is_string() || v.as_string().str.empty()) {
    t.Expect(v, sub, form);
    return std::nullopt;
  }
  const std::string& text = v.as_string().str;
  std::string unknown = UnknownPlaceholder(text);
  if (!unknown.empty()) {
    t.Fail(v, sub,
           "expected only the placeholders {port}, {run_dir}, {campaign_dir}, {tls_cert}, "
           "{tls_key}, {tls_ca} and {out}, got " +
               Quote(unknown));
    return std::nullopt;
  }
  if (!out_filled && text.find(kOutPlaceholder) != std::string::npos) {
    t.Fail(v, sub, kOutOnlyWithBuild);
    return std::nullopt;
  }
  if (tls != TlsPlaceholders::kFilled) {
    for (std::string_view word : kTlsPlaceholders) {
      if (text.find(word) == std::string::npos) continue;
      t.Fail(v, sub,
             std::string(word) + (tls == TlsPlaceholders::kTlsOff
                                      ? " is filled only for a target with tls = true"
                                      : " is filled only in a [[target]]'s command, cwd and "
                                        "templates (with tls = true)"));
      return std::nullopt;
    }
  }
  return text;
}

// command and templates: lists of strings that may hold placeholders.
std::optional<std::vector<std::string>> ReadTemplatedList(
    Table& t, std::string_view sub, const Value& v, std::string_view form,
    TlsPlaceholders tls = TlsPlaceholders::kElsewhere, bool out_filled = false) {
  if (!v.is_array() || v.as_array().empty()) {
    t.Expect(v, sub, form);
    return std::nullopt;
  }
  std::vector<std::string> out;
  const auto& items = v.as_array();
  for (size_t i = 0; i < items.size(); ++i) {
    std::string item_sub = std::string(sub) + "[" + std::to_string(i) + "]";
    if (auto text = ReadTemplated(t, item_sub, items[i], "a non-empty string", tls, out_filled)) {
      out.push_back(*text);
    }
  }
  if (out.size() != items.size()) return std::nullopt;
  return out;
}

std::optional<std::string> ReadPort(Table& t, const Value& v) {
  int64_t port = 0;
  if (v.is_integer()) port = v.as_integer();
  if (v.is_string()) {
    const std::string& text = v.as_string().str;
    if (text == "auto") return text;
    if (!text.empty() && text.size() <= 5 &&
        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      port = std::stoi(text);
    }
  }
  if (port >= 1 && port <= 65535) return std::to_string(port);
  t.Expect(v, "port", "\"auto\" or a port number from 1 to 65535");
  return std::nullopt;
}

void ReadEnv(Table& t, const Value& v, bool out_filled, std::map<std::string, std::string>& out) {
  if (!v.is_table())
    return t.Expect(v, "env", "a table of strings such as { NODE_ENV = \"production\" }");
  for (const auto& [name, value] : EntriesInFileOrder(v)) {
    std::string sub = "env." + KeyForPath(name);
    if (!IsEnvName(name)) {
      t.Fail(*value, "env",
             "expected variable names of letters, digits and '_', got " + Quote(name));
    } else if (name == "PORT") {
      t.Fail(*value, sub, "expected no PORT: the agent sets it to the target's port");
    } else if (auto text = ReadString(t, sub, *value)) {
      if (!out_filled && text->find(kOutPlaceholder) != std::string::npos) {
        t.Fail(*value, sub, kOutOnlyWithBuild);
      } else {
        out[name] = *text;
      }
    }
  }
}

// source, build and build_timeout: how the agent builds a commit of the target (BuildRecipe).
void ReadTargetRecipe(Table& t, BuildRecipe& out) {
  const Value* source = t.Get("source");
  const Value* build = t.Get("build");
  const Value* timeout = t.Get("build_timeout");
  if (source != nullptr) {
    if (source->is_string() && source->as_string().str.starts_with('/')) {
      out.source = source->as_string().str;
      if (build == nullptr) {
        t.Fail(*source, "source", "expected build too: the steps that build a commit of it");
      }
    } else {
      t.Expect(*source, "source", "the absolute path of a git work tree");
    }
  }
  if (build != nullptr) {
    const char* form =
        "a non-empty list of steps, each a non-empty list of strings (argv, no "
        "shell) such as [[\"make\", \"-C\", \"{src}\", \"DESTDIR={out}\"]]";
    if (!build->is_array() || build->as_array().empty()) return t.Expect(*build, "build", form);
    std::vector<std::vector<std::string>> steps;
    const auto& items = build->as_array();
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string sub = "build[" + std::to_string(i) + "]";
      if (!items[i].is_array() || items[i].as_array().empty()) {
        return t.Expect(items[i], sub, "a non-empty list of strings (argv, no shell)");
      }
      std::vector<std::string>& argv = steps.emplace_back();
      const auto& args = items[i].as_array();
      for (size_t j = 0; j < args.size(); ++j) {
        const std::string arg_sub = sub + "[" + std::to_string(j) + "]";
        if (!args[j].is_string() || args[j].as_string().str.empty()) {
          return t.Expect(args[j], arg_sub, "a non-empty string");
        }
        const std::string& text = args[j].as_string().str;
        if (std::string unknown = UnknownBuildPlaceholder(text); !unknown.empty()) {
          return t.Fail(args[j], arg_sub,
                        "expected only the placeholders {src} and {out}, got " + Quote(unknown));
        }
        argv.push_back(text);
      }
    }
    out.build = std::move(steps);
    if (source == nullptr) {
      t.Fail(*build, "build", "expected source too: the git work tree the steps build");
    }
  }
  if (timeout != nullptr) {
    if (build == nullptr) {
      return t.Fail(*timeout, "build_timeout", "expected build too: it limits the build's steps");
    }
    // Rounded up so that "500us" does not become a zero limit.
    if (auto d = ReadDuration(t, "build_timeout", *timeout, /*allow_zero=*/false)) {
      out.time_limit = std::chrono::ceil<std::chrono::milliseconds>(*d);
    }
  }
}

}  // namespace

// The request line and headers are built from these strings, so a space or a line break in them
// would change the request itself.
bool IsPath(std::string_view text) {
  return text.starts_with('/') && std::none_of(text.begin(), text.end(), [](char c) {
           return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f;
         });
}

std::optional<std::string> ReadPath(Table& t, std::string_view sub, const Value& v) {
  if (v.is_string() && IsPath(v.as_string().str)) return v.as_string().str;
  t.Expect(v, sub, "a path starting with '/', without spaces");
  return std::nullopt;
}

std::optional<std::string> ReadString(Table& t, std::string_view sub, const Value& v) {
  if (v.is_string()) return v.as_string().str;
  t.Expect(v, sub, "a string");
  return std::nullopt;
}

void ReadTarget(const Value& item, std::string label, Issues& issues,
                const std::string& campaign_dir, TargetDef& out, TargetFile file) {
  std::vector<std::string_view> keys = {"name",          "command",       "port",     "ready",
                                        "cpus",          "cwd",           "env",      "templates",
                                        "ready_timeout", "version",       "services", "source",
                                        "build",         "build_timeout", "tls"};
  if (file == TargetFile::kCampaign) {
    keys.push_back("commit");
    keys.push_back("of");
  }
  Table t(item, std::move(label), keys, issues);
  out.line = static_cast<int>(t.line());
  out.campaign_dir = campaign_dir;
  ReadTargetRecipe(t, out.recipe);
  if (const Value* v = t.Require("name", "a name such as \"nginx\"")) {
    if (auto name = ReadName(t, "name", *v)) out.name = *name;
  }
  if (const Value* v = t.Get("commit")) {
    if (!v->is_string()) {
      t.Expect(*v, "commit", "a revision of the target's source such as \"v1.2\" or \"3f2a9c1\"");
    } else if (Status checked = CheckRevisionText(v->as_string().str); !checked.ok()) {
      t.Fail(*v, "commit", checked.message());
    } else {
      out.commit = v->as_string().str;
    }
  }
  if (const Value* v = t.Get("of")) {
    if (auto of = ReadName(t, "of", *v)) out.of = *of;
  }
  const bool out_filled = !out.recipe.empty();
  if (const Value* v = t.Get("tls")) {
    if (v->is_boolean()) {
      out.tls = v->as_boolean();
    } else {
      t.Expect(*v, "tls", "true (the target serves HTTPS) or false");
    }
  }
  const TlsPlaceholders tls = out.tls ? TlsPlaceholders::kFilled : TlsPlaceholders::kTlsOff;
  if (const Value* v = t.Get("command")) {
    auto argv = ReadTemplatedList(t, "command", *v, "a non-empty list of strings (argv, no shell)",
                                  tls, out_filled);
    if (argv) out.command = *argv;
  }
  if (const Value* v = t.Get("port")) {
    if (auto port = ReadPort(t, *v)) out.port = *port;
  }
  if (const Value* v = t.Get("ready")) {
    if (auto path = ReadPath(t, "ready", *v)) out.ready = *path;
  }
  if (const Value* v = t.Get("cpus")) {
    if (auto cpus = ReadCpus(t, "cpus", *v)) out.cpus = *cpus;
  }
  if (const Value* v = t.Get("cwd")) {
    if (auto cwd = ReadTemplated(t, "cwd", *v, "a non-empty directory path", tls, out_filled)) {
      out.cwd = *cwd;
    }
  }
  if (const Value* v = t.Get("env")) ReadEnv(t, *v, out_filled, out.env);
  if (const Value* v = t.Get("templates")) {
    auto files =
        ReadTemplatedList(t, "templates", *v, "a non-empty list of file paths", tls, out_filled);
    if (files) out.templates = *files;
  }
  if (const Value* v = t.Get("version")) {
    auto argv = ReadTemplatedList(t, "version", *v, "a non-empty list of strings (argv, no shell)");
    if (argv) out.version = *argv;
  }
  if (const Value* v = t.Get("ready_timeout")) {
    // Rounded up so that "500us" does not become a zero timeout.
    if (auto d = ReadDuration(t, "ready_timeout", *v, /*allow_zero=*/false)) {
      out.ready_timeout = std::chrono::ceil<std::chrono::milliseconds>(*d);
    }
  }
  if (const Value* v = t.Get("services")) {
    if (!v->is_array()) {
      t.Expect(*v, "services", "a list of [[service]] names such as [\"pg\"]");
    } else {
      for (const auto& entry : v->as_array()) {
        auto name = ReadName(t, "services", entry);
        if (!name) continue;
        if (std::find(out.services.begin(), out.services.end(), *name) != out.services.end()) {
          t.Fail(entry, "services", "expected each service once, got " + Quote(*name) + " twice");
          continue;
        }
        out.services.push_back(*name);
      }
    }
  }
}

namespace {

// A command that is either argv (a list) or, for the postgres kind, SQL (a string).
struct CommandOrSql {
  std::vector<std::string> argv;
  std::string sql;
};

std::optional<CommandOrSql> ReadCommandOrSql(Table& t, std::string_view command_key,
                                             std::string_view sql_key, ServiceKind kind,
                                             bool required) {
  const Value* command = t.Get(command_key);
  const Value* sql = t.Get(sql_key);
  CommandOrSql out;
  if (command != nullptr && sql != nullptr) {
    t.Fail(*sql, sql_key,
           "expected " + std::string(command_key) + " or " + std::string(sql_key) + ", not both");
    return std::nullopt;
  }
  if (command != nullptr) {
    auto argv =
        ReadTemplatedList(t, command_key, *command, "a non-empty list of strings (argv, no shell)");
    if (!argv) return std::nullopt;
    out.argv = *argv;
    return out;
  }
  if (sql != nullptr) {
    if (kind != ServiceKind::kPostgres) {
      t.Fail(*sql, sql_key,
             "expected " + std::string(command_key) +
                 ": sql runs only on a service of kind = \"postgres\" (with psql)");
      return std::nullopt;
    }
    if (!sql->is_string() || sql->as_string().str.empty()) {
      t.Expect(*sql, sql_key, "a non-empty SQL string");
      return std::nullopt;
    }
    out.sql = sql->as_string().str;
    return out;
  }
  if (required) {
    t.Require(command_key, kind == ServiceKind::kPostgres
                               ? "a command (argv) or sql = \"select ...\""
                               : "a command (argv, no shell)");
    return std::nullopt;
  }
  return out;
}

}  // namespace

void ReadService(const Value& item, std::string label, Issues& issues,
                 const std::string& campaign_dir, ServiceDef& out) {
  Table t(item, std::move(label),
          {"name", "kind", "command", "port", "cpus", "env", "ready_command", "ready_timeout",
           "setup", "setup_timeout", "scope", "probe", "reset", "reset_sql", "reset_every", "user",
           "database", "run_as"},
          issues);
  out.line = static_cast<int>(t.line());
  out.campaign_dir = campaign_dir;
  if (const Value* v = t.Require("name", "a name such as \"pg\"")) {
    if (auto name = ReadName(t, "name", *v)) out.name = *name;
  }
  if (const Value* v = t.Get("kind")) {
    if (v->is_string() && v->as_string().str == "postgres") {
      out.kind = ServiceKind::kPostgres;
    } else if (v->is_string() && v->as_string().str == "command") {
      out.kind = ServiceKind::kCommand;
    } else {
      t.Expect(*v, "kind", "\"command\" (the default) or \"postgres\"");
    }
  }
  if (const Value* v = t.Require("command", "a list of strings (argv, no shell)")) {
    auto argv = ReadTemplatedList(t, "command", *v, "a non-empty list of strings (argv, no shell)");
    if (argv) out.command = *argv;
  }
  if (const Value* v = t.Get("port")) {
    if (auto port = ReadPort(t, *v)) out.port = *port;
  }
  if (const Value* v = t.Get("cpus")) {
    if (auto cpus = ReadCpus(t, "cpus", *v)) out.cpus = *cpus;
  }
  if (const Value* v = t.Get("env")) ReadEnv(t, *v, /*out_filled=*/false, out.env);
  if (const Value* v = t.Get("ready_command")) {
    auto argv =
        ReadTemplatedList(t, "ready_command", *v, "a non-empty list of strings (argv, no shell)");
    if (argv) out.ready_command = *argv;
  }
  if (const Value* v = t.Get("ready_timeout")) {
    if (auto d = ReadDuration(t, "ready_timeout", *v, /*allow_zero=*/false)) {
      out.ready_timeout = std::chrono::ceil<std::chrono::milliseconds>(*d);
    }
  }
  if (const Value* v = t.Get("setup")) {
    const char* form = "a list of commands, each a list of strings (argv, no shell)";
    if (!v->is_array() || v->as_array().empty()) {
      t.Expect(*v, "setup", form);
    } else {
      const auto& items = v->as_array();
      for (size_t i = 0; i < items.size(); ++i) {
        auto argv = ReadTemplatedList(t, "setup[" + std::to_string(i) + "]", items[i], form);
        if (argv) out.setup.push_back(*argv);
      }
    }
  }
  if (const Value* v = t.Get("setup_timeout")) {
    if (auto d = ReadDuration(t, "setup_timeout", *v, /*allow_zero=*/false)) {
      out.setup_timeout = std::chrono::ceil<std::chrono::milliseconds>(*d);
    }
  }
  if (const Value* v = t.Get("scope")) {
    const std::string text = v->is_string() ? v->as_string().str : "";
    if (text == "campaign") {
      out.scope = ServiceScope::kCampaign;
    } else if (text == "target") {
      out.scope = ServiceScope::kTarget;
    } else if (text == "window") {
      out.scope = ServiceScope::kWindow;
    } else {
      t.Expect(*v, "scope", "\"campaign\" (the default), \"target\" or \"window\"");
    }
  }
  if (const Value* v = t.Get("user")) {
    if (auto name = ReadString(t, "user", *v)) out.user = *name;
  }
  if (const Value* v = t.Get("database")) {
    if (auto name = ReadString(t, "database", *v)) out.database = *name;
  }
  if (const Value* v = t.Get("run_as")) {
    // A login name as useradd(8) accepts it: [a-z_][a-z0-9_-]*, at most 32 characters.
    auto is_user = [](const std::string& text) {
      return !text.empty() && text.size() <= 32 && !(text[0] >= '0' && text[0] <= '9') &&
             text[0] != '-' && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
             });
    };
    if (!v->is_string() || !is_user(v->as_string().str)) {
      t.Expect(*v, "run_as", "a system user's name, such as \"postgres\"");
    } else {
      out.run_as = v->as_string().str;
    }
  }
  if (auto reset = ReadCommandOrSql(t, "reset", "reset_sql", out.kind, /*required=*/false)) {
    out.reset_command = reset->argv;
    out.reset_sql = reset->sql;
  }
  if (const Value* v = t.Get("reset_every")) {
    const std::string text = v->is_string() ? v->as_string().str : "";
    if (text == "window") {
      out.reset_every = ResetEvery::kWindow;
    } else if (text == "round") {
      out.reset_every = ResetEvery::kRound;
    } else {
      t.Expect(*v, "reset_every", "\"window\" (the default) or \"round\"");
    }
    if (!out.has_reset()) t.Fail(*v, "reset_every", "expected reset or reset_sql beside it");
  }
  if (const Value* v = t.Get("probe")) {
    NameBook names;
    for (const auto& [probe_label, probe] : TablesOf(t, *v, "probe", names, issues)) {
      Table p(*probe, t.label() + "." + probe_label, {"name", "command", "sql"}, issues);
      ProbeDef& def = out.probes.emplace_back();
      def.line = static_cast<int>(p.line());
      if (const Value* n = p.Require("name", "a name such as \"checkpoints\"")) {
        if (auto name = ReadName(p, "name", *n)) def.name = *name;
      }
      if (auto how = ReadCommandOrSql(p, "command", "sql", out.kind, /*required=*/true)) {
        def.command = how->argv;
        def.sql = how->sql;
      }
    }
  }
}

namespace {

// {service.NAME.FIELD} occurrences in text, as (NAME, FIELD, the whole placeholder).
std::vector<std::array<std::string, 3>> ServicePlaceholders(std::string_view text) {
  std::vector<std::array<std::string, 3>> out;
  constexpr std::string_view kOpen = "{service.";
  for (size_t at = text.find(kOpen); at != text.npos; at = text.find(kOpen, at + 1)) {
    const size_t close = text.find('}', at);
    if (close == text.npos) break;
    std::string_view inner = text.substr(at + kOpen.size(), close - at - kOpen.size());
    const size_t dot = inner.rfind('.');
    out.push_back({std::string(dot == inner.npos ? inner : inner.substr(0, dot)),
                   std::string(dot == inner.npos ? "" : inner.substr(dot + 1)),
                   std::string(text.substr(at, close - at + 1))});
  }
  return out;
}

}  // namespace

void CheckServiceReferences(const std::vector<TargetDef>& targets,
                            const std::vector<ServiceDef>& services, Issues& issues) {
  std::string known;
  for (const auto& s : services) known += (known.empty() ? "" : ", ") + s.name;
  if (known.empty()) known = "none defined";
  for (const TargetDef& target : targets) {
    const std::string where = "target " + Quote(target.name) + ": ";
    for (size_t i = 0; i < target.services.size(); ++i) {
      const std::string& name = target.services[i];
      if (std::none_of(services.begin(), services.end(),
                       [&](const ServiceDef& s) { return s.name == name; })) {
        issues.AddMissing(static_cast<uint32_t>(target.line), 1,
                          where + "services[" + std::to_string(i) +
                              "]: expected the name of a [[service]] (" + known + "), got " +
                              Quote(name));
      }
    }
    std::vector<std::string> texts = target.command;
    if (!target.cwd.empty()) texts.push_back(target.cwd);
    for (const auto& [name, value] : target.env) texts.push_back(value);
    for (const std::string& text : texts) {
      for (const auto& [service, field, whole] : ServicePlaceholders(text)) {
        const bool listed = std::find(target.services.begin(), target.services.end(), service) !=
                            target.services.end();
        if (!listed) {
          issues.AddMissing(static_cast<uint32_t>(target.line), 1,
                            where + Quote(whole) + ": expected a service the target lists in " +
                                "services = [...], got " + Quote(service));
        } else if (field != "port" && field != "host" && field != "run_dir") {
          issues.AddMissing(static_cast<uint32_t>(target.line), 1,
                            where + Quote(whole) + ": expected {service." + service +
                                ".port}, .host} or .run_dir}");
        }
      }
    }
  }
}

}  // namespace benchlab::config
