// How a stored bisection is shown (docs/methodology.md, "Bisection"; docs/cli.md, `benchlab
// bisect --status`; docs/api.md, /api/v1/bisections): its record as JSON, as text, and the one
// line a regression's report gives its culprit. Pure functions of the store's rows.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "coordinator/store.h"

namespace benchlab {

// {"id", "created_at", "target", "cell", "figure", "good", "bad", "commits", "state", "result",
// "culprit", "culprit_subject", "size", "size_low", "size_high", "confidence",
// "culprit_campaign", "change", "steps": [{"step", "position", "oid", "subject", "build",
// "campaigns", "rounds", "decision", "estimate", "low", "high", "figures": [{"candidate", "good",
// "bad"}]}]}; absent numbers are null.
nlohmann::json BisectionJson(const BisectionRecord& record);

// The search's head line, a line per step and its result line.
std::string FormatBisectionText(const BisectionRecord& record);

// What a regression's report says of its bisection, one line:
//   found:        "culprit: 3f2a91c04b7e 'Parse headers twice', +5.8% [+4.1%, +7.6%] CPU µs/req
//                  (bisection 4, 6 commits measured)"
//   otherwise:    "bisection 4: running, 2 of 63 commits decided" or "bisection 4: unsplittable:
//                  ..." (its result line).
std::string CulpritLine(const BisectionRecord& record);

}  // namespace benchlab
