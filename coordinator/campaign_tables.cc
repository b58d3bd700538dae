// [[scenario]], [[negative]] and [noise] tables of a campaign file (docs/campaign.md).
#include "coordinator/campaign_tables.h"

#include <algorithm>
#include <cctype>

namespace benchlab::config {
namespace {

bool IsToken(std::string_view text) {
  constexpr std::string_view kSymbols = "!#$%&'*+-.^_`|~";
  return !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kSymbols.find(c) != kSymbols.npos;
  });
}

bool IsMethod(std::string_view text) {
  return !text.empty() && text.size() <= 32 && text[0] >= 'A' && text[0] <= 'Z' &&
         std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
         });
}

bool IsHeaderValue(std::string_view text) {
  return std::none_of(text.begin(), text.end(),
                      [](char c) { return c == '\r' || c == '\n' || c == 0; });
}

void ReadHeaders(Table& t, const Value& v, std::vector<std::pair<std::string, std::string>>& out) {
  if (!v.is_table()) {
    return t.Expect(v, "headers",
                    "a table of strings such as { \"content-type\" = \"text/plain\" }");
  }
  for (const auto& [name, value] : EntriesInFileOrder(v)) {
    std::string sub = "headers." + KeyForPath(name);
    if (!IsToken(name)) {
      t.Fail(*value, "headers", "expected header names that are HTTP tokens, got " + Quote(name));
    } else if (!value->is_string() || !IsHeaderValue(value->as_string().str)) {
      t.Expect(*value, sub, "a string without line breaks");
    } else {
      out.emplace_back(name, value->as_string().str);
    }
  }
}

void ReadExpectation(Table& scenario, const Value& v, Issues& issues, Expectation& out) {
  if (!v.is_table()) {
    return scenario.Expect(v, "expect", "a table such as { status = 200, body = \"hello\\n\" }");
  }
  Table expect(v, scenario.Path("expect"), {"status", "body", "headers"}, issues);
  if (const Value* x = expect.Require("status", "an HTTP status such as 200")) {
    if (auto n = ReadInt(expect, "status", *x, 100, 599, "an HTTP status from 100 to 599")) {
      out.status = *n;
    }
  }
  if (const Value* x = expect.Get("body")) out.body = ReadString(expect, "body", *x);
  if (const Value* x = expect.Get("headers")) ReadHeaders(expect, *x, out.headers);
}

}  // namespace

void ReadScenario(const Value& item, std::string label, Issues& issues, ScenarioDef& out) {
  Table s(item, std::move(label), {"name", "method", "path", "headers", "body", "expect"}, issues);
  out.line = static_cast<int>(s.line());
  if (const Value* v = s.Require("name", "a name such as \"hello\"")) {
    if (auto name = ReadName(s, "name", *v)) out.name = *name;
  }
  if (const Value* v = s.Get("method")) {
    if (v->is_string() && IsMethod(v->as_string().str)) {
      out.method = v->as_string().str;
    } else {
      s.Expect(*v, "method", "an HTTP method in capitals such as \"GET\"");
    }
  }
  if (const Value* v = s.Require("path", "a path such as \"/\"")) {
    if (auto path = ReadPath(s, "path", *v)) out.path = *path;
  }
  if (const Value* v = s.Get("headers")) ReadHeaders(s, *v, out.headers);
  if (const Value* v = s.Get("body")) {
    if (auto body = ReadString(s, "body", *v)) out.body = *body;
  }
  if (const Value* v = s.Require("expect", "a table such as { status = 200 }")) {
    ReadExpectation(s, *v, issues, out.expect);
  }
}

std::optional<double> ReadRate(Table& t, std::string_view sub, const Value& v) {
  double rate = -1;
  if (v.is_floating()) rate = v.as_floating();
  if (v.is_integer()) rate = static_cast<double>(v.as_integer());
  // Written so that NaN fails too; toml11 saturates huge integers, which fail the bound.
  if (rate > 0 && rate <= 1e7) return rate;
  t.Expect(v, sub, "a positive number of requests per second up to 10000000");
  return std::nullopt;
}

void ReadNoise(const Value& v, Issues& issues, NoiseSpec& out) {
  Table noise(v, "noise", {"target", "scenario", "windows", "connections", "rate"}, issues);
  out.line = static_cast<int>(noise.line());
  if (const Value* x = noise.Require("target", "the name of a [[target]], such as \"nginx\"")) {
    if (auto name = ReadName(noise, "target", *x)) out.target = *name;
  }
  if (const Value* x = noise.Require("scenario", "the name of a [[scenario]], such as \"hello\"")) {
    if (auto name = ReadName(noise, "scenario", *x)) out.scenario = *name;
  }
  if (const Value* x = noise.Get("windows")) {
    if (auto n = ReadInt(noise, "windows", *x, 2, 100, "an integer from 2 to 100"))
      out.windows = *n;
  }
  const Value* connections = noise.Get("connections");
  if (connections != nullptr) {
    if (auto n = ReadInt(noise, "connections", *connections, 1, 100000,
                         "a positive integer up to 100000")) {
      out.level.connections = *n;
    }
  }
  if (const Value* x = noise.Get("rate")) {
    if (connections != nullptr) {
      noise.Expect(*x, "rate", "connections or rate, not both");
    } else if (auto rate = ReadRate(noise, "rate", *x)) {
      out.level.rate = *rate;
    }
  }
}

namespace {

const Value* Entry(const Value& table, const std::string& key) {
  const auto& entries = table.as_table();
  auto it = entries.find(key);
  return it == entries.end() ? nullptr : &it->second;
}

template <typename T, typename Show>
std::string ListOf(const std::vector<T>& items, Show show) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + show(item);
  return out.empty() ? "none" : out;
}

}  // namespace

void CheckNoise(const Value& v, Issues& issues, Campaign& c) {
  NoiseSpec& noise = *c.noise;
  auto fail = [&](const std::string& key, const std::string& form, const std::string& names) {
    const Value& at = *Entry(v, key);
    issues.Add(at, "noise." + key + ": expected " + form + " (" + names + "), got " + Describe(at));
  };
  if (c.FindTarget(noise.target) == nullptr) {
    fail("target", "the name of a [[target]]",
         ListOf(c.targets, [](const TargetDef& t) { return t.name; }));
  }
  // Negatives are not measured, so they cannot be a noise cell.
  if (c.FindScenario(noise.scenario) == nullptr) {
    fail("scenario", "the name of a [[scenario]]",
         ListOf(c.scenarios, [](const ScenarioDef& s) { return s.name; }));
  }
  if (noise.level.connections > 0) {
    noise.level.tool = c.load_tools.front();  // the noise floor of the first tool's windows
    if (std::find(c.connections.begin(), c.connections.end(), noise.level.connections) ==
        c.connections.end()) {
      fail("connections", "one of matrix.connections",
           ListOf(c.connections, [](int n) { return std::to_string(n); }));
    }
  } else if (noise.level.rate > 0) {
    noise.level.connections = c.open_connections;
    if (std::find(c.rates.begin(), c.rates.end(), noise.level.rate) == c.rates.end()) {
      fail("rate", "one of matrix.rates", ListOf(c.rates, [&](double rate) {
             return LoadLevelLabel({c.open_connections, rate, "benchlab"}).substr(1);
           }));
    }
  } else if (auto levels = c.LoadLevels(); !levels.empty()) {
    noise.level = levels.front();
  }
}

}  // namespace benchlab::config
