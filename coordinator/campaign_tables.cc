// [[scenario]] and [[negative]] tables of a campaign file (docs/campaign.md).
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

}  // namespace benchlab::config
