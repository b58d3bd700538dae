// Gates: validity rules applied to a measured window. Each failing gate yields one reason that
// names the gate, the measured value and the threshold ("error_rate: 2.31% > 1.00% ..."), so a
// person can see why a window was judged invalid. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace benchlab {

struct GateInputs {
  uint64_t requests = 0;          // responses received in the measured interval
  uint64_t transport_errors = 0;  // connect, read, write, timeout, parse
  uint64_t status_mismatches = 0; // responses whose status is not the scenario's expected one
};

struct GateThresholds {
  double error_rate_max = 0.01;
};

// (transport errors + status mismatches) / (responses + transport errors); 0 with no traffic.
double ErrorRate(const GateInputs& in);

// Reasons the window is invalid; empty when every gate passes.
std::vector<std::string> EvaluateGates(const GateInputs& in, const GateThresholds& thresholds);

}  // namespace benchlab
