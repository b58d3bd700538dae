// ArrivalSchedule: the open loop's intended send times, as pure functions of the start instant,
// the rate and the worker's place among the workers (no clock, no I/O). Request k of the global
// constant schedule is due at t0 + k/R; worker i of n takes slots i, i+n, i+2n, ... Poisson
// arrivals give each worker its own Poisson process at R/n from a seeded generator, so the
// workers together form one Poisson process at R. One schedule per worker thread; not shared.
#pragma once

#include <cstdint>

#include "loadgen/load.h"

namespace benchlab {

// t0 + k * 1e9 / rate nanoseconds, rounded down; exact whenever the quotient is an integer.
int64_t ConstantSlotNs(int64_t t0_ns, double rate, uint64_t k);

class ArrivalSchedule {
 public:
  ArrivalSchedule(Arrival arrival, double rate, int64_t t0_ns, int worker, int workers,
                  uint64_t seed);

  // The intended time of this worker's next slot. Never decreases.
  int64_t Next();

 private:
  double UniformOpen();  // in (0, 1]

  Arrival arrival_;
  double rate_;
  int64_t t0_ns_;
  uint64_t k_;                  // constant: the next global slot index
  uint64_t stride_;             // constant: number of workers
  long double poisson_ns_ = 0;  // Poisson: time of the last slot, since t0
  long double mean_gap_ns_ = 0;
  uint64_t rng_;
};

}  // namespace benchlab
