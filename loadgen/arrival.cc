#include "loadgen/arrival.h"

#include <cmath>

namespace benchlab {

namespace {

// splitmix64: a tiny, well-mixed generator; its whole state is one word.
uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

int64_t ConstantSlotNs(int64_t t0_ns, double rate, uint64_t k) {
  // k * 1e9 is exact in a long double's 64-bit mantissa up to k ~ 1.8e10 (five hours at 1M/s),
  // and one division per slot means no error accumulates over a run.
  const long double offset = static_cast<long double>(k) * 1e9L / static_cast<long double>(rate);
  return t0_ns + static_cast<int64_t>(std::floor(offset));
}

ArrivalSchedule::ArrivalSchedule(Arrival arrival, double rate, int64_t t0_ns, int worker,
                                 int workers, uint64_t seed)
    : arrival_(arrival),
      rate_(rate),
      t0_ns_(t0_ns),
      k_(static_cast<uint64_t>(worker)),
      stride_(static_cast<uint64_t>(workers)),
      mean_gap_ns_(1e9L * workers / static_cast<long double>(rate)),
      rng_(seed ^ (0xd1b54a32d192ed03ull * (static_cast<uint64_t>(worker) + 1))) {}

double ArrivalSchedule::UniformOpen() {
  // 53 random bits into (0, 1]: never 0, so the logarithm below is finite.
  return static_cast<double>((SplitMix64(rng_) >> 11) + 1) * 0x1.0p-53;
}

int64_t ArrivalSchedule::Next() {
  if (arrival_ == Arrival::kConstant) {
    const int64_t t = ConstantSlotNs(t0_ns_, rate_, k_);
    k_ += stride_;
    return t;
  }
  poisson_ns_ += -std::log(UniformOpen()) * mean_gap_ns_;
  return t0_ns_ + static_cast<int64_t>(poisson_ns_);
}

}  // namespace benchlab
