#include "analysis/bisect_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/figure.h"
#include "analysis/regressions.h"
#include "common/parse.h"

namespace benchlab {
namespace {

std::string ShortOid(const std::string& oid) { return oid.substr(0, 12); }

nlohmann::json OptionalNumber(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

const BisectStepRow* CulpritStep(const BisectionRecord& record) {
  for (const BisectStepRow& s : record.steps) {
    if (s.oid == record.bisection.culprit) return &s;
  }
  return nullptr;
}

}  // namespace

nlohmann::json BisectionJson(const BisectionRecord& record) {
  const BisectionRow& b = record.bisection;
  const BisectStepRow* culprit = CulpritStep(record);
  nlohmann::json out = {
      {"id", b.id},
      {"created_at", b.created_at},
      {"target", b.target},
      {"cell", b.cell},
      {"figure", b.figure},
      {"good", b.good_oid},
      {"bad", b.bad_oid},
      {"commits", b.commits},
      {"state", b.state},
      {"result", b.result},
      {"culprit", b.culprit.empty() ? nlohmann::json(nullptr) : nlohmann::json(b.culprit)},
      {"culprit_subject", culprit ? nlohmann::json(culprit->subject) : nlohmann::json(nullptr)},
      {"size", OptionalNumber(b.size)},
      {"size_low", OptionalNumber(b.size_low)},
      {"size_high", OptionalNumber(b.size_high)},
      {"confidence", OptionalNumber(b.confidence)},
      {"culprit_campaign",
       b.culprit_campaign.empty() ? nlohmann::json(nullptr) : nlohmann::json(b.culprit_campaign)},
      {"change", b.change_id > 0 ? nlohmann::json(b.change_id) : nlohmann::json(nullptr)},
      {"pair", b.pair.empty() ? nlohmann::json(nullptr) : nlohmann::json(b.pair)}};
  nlohmann::json steps = nlohmann::json::array();
  for (const BisectStepRow& s : record.steps) {
    nlohmann::json figures = nlohmann::json::array();
    for (const auto& f : s.figures) {
      figures.push_back({{"candidate", f[0]}, {"good", f[1]}, {"bad", f[2]}});
    }
    steps.push_back(
        {{"step", s.step},
         {"position", s.position >= 0 ? nlohmann::json(s.position) : nlohmann::json(nullptr)},
         {"oid", s.oid},
         {"subject", s.subject},
         {"build", s.build},
         {"campaigns", s.campaigns},
         {"rounds", s.rounds},
         {"decision", s.decision},
         {"estimate", OptionalNumber(s.estimate)},
         {"low", OptionalNumber(s.low)},
         {"high", OptionalNumber(s.high)},
         {"figures", figures}});
  }
  out["steps"] = steps;
  return out;
}

std::string FormatBisectionText(const BisectionRecord& record) {
  const BisectionRow& b = record.bisection;
  std::string out = StrFormat("bisection %lld: %s on %s, %s, %s..%s (%d commits): %s\n",
                              static_cast<long long>(b.id), b.target.c_str(), b.cell.c_str(),
                              b.figure.c_str(), ShortOid(b.good_oid).c_str(),
                              ShortOid(b.bad_oid).c_str(), b.commits, b.state.c_str());
  for (const BisectStepRow& s : record.steps) {
    std::string figures;
    if (s.estimate && s.low && s.high) {
      figures = StrFormat(", candidate/midpoint %.4f [%.4f, %.4f]", *s.estimate, *s.low, *s.high);
    }
    out += StrFormat("  step %d: %s %s: %s after %d round(s)%s\n", s.step, ShortOid(s.oid).c_str(),
                     s.subject.c_str(), s.decision.c_str(), s.rounds, figures.c_str());
  }
  if (!b.result.empty()) out += b.result + "\n";
  return out;
}

std::string CulpritLine(const BisectionRecord& record) {
  const BisectionRow& b = record.bisection;
  const std::string id = "bisection " + std::to_string(b.id);
  if (b.state == "found" && !b.culprit.empty()) {
    const BisectStepRow* step = CulpritStep(record);
    std::string line = "culprit: " + ShortOid(b.culprit);
    if (step != nullptr) line += " '" + step->subject + "'";
    if (b.size && b.size_low && b.size_high) {
      RatioInterval size;
      size.estimate = *b.size;
      size.low = *b.size_low;
      size.high = *b.size_high;
      const auto metric = ParseFigure(b.figure);
      line += ", " + FormatChangeSize(size) + " " + (metric ? MetricLabel(*metric) : b.figure);
    }
    int measured = 0;
    for (const BisectStepRow& s : record.steps) measured += s.build == "built";
    return line + " (" + id + ", " + std::to_string(measured) +
           (measured == 1 ? " commit" : " commits") + " measured)";
  }
  if (b.state == "running" || b.state == "cancelled") {
    return id + ": " + b.state + ", " + std::to_string(record.steps.size()) + " of " +
           std::to_string(std::max(b.commits - 2, 0)) + " commits between the ends decided";
  }
  return id + ": " + b.state + (b.result.empty() ? "" : ": " + b.result);
}

}  // namespace benchlab
