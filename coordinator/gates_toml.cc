#include "coordinator/gates_toml.h"

#include <charconv>
#include <cmath>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/config_fields.h"
#include "coordinator/gate_table.h"

namespace benchlab {
namespace {

using config::Table;
using config::Value;

constexpr std::pair<GateMode, std::string_view> kModeNames[] = {{GateMode::kEnforce, "enforce"},
                                                                {GateMode::kWarn, "warn"}};

// Visits a GateKey's field with one lambda per type.
template <class... F>
struct GateFieldVisitor : F... {
  using F::operator()...;
};
template <class... F>
GateFieldVisitor(F...) -> GateFieldVisitor<F...>;

// The shortest decimal that reads back as `v`, never in exponent form: 0.75, 1000000000.
std::string Decimal(double v) {
  char buf[400];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// An integer or a float in [lo, hi]; NaN and infinities fail the range check.
std::optional<double> ReadNumber(Table& t, std::string_view sub, const Value& v, double lo,
                                 double hi, std::string_view form) {
  double x = std::nan("");
  if (v.is_floating()) x = v.as_floating();
  if (v.is_integer()) x = static_cast<double>(v.as_integer());
  if (x >= lo && x <= hi) return x;
  t.Expect(v, sub, form);
  return std::nullopt;
}

std::optional<int> ReadWhole(Table& t, const GateKey& key, const Value& v) {
  return config::ReadInt(t, key.name, v, static_cast<int64_t>(key.min),
                         static_cast<int64_t>(key.max), GateKeyForm(key));
}

// probe.NAME.max = N, or probe.NAME = { max = N }, for each probe name.
void ReadProbeBounds(Table& g, const GateKey& key, const Value& x, config::Issues& issues,
                     std::map<std::string, double>& out) {
  if (!x.is_table()) {
    g.Expect(x, key.name, GateKeyForm(key));
    return;
  }
  for (const auto& [name, bound] : config::EntriesInFileOrder(x)) {
    const std::string sub = "probe." + config::KeyForPath(name);
    if (!config::IsName(name)) {
      g.Fail(*bound, sub, "expected a probe name of lowercase letters, digits and '-'");
      continue;
    }
    if (!bound->is_table()) {
      g.Expect(*bound, sub, "a table such as { max = 0 }");
      continue;
    }
    Table b(*bound, "gates." + sub, {"max"}, issues);
    const Value* max = b.Require("max", "a number such as 0");
    if (max == nullptr) continue;
    const double n = max->is_integer() ? static_cast<double>(max->as_integer())
                                       : (max->is_floating() ? max->as_floating() : -1);
    if ((max->is_integer() || max->is_floating()) && n >= 0) {
      out[name] = n;
    } else {
      b.Expect(*max, "max", "a number of 0 or more");
    }
  }
}

// One key's value into the GateConfig field its entry binds it to; the form the field's type
// asks for, else a problem in `issues`.
void ReadKey(Table& g, const GateKey& key, const Value& x, config::Issues& issues,
             GateConfig& out) {
  std::visit(GateFieldVisitor{
                 [&](const GateFieldRef<bool>& f) {
                   if (x.is_boolean()) {
                     f.get(out) = x.as_boolean() != key.inverted;
                   } else {
                     g.Expect(x, key.name, GateKeyForm(key));
                   }
                 },
                 [&](const GateFieldRef<double>& f) {
                   if (auto n = ReadNumber(g, key.name, x, key.min, key.max, GateKeyForm(key))) {
                     f.get(out) = *n;
                   }
                 },
                 [&](const GateFieldRef<uint64_t>& f) {
                   if (auto n = ReadWhole(g, key, x)) f.get(out) = static_cast<uint64_t>(*n);
                 },
                 [&](const GateFieldRef<std::optional<int>>& f) {
                   if (auto n = ReadWhole(g, key, x)) f.get(out) = *n;
                 },
                 [&](const GateFieldRef<GateMode>& f) {
                   std::optional<GateMode> mode;
                   if (x.is_string()) mode = ParseGateMode(x.as_string().str);
                   if (mode) {
                     f.get(out) = *mode;
                   } else {
                     g.Expect(x, key.name, GateKeyForm(key));
                   }
                 },
                 [&](const GateFieldRef<std::map<std::string, double>>& f) {
                   ReadProbeBounds(g, key, x, issues, f.get(out));
                 },
             },
             key.field);
}

}  // namespace

std::string_view GateModeName(GateMode mode) {
  for (const auto& [m, name] : kModeNames) {
    if (m == mode) return name;
  }
  return "enforce";
}

std::optional<GateMode> ParseGateMode(std::string_view text) {
  for (const auto& [mode, name] : kModeNames) {
    if (name == text) return mode;
  }
  return std::nullopt;
}

std::string GateKeyForm(const GateKey& key) {
  return std::visit(
      GateFieldVisitor{
          [](const GateFieldRef<bool>&) -> std::string { return "true or false"; },
          [](const GateFieldRef<GateMode>&) -> std::string {
            std::string form;
            for (const auto& [mode, name] : kModeNames) {
              form += (form.empty() ? "\"" : " or \"") + std::string(name) + "\"";
            }
            return form;
          },
          [](const GateFieldRef<std::map<std::string, double>>&) -> std::string {
            return "probe.NAME.max = N: a table of probe names, each { max = N }";
          },
          [&](const auto&) -> std::string {
            return "a " + std::string(key.noun) + " from " + Decimal(key.min) + " to " +
                   Decimal(key.max) +
                   (key.example ? " such as " + Decimal(*key.example) : std::string());
          },
      },
      key.field);
}

std::optional<std::string> GateKeyDefault(const GateKey& key) {
  const GateConfig c;
  return std::visit(
      GateFieldVisitor{
          [&](const GateFieldRef<bool>& f) -> std::optional<std::string> {
            return f.read(c) != key.inverted ? "true" : "false";
          },
          [&](const GateFieldRef<double>& f) -> std::optional<std::string> {
            return Decimal(f.read(c));
          },
          [&](const GateFieldRef<uint64_t>& f) -> std::optional<std::string> {
            return std::to_string(f.read(c));
          },
          [&](const GateFieldRef<std::optional<int>>& f) -> std::optional<std::string> {
            if (!f.read(c)) return std::nullopt;
            return std::to_string(*f.read(c));
          },
          [&](const GateFieldRef<GateMode>& f) -> std::optional<std::string> {
            return "\"" + std::string(GateModeName(f.read(c))) + "\"";
          },
          [](const GateFieldRef<std::map<std::string, double>>&) -> std::optional<std::string> {
            return std::nullopt;  // no probe is bounded by default
          },
      },
      key.field);
}

void ReadGatesTable(const config::Value& table, config::Issues& issues, GateConfig& out) {
  if (!table.is_table()) {
    issues.Add(table, "gates: expected a table ([gates]), got " + config::Describe(table));
    return;
  }
  const std::vector<const GateKey*> keys = GatesTableKeys();
  std::vector<std::string_view> names;
  for (const GateKey* key : keys) names.push_back(key->name);
  Table g(table, "gates", names, issues);
  for (const GateKey* key : keys) {
    if (const Value* x = g.Get(key->name)) ReadKey(g, *key, *x, issues, out);
  }
}

}  // namespace benchlab
