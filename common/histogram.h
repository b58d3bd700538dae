// Histogram: an HDR-style log-linear latency histogram in microseconds. It covers 1 us to at
// least 100 s (values above the top are clamped into the top bucket and counted as such) with
// three significant digits: any recorded value is reported within 0.1% of itself. Recording is
// O(1) and never allocates; histograms merge exactly across threads and agents and serialise
// into the window record. Not thread-safe: each thread owns its own and they merge at the end.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace benchlab {

class Histogram {
 public:
  Histogram();

  // Records one value (microseconds). 0 is recorded as 0; values above HighestTrackable() are
  // recorded as HighestTrackable() and counted in Clamped().
  void Record(uint64_t value_us) { RecordN(value_us, 1); }
  void RecordN(uint64_t value_us, uint64_t count);
  void Merge(const Histogram& other);
  void Reset();

  uint64_t Count() const { return total_; }
  uint64_t Clamped() const { return clamped_; }
  // Exact min and max of the recorded values (after clamping); 0 when empty.
  uint64_t Min() const { return total_ ? min_ : 0; }
  uint64_t Max() const { return max_; }
  double Mean() const;
  // The value at a percentile in [0, 100], as HdrHistogram defines it: the smallest recorded
  // value v (to bucket precision) such that at least pct% of values are <= v. 0 when empty.
  uint64_t ValueAtPercentile(double pct) const;

  static uint64_t HighestTrackable();

  // A compact, versioned text form ("h1:" + sparse index:count pairs) for the store and the wire.
  std::string Serialize() const;
  static Result<Histogram> Deserialize(std::string_view text);

 private:
  size_t IndexOf(uint64_t value) const;
  uint64_t ValueOf(size_t index) const;         // lowest value of the bucket
  uint64_t HighestEquivalent(size_t index) const;  // highest value of the bucket

  std::vector<uint64_t> counts_;
  uint64_t total_ = 0;
  uint64_t clamped_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  long double sum_ = 0;
};

}  // namespace benchlab
