// The campaign file v1 schema: which keys exist, their forms and defaults (docs/campaign.md).
// [[target]], [[scenario]] and [[negative]] tables are read in campaign_tables.cc.
#include "coordinator/campaign.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "coordinator/campaign_tables.h"

namespace benchlab {
namespace {

using config::Describe;
using config::Issues;
using config::NameBook;
using config::Table;
using config::Value;
namespace fields = config;

// Campaign files are written by hand; anything larger is a mistake, and the text is stored with
// every campaign.
constexpr size_t kMaxCampaignBytes = 1 << 20;

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

void ReadMatrix(const Value& v, Issues& issues, Campaign& c) {
  Table matrix(v, "matrix", {"connections", "rounds", "order", "warmup", "duration"}, issues);
  if (const Value* x = matrix.Require("connections", "a list such as [16, 64]")) {
    ReadConnections(matrix, *x, c.connections);
  }
  if (const Value* x = matrix.Get("rounds")) {
    if (auto n = fields::ReadInt(matrix, "rounds", *x, 1, 1000, "a positive integer up to 1000")) {
      c.rounds = *n;
    }
  }
  if (const Value* x = matrix.Get("order")) {
    if (x->is_string() && x->as_string().str == "rotate") {
      c.order = Order::kRotate;
    } else if (x->is_string() && x->as_string().str == "fixed") {
      c.order = Order::kFixed;
    } else {
      matrix.Expect(*x, "order", "\"rotate\" or \"fixed\"");
    }
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

void ReadLoad(const Value& v, Issues& issues, Campaign& c) {
  Table load(v, "load", {"threads", "cpus"}, issues);
  if (const Value* x = load.Get("threads")) {
    if (auto n = fields::ReadInt(load, "threads", *x, 1, 1024, "a positive integer up to 1024")) {
      c.load_threads = *n;
    }
  }
  if (const Value* x = load.Get("cpus")) {
    if (auto cpus = fields::ReadCpus(load, "cpus", *x)) c.load_cpus = *cpus;
  }
}

void ReadGates(const Value& v, Issues& issues, Campaign& c) {
  Table gates(v, "gates", {"error_rate_max"}, issues);
  if (const Value* x = gates.Get("error_rate_max")) {
    double rate = -1;
    if (x->is_floating()) rate = x->as_floating();
    if (x->is_integer()) rate = static_cast<double>(x->as_integer());
    // Written so that NaN fails too.
    if (rate >= 0 && rate <= 1) {
      c.error_rate_max = rate;
    } else {
      gates.Expect(*x, "error_rate_max", "a fraction from 0 to 1 such as 0.01");
    }
  }
}

// [matrix], [load] and [gates] are tables; `matrix = 5` or [[matrix]] is reported as such.
const Value* SubTable(Table& root, const Value* v, std::string_view key) {
  if (v == nullptr) return nullptr;
  if (v->is_table()) return v;
  root.Expect(*v, key, "a table ([" + std::string(key) + "])");
  return nullptr;
}

void ReadCampaign(const Value& doc, Issues& issues, Campaign& c) {
  Table root(doc, "",
             {"name", "baseline", "matrix", "load", "gates", "target", "scenario", "negative"},
             issues);
  if (const Value* v = root.Require("name", "a name such as \"hello\"")) {
    if (auto name = fields::ReadName(root, "name", *v)) c.name = *name;
  }
  const Value* baseline = root.Require("baseline", "the name of a [[target]], such as \"nginx\"");
  if (baseline != nullptr) {
    if (auto name = fields::ReadName(root, "baseline", *baseline)) c.baseline = *name;
  }
  if (auto* v = SubTable(
          root, root.Require("matrix", "a [matrix] table with connections = [16, 64]"), "matrix")) {
    ReadMatrix(*v, issues, c);
  }
  if (auto* v = SubTable(root, root.Get("load"), "load")) ReadLoad(*v, issues, c);
  if (auto* v = SubTable(root, root.Get("gates"), "gates")) ReadGates(*v, issues, c);

  NameBook target_names;
  if (const Value* v = root.Require("target", "one or more [[target]] tables")) {
    for (const auto& [label, item] : fields::TablesOf(root, *v, "target", target_names, issues)) {
      fields::ReadTarget(*item, label, issues, c.campaign_dir, c.targets.emplace_back());
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
    std::string names;
    for (const auto& t : c.targets) names += (names.empty() ? "" : ", ") + t.name;
    root.Fail(*baseline, "baseline",
              "expected the name of a [[target]] (" + names + "), got " + Describe(*baseline));
  }
}

}  // namespace

const TargetDef* Campaign::FindTarget(const std::string& target_name) const {
  for (const auto& t : targets) {
    if (t.name == target_name) return &t;
  }
  return nullptr;
}

const ScenarioDef* Campaign::FindScenario(const std::string& scenario_name) const {
  for (const auto& s : scenarios) {
    if (s.name == scenario_name) return &s;
  }
  return nullptr;
}

Result<Campaign> ParseCampaignText(const std::string& text, const std::string& source_name,
                                   const std::string& campaign_dir) {
  if (text.size() > kMaxCampaignBytes) {
    return Status::InvalidArgument(source_name +
                                   ": expected a campaign file of at most 1 MiB, got " +
                                   std::to_string(text.size()) + " bytes");
  }
  auto doc = config::ParseToml(text, source_name);
  if (!doc.ok()) return doc.status();
  Campaign c;
  c.source_name = source_name;
  c.campaign_dir = campaign_dir;
  c.text = text;
  Issues issues(source_name);
  ReadCampaign(*doc, issues, c);
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

Status RequireCommands(const Campaign& campaign) {
  for (const auto& t : campaign.targets) {
    if (!t.command.empty()) continue;
    return Status::InvalidArgument(campaign.source_name + ":" + std::to_string(t.line) +
                                   ": target " + config::Quote(t.name) +
                                   ".command: expected a list of strings (argv, no shell), " +
                                   "got nothing");
  }
  return Status::Ok();
}

}  // namespace benchlab
