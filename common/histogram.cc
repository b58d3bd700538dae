#include "common/histogram.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace benchlab {

namespace {

// Parses an unsigned decimal that must span all of `text`.
bool ParseU64(std::string_view text, uint64_t& out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

Histogram::Histogram() : counts_(kCountsLen, 0) {}

uint64_t Histogram::ValueOf(size_t index) const {
  int bucket = static_cast<int>(index >> kSubBucketHalfCountMagnitude) - 1;
  uint64_t sub_bucket = (index & (kSubBucketHalfCount - 1)) + kSubBucketHalfCount;
  if (bucket < 0) {
    sub_bucket -= kSubBucketHalfCount;
    bucket = 0;
  }
  return sub_bucket << bucket;
}

uint64_t Histogram::HighestEquivalent(size_t index) const {
  const int bucket = std::max(0, static_cast<int>(index >> kSubBucketHalfCountMagnitude) - 1);
  return ValueOf(index) + (uint64_t{1} << bucket) - 1;
}

void Histogram::RecordN(uint64_t value_us, uint64_t count) {
  if (count == 0) return;
  if (value_us > kHighestTrackable) {
    value_us = kHighestTrackable;
    clamped_ += count;
  }
  counts_[IndexOf(value_us)] += count;
  total_ += count;
  min_ = std::min(min_, value_us);
  max_ = std::max(max_, value_us);
  sum_ += static_cast<long double>(value_us) * count;
}

void Histogram::Merge(const Histogram& other) {
  if (other.total_ == 0) return;
  for (size_t i = 0; i < kCountsLen; ++i) counts_[i] += other.counts_[i];
  total_ += other.total_;
  clamped_ += other.clamped_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

void Histogram::Reset() {
  // Only the buckets between min and max can hold counts, so a sparse histogram resets fast.
  if (total_ > 0) {
    std::fill(counts_.begin() + static_cast<long>(IndexOf(min_)),
              counts_.begin() + static_cast<long>(IndexOf(max_)) + 1, 0);
  }
  total_ = 0;
  clamped_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
  sum_ = 0;
}

double Histogram::Mean() const {
  return total_ ? static_cast<double>(sum_ / static_cast<long double>(total_)) : 0.0;
}

uint64_t Histogram::ValueAtPercentile(double pct) const {
  if (total_ == 0) return 0;
  if (!(pct > 0)) return Min();  // also catches NaN
  if (pct >= 100) return Max();
  // The rank of the value sought, 1-based. A product like 99.9% of 1000 can come out a hair
  // above 999 in floating point, which must not push the rank to 1000.
  const long double exact = static_cast<long double>(pct) / 100 * total_;
  uint64_t rank = static_cast<uint64_t>(std::ceil(exact - exact * 1e-12L));
  rank = std::clamp<uint64_t>(rank, 1, total_);
  uint64_t seen = 0;
  for (size_t i = 0; i < kCountsLen; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min(HighestEquivalent(i), max_);
  }
  return max_;
}

// Form: "h1:<clamped>,<min>,<max>,<sum>;<index>:<count>,<index>:<count>..." with indices
// ascending and only non-zero counts. The total is the sum of the counts; min, max and sum
// travel explicitly so a round trip is exact, not just exact to bucket precision.
std::string Histogram::Serialize() const {
  std::string out = "h1:";
  char sum_text[64];
  std::snprintf(sum_text, sizeof(sum_text), "%.0Lf", sum_);
  out += std::to_string(clamped_) + "," + std::to_string(Min()) + "," + std::to_string(max_) + "," +
         sum_text + ";";
  bool first = true;
  for (size_t i = 0; i < kCountsLen; ++i) {
    if (counts_[i] == 0) continue;
    if (!first) out += ',';
    first = false;
    out += std::to_string(i);
    out += ':';
    out += std::to_string(counts_[i]);
  }
  return out;
}

Result<Histogram> Histogram::Deserialize(std::string_view text) {
  auto bad = [&](const char* why) {
    std::string shown(text.substr(0, 80));
    if (text.size() > 80) shown += "...";
    return Status::InvalidArgument(std::string("malformed histogram (") + why + "): \"" + shown +
                                   "\"");
  };
  if (text.substr(0, 3) != "h1:") return bad("expected the \"h1:\" version prefix");
  std::string_view rest = text.substr(3);
  const size_t semi = rest.find(';');
  if (semi == std::string_view::npos) return bad("missing ';' after the summary");
  std::string_view summary = rest.substr(0, semi);
  std::string_view buckets = rest.substr(semi + 1);

  // clamped,min,max as integers; the sum is integer-valued but may exceed 2^64 in principle,
  // so it is read as a long double after checking it is plain digits.
  uint64_t fields[3];
  for (int f = 0; f < 3; ++f) {
    const size_t comma = summary.find(',');
    if (comma == std::string_view::npos || !ParseU64(summary.substr(0, comma), fields[f])) {
      return bad("summary must be clamped,min,max,sum");
    }
    summary = summary.substr(comma + 1);
  }
  if (summary.empty() || summary.size() > 40 ||
      summary.find_first_not_of("0123456789") != std::string_view::npos) {
    return bad("summary must be clamped,min,max,sum");
  }
  const long double sum = std::strtold(std::string(summary).c_str(), nullptr);

  Histogram h;
  size_t prev = 0;
  bool any = false;
  while (!buckets.empty()) {
    const size_t comma = buckets.find(',');
    std::string_view pair = buckets.substr(0, comma);
    const size_t colon = pair.find(':');
    uint64_t index = 0, count = 0;
    if (colon == std::string_view::npos || !ParseU64(pair.substr(0, colon), index) ||
        !ParseU64(pair.substr(colon + 1), count)) {
      return bad("buckets must be index:count pairs");
    }
    if (index >= kCountsLen) return bad("bucket index out of range");
    if (any && index <= prev) return bad("bucket indices must ascend");
    if (count == 0) return bad("zero count listed");
    if (h.total_ + count < h.total_) return bad("count overflow");
    h.counts_[index] = count;
    h.total_ += count;
    prev = index;
    any = true;
    if (comma == std::string_view::npos) break;
    buckets = buckets.substr(comma + 1);
    if (buckets.empty()) return bad("trailing ','");
  }

  const uint64_t clamped = fields[0], min = fields[1], max = fields[2];
  if (h.total_ == 0) {
    if (clamped != 0 || min != 0 || max != 0 || sum != 0) {
      return bad("empty histogram with a non-zero summary");
    }
    return h;
  }
  if (min > max || max > kHighestTrackable || clamped > h.total_) {
    return bad("summary inconsistent with the buckets");
  }
  size_t lowest = 0;
  while (h.counts_[lowest] == 0) ++lowest;
  if (h.IndexOf(min) != lowest || h.IndexOf(max) != prev ||
      (clamped > 0 && max != kHighestTrackable)) {
    return bad("min or max outside their buckets");
  }
  h.clamped_ = clamped;
  h.min_ = min;
  h.max_ = max;
  h.sum_ = sum;
  return h;
}

std::vector<Histogram::Bucket> Histogram::NonEmptyBuckets() const {
  std::vector<Bucket> out;
  for (size_t i = 0; i < kCountsLen; ++i) {
    if (counts_[i] != 0) out.push_back({ValueOf(i), HighestEquivalent(i), counts_[i]});
  }
  return out;
}

}  // namespace benchlab
