// The request mix and response checks, as pure functions for the CLI and the engine:
// ParseRequestMix reads a mix file (JSON Lines, one weighted request per line, see
// docs/load.md), WeightedCycle turns weights into a fixed interleaved order that the workers
// walk without randomness or allocation, and ParseStatusList reads "--expect-status 200,3xx".
// Thread-safe: no state.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "loadgen/load.h"

namespace benchlab {

// Upper bound on the sum of a mix's weights, which is the length of its cycle.
inline constexpr uint64_t kMaxMixWeightSum = 1'000'000;

// `origin` names the file in error messages ("mix.jsonl:3: weight must be ...").
Result<std::vector<MixRequest>> ParseRequestMix(std::string_view text, std::string_view origin);

// Smooth weighted round-robin: a sequence of indices of length sum(weights) in which index i
// appears weights[i] times, spread as evenly as possible ({3, 1} gives 0 0 1 0, never 0 0 0 1).
// Every weight must be >= 1 and the sum at most kMaxMixWeightSum.
std::vector<uint32_t> WeightedCycle(const std::vector<uint32_t>& weights);

// "200", "200,204", "2xx", "200-299,404": status codes, sorted, without duplicates.
Result<std::vector<int>> ParseStatusList(std::string_view text);

}  // namespace benchlab
