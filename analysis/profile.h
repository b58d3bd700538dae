// What CPU profiles say per request (docs/profiles.md): CPU microseconds per request per
// function in a round, and the difference between two targets (or builds) over paired rounds with
// an interval per function. Pure functions without I/O; any thread may call them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/folded_profile.h"
#include "common/status.h"

namespace benchlab {

// One round's profile of one target with what turns samples into time: the CPU seconds the
// lab measured for the target over the same interval (cgroup cpu.stat) and its requests.
struct ProfiledRound {
  FoldedProfile profile;
  double cpu_s = 0;
  double requests = 0;
};

// µs per request for a function's samples in a round: its share of the round's samples times
// the measured CPU per request. The profile gives shares, the lab's CPU accounting the whole,
// so the functions of a round sum to its CPU µs per request exactly. NaN for a round without
// samples or requests.
double MicrosPerRequest(uint64_t function_samples, const ProfiledRound& round);

// One function across paired rounds of a base and a new target (or build). The headline is self
// time (samples that end in the function): self times add up to the whole CPU per request, so
// the functions' differences add up to the whole difference and their shares to 1, and the
// function whose own code grew comes first, ahead of the callers that merely hold it.
struct FunctionDiff {
  std::string function;
  double base_us = 0;   // mean over rounds of self µs per request on the base side
  double new_us = 0;    // the same on the new side
  double delta_us = 0;  // mean of the rounds' differences in self µs per request, new - base
  double low = 0;       // its two-sided interval at the level asked (Student t over rounds)
  double high = 0;
  double share = 0;  // delta_us / the whole difference in CPU µs per request (NaN if none)
  // Total (inclusive) time: the function and everything it calls.
  double base_total_us = 0;
  double new_total_us = 0;
  double total_delta_us = 0;
  int rounds = 0;
  bool only_base = false;  // never sampled on the new side
  bool only_new = false;   // never sampled on the base side
};

struct ProfileDiff {
  double base_us = 0;  // whole CPU µs per request, mean over rounds
  double new_us = 0;
  double delta_us = 0;  // mean of paired differences
  double low = 0;
  double high = 0;
  int rounds = 0;
  std::vector<FunctionDiff> functions;  // by |delta_us|, then |total_delta_us|, largest first
};

// Pairs base[i] with new_rounds[i] (the i-th round of each; the shorter list decides how many)
// and compares every function sampled on either side by self (and total) µs per request. A function
// with fewer than `min_samples` samples over both sides is left out (noise). Intervals need two
// rounds or more; with one, low and high are NaN. InvalidArgument when no round pairs.
Result<ProfileDiff> DiffProfiles(const std::vector<ProfiledRound>& base,
                                 const std::vector<ProfiledRound>& new_rounds, double level = 0.95,
                                 uint64_t min_samples = 5);

}  // namespace benchlab
