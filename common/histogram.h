// Histogram: an HDR-style log-linear latency histogram in microseconds. It covers 1 us to at
// least 100 s (values above the top are clamped into the top bucket and counted as such) with
// three significant digits: any recorded value is reported within 0.1% of itself. Recording is
// O(1) and never allocates; histograms merge exactly across threads and agents and serialise
// into the window record. Not thread-safe: each thread owns its own and they merge at the end.
#pragma once

#include <bit>
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
  // recorded as HighestTrackable() and counted in Clamped(). Inline: it is on the load path.
  void Record(uint64_t value_us) {
    if (value_us > kHighestTrackable) return RecordN(value_us, 1);
    ++counts_[IndexOf(value_us)];
    ++total_;
    if (value_us < min_) min_ = value_us;
    if (value_us > max_) max_ = value_us;
    sum_ += value_us;
  }
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

  static uint64_t HighestTrackable() { return kHighestTrackable; }

  // A bucket: the values [low_us, high_us] it holds and how many were recorded there.
  struct Bucket {
    uint64_t low_us = 0;
    uint64_t high_us = 0;
    uint64_t count = 0;
  };
  // The non-empty buckets in increasing order of value (for charts of the distribution).
  std::vector<Bucket> NonEmptyBuckets() const;

  // A compact, versioned text form ("h1:" + sparse index:count pairs) for the store and the wire.
  std::string Serialize() const;
  static Result<Histogram> Deserialize(std::string_view text);

 private:
  // The layout is HdrHistogram's with lowest discernible value 1 and 3 significant figures:
  // 2048 sub-buckets per power of two, of which the upper half (1024) is new in each bucket.
  // Every bucket is 1024 values wide relative to its width, so the relative error is <= 1/1024.
  static constexpr int kSubBucketHalfCountMagnitude = 10;
  static constexpr uint64_t kSubBucketCount = uint64_t{1} << (kSubBucketHalfCountMagnitude + 1);
  static constexpr uint64_t kSubBucketHalfCount = kSubBucketCount / 2;
  static constexpr uint64_t kSubBucketMask = kSubBucketCount - 1;
  // Buckets needed so that the top one reaches 2^27 - 1 us (about 134 s), past the 100 s promise.
  static constexpr int kBucketCount = 17;
  static constexpr uint64_t kHighestTrackable = (kSubBucketCount << (kBucketCount - 1)) - 1;
  static constexpr size_t kCountsLen = (kBucketCount + 1) * kSubBucketHalfCount;
  static constexpr int kLeadingZeroCountBase = 64 - kSubBucketHalfCountMagnitude - 1;
  static_assert(kHighestTrackable >= 100'000'000, "the histogram must reach 100 s");

  static size_t IndexOf(uint64_t value) {
    const int bucket = kLeadingZeroCountBase - std::countl_zero(value | kSubBucketMask);
    const uint64_t sub_bucket = value >> bucket;
    return (static_cast<size_t>(bucket + 1) << kSubBucketHalfCountMagnitude) +
           static_cast<size_t>(sub_bucket - kSubBucketHalfCount);
  }
  uint64_t ValueOf(size_t index) const;            // lowest value of the bucket
  uint64_t HighestEquivalent(size_t index) const;  // highest value of the bucket

  std::vector<uint64_t> counts_;
  uint64_t total_ = 0;
  uint64_t clamped_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  long double sum_ = 0;
};

}  // namespace benchlab
