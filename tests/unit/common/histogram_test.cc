#include "common/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace benchlab {
namespace {

const double kPercentiles[] = {0, 0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100};

// The percentile as HdrHistogram defines it, computed exactly from the sorted values: the
// smallest value v such that at least pct% of the values are <= v.
uint64_t ExactPercentile(std::vector<uint64_t> sorted, double pct) {
  std::sort(sorted.begin(), sorted.end());
  if (pct <= 0) return sorted.front();
  const long double exact = static_cast<long double>(pct) / 100 * sorted.size();
  uint64_t rank = static_cast<uint64_t>(std::ceil(exact - exact * 1e-12L));
  rank = std::clamp<uint64_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

// Every percentile within 0.1% of the exact one (and never below it, since the histogram
// reports the top of a bucket), plus exact count, min, max and mean.
void ExpectMatches(const Histogram& h, const std::vector<uint64_t>& values) {
  ASSERT_EQ(h.Count(), values.size());
  EXPECT_EQ(h.Min(), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(h.Max(), *std::max_element(values.begin(), values.end()));
  long double sum = 0;
  for (uint64_t v : values) sum += v;
  EXPECT_NEAR(h.Mean(), static_cast<double>(sum / values.size()), 1e-9 * h.Mean() + 1e-9);
  for (double pct : kPercentiles) {
    const uint64_t want = ExactPercentile(values, pct);
    const uint64_t got = h.ValueAtPercentile(pct);
    EXPECT_GE(got, want) << "p" << pct;
    EXPECT_LE(static_cast<double>(got - want), 0.001 * static_cast<double>(want)) << "p" << pct;
  }
}

Histogram RecordAll(const std::vector<uint64_t>& values) {
  Histogram h;
  for (uint64_t v : values) h.Record(v);
  return h;
}

TEST(HistogramTest, EmptyReportsZeros) {
  Histogram h;
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.Min(), 0u);
  EXPECT_EQ(h.Max(), 0u);
  EXPECT_EQ(h.Mean(), 0.0);
  EXPECT_EQ(h.Clamped(), 0u);
  for (double pct : kPercentiles) EXPECT_EQ(h.ValueAtPercentile(pct), 0u);
}

TEST(HistogramTest, ReachesAtLeastOneHundredSeconds) {
  EXPECT_GE(Histogram::HighestTrackable(), 100'000'000u);
  Histogram h;
  h.Record(100'000'000);
  EXPECT_EQ(h.Clamped(), 0u);
  EXPECT_EQ(h.Max(), 100'000'000u);
  EXPECT_EQ(h.ValueAtPercentile(50), 100'000'000u);
}

TEST(HistogramTest, SmallValuesAreExact) {
  std::vector<uint64_t> values;
  for (uint64_t v = 0; v <= 2047; ++v) values.push_back(v);
  Histogram h = RecordAll(values);
  for (double pct : kPercentiles) {
    EXPECT_EQ(h.ValueAtPercentile(pct), ExactPercentile(values, pct)) << "p" << pct;
  }
}

TEST(HistogramTest, UniformOneToN) {
  for (uint64_t n : {1u, 2u, 3u, 10u, 1000u, 12345u, 1000000u}) {
    std::vector<uint64_t> values;
    for (uint64_t v = 1; v <= n; ++v) values.push_back(v);
    SCOPED_TRACE(n);
    ExpectMatches(RecordAll(values), values);
  }
}

TEST(HistogramTest, UniformPercentilesOfOneToThousandAreExact) {
  Histogram h;
  for (uint64_t v = 1; v <= 1000; ++v) h.Record(v);
  EXPECT_EQ(h.ValueAtPercentile(50), 500u);
  EXPECT_EQ(h.ValueAtPercentile(90), 900u);
  EXPECT_EQ(h.ValueAtPercentile(99), 990u);
  EXPECT_EQ(h.ValueAtPercentile(99.9), 999u);  // not 1000: no floating-point rank creep
  EXPECT_EQ(h.ValueAtPercentile(100), 1000u);
  EXPECT_EQ(h.ValueAtPercentile(0), 1u);
  EXPECT_DOUBLE_EQ(h.Mean(), 500.5);
}

TEST(HistogramTest, Constant) {
  for (uint64_t v : {0u, 1u, 777u, 123457u, 98765432u}) {
    std::vector<uint64_t> values(1000, v);
    Histogram h = RecordAll(values);
    SCOPED_TRACE(v);
    ExpectMatches(h, values);
    // Never above Max(): every percentile of a constant is the constant itself.
    for (double pct : kPercentiles) EXPECT_EQ(h.ValueAtPercentile(pct), v);
  }
}

TEST(HistogramTest, Bimodal) {
  std::vector<uint64_t> values;
  for (int i = 0; i < 900; ++i) values.push_back(100 + i % 7);
  for (int i = 0; i < 100; ++i) values.push_back(50000 + i * 13);
  Histogram h = RecordAll(values);
  ExpectMatches(h, values);
  EXPECT_LT(h.ValueAtPercentile(90), 200u);
  EXPECT_GE(h.ValueAtPercentile(90.1), 50000u);
}

TEST(HistogramTest, LogUniformFromOneMicrosecondToHundredSeconds) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> exponent(0, 8);  // 10^0 .. 10^8 us
  std::vector<uint64_t> values;
  for (int i = 0; i < 200000; ++i) {
    values.push_back(static_cast<uint64_t>(std::pow(10.0, exponent(rng))));
  }
  values.push_back(1);
  values.push_back(100'000'000);
  ExpectMatches(RecordAll(values), values);
}

TEST(HistogramTest, EveryValueIsReportedWithinAThousandth) {
  // A single value's p50 is the top of its bucket capped at Max, so check bucket widths
  // directly with two values: v and something far above it.
  for (uint64_t v = 1; v < Histogram::HighestTrackable(); v = v * 3 / 2 + 1) {
    Histogram h;
    h.Record(v);
    h.Record(Histogram::HighestTrackable());
    const uint64_t got = h.ValueAtPercentile(50);
    ASSERT_GE(got, v);
    ASSERT_LE(static_cast<double>(got - v), 0.001 * static_cast<double>(v)) << v;
  }
}

TEST(HistogramTest, RecordNEqualsRepeatedRecord) {
  Histogram a, b;
  a.RecordN(1234, 5);
  a.RecordN(99, 0);
  for (int i = 0; i < 5; ++i) b.Record(1234);
  EXPECT_EQ(a.Serialize(), b.Serialize());
  EXPECT_EQ(a.Count(), 5u);
  EXPECT_EQ(a.Min(), 1234u);
}

TEST(HistogramTest, HugeValuesAreClampedAndCounted) {
  Histogram h;
  h.Record(10);
  h.Record(Histogram::HighestTrackable() + 1);
  h.RecordN(UINT64_MAX, 3);
  EXPECT_EQ(h.Count(), 5u);
  EXPECT_EQ(h.Clamped(), 4u);
  EXPECT_EQ(h.Max(), Histogram::HighestTrackable());
  EXPECT_EQ(h.ValueAtPercentile(100), Histogram::HighestTrackable());
  EXPECT_EQ(h.ValueAtPercentile(50), Histogram::HighestTrackable());
  EXPECT_EQ(h.ValueAtPercentile(0), 10u);
  h.Record(Histogram::HighestTrackable());  // at the top, not above it
  EXPECT_EQ(h.Clamped(), 4u);
}

TEST(HistogramTest, MergeEqualsRecordingAllIntoOne) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(6, 2);
  Histogram parts[4];
  Histogram all;
  std::vector<uint64_t> values;
  for (int i = 0; i < 50000; ++i) {
    uint64_t v = static_cast<uint64_t>(dist(rng));
    if (i % 1000 == 0) v = UINT64_MAX;  // clamped ones merge too
    parts[i % 3].Record(v);             // parts[3] stays empty
    all.Record(v);
    values.push_back(std::min(v, Histogram::HighestTrackable()));
  }
  Histogram merged;
  for (const Histogram& p : parts) merged.Merge(p);
  EXPECT_EQ(merged.Serialize(), all.Serialize());
  EXPECT_EQ(merged.Count(), all.Count());
  EXPECT_EQ(merged.Clamped(), all.Clamped());
  EXPECT_EQ(merged.Clamped(), 50u);
  EXPECT_EQ(merged.Min(), all.Min());
  EXPECT_EQ(merged.Max(), all.Max());
  EXPECT_DOUBLE_EQ(merged.Mean(), all.Mean());
  for (double pct : kPercentiles) {
    EXPECT_EQ(merged.ValueAtPercentile(pct), all.ValueAtPercentile(pct)) << "p" << pct;
  }
  ExpectMatches(merged, values);
}

TEST(HistogramTest, MergeIntoEmptyAndOfEmpty) {
  Histogram a, empty;
  a.Record(5);
  a.Record(500);
  Histogram b;
  b.Merge(a);
  b.Merge(empty);
  EXPECT_EQ(b.Serialize(), a.Serialize());
  EXPECT_EQ(b.Min(), 5u);
}

TEST(HistogramTest, ResetEmpties) {
  Histogram h;
  h.Record(5);
  h.Record(UINT64_MAX);
  h.Reset();
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.Clamped(), 0u);
  EXPECT_EQ(h.Min(), 0u);
  EXPECT_EQ(h.Max(), 0u);
  EXPECT_EQ(h.ValueAtPercentile(50), 0u);
  EXPECT_EQ(h.Serialize(), Histogram().Serialize());
  h.Record(9);
  EXPECT_EQ(h.Min(), 9u);
}

TEST(HistogramTest, ResetAndReuseEqualsAFreshHistogram) {
  // The load generator resets one histogram every second; nothing may leak between seconds.
  std::mt19937_64 rng(11);
  Histogram reused;
  for (int round = 0; round < 20; ++round) {
    std::vector<uint64_t> values;
    const uint64_t top = uint64_t{1} << (round + 4);
    for (int i = 0; i < 500; ++i) values.push_back(rng() % top);
    if (round % 5 == 0) values.push_back(UINT64_MAX);  // clamped
    for (uint64_t v : values) reused.Record(v);
    EXPECT_EQ(reused.Serialize(), RecordAll(values).Serialize()) << "round " << round;
    reused.Reset();
  }
}

TEST(HistogramTest, SerializeRoundTrip) {
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> dist(1.0 / 5000);
  Histogram h;
  for (int i = 0; i < 10000; ++i) h.Record(static_cast<uint64_t>(dist(rng)));
  h.RecordN(UINT64_MAX, 2);
  const std::string text = h.Serialize();
  ASSERT_EQ(text.substr(0, 3), "h1:");
  Result<Histogram> back = Histogram::Deserialize(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->Serialize(), text);
  EXPECT_EQ(back->Count(), h.Count());
  EXPECT_EQ(back->Clamped(), 2u);
  EXPECT_EQ(back->Min(), h.Min());
  EXPECT_EQ(back->Max(), h.Max());
  EXPECT_DOUBLE_EQ(back->Mean(), h.Mean());
  for (double pct : kPercentiles) {
    EXPECT_EQ(back->ValueAtPercentile(pct), h.ValueAtPercentile(pct));
  }
}

TEST(HistogramTest, SerializeIsCompactAndSparse) {
  Histogram h;
  h.RecordN(100, 3);
  h.Record(5000);
  EXPECT_EQ(h.Serialize(), "h1:0,100,5000,5300;100:3,3298:1");
  EXPECT_EQ(Histogram().Serialize(), "h1:0,0,0,0;");
  Result<Histogram> empty = Histogram::Deserialize("h1:0,0,0,0;");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->Count(), 0u);
}

TEST(HistogramTest, DeserializeRejectsMalformed) {
  const char* bad[] = {
      "",
      "h1",
      "h2:0,0,0,0;",
      "h1:0,0,0,0",                             // no ';'
      "h1:0,0,0;",                              // summary too short
      "h1:0,0,0,0,0;",                          // summary too long
      "h1:a,0,0,0;",                            // not a number
      "h1:-1,0,0,0;",                           // negative
      "h1:0,0,0,1e3;",                          // sum not plain digits
      "h1:0,0,0,0;5",                           // pair without ':'
      "h1:0,5,5,5;5:",                          // missing count
      "h1:0,5,5,5;:1",                          // missing index
      "h1:0,5,5,5;5:1,",                        // trailing comma
      "h1:0,5,5,5;5:0",                         // zero count
      "h1:0,5,6,11;6:1,5:1",                    // indices descending
      "h1:0,5,5,10;5:1,5:1",                    // duplicate index
      "h1:0,5,5,5;99999999:1",                  // index out of range
      "h1:0,5,5,5;5:1x",                        // junk after count
      "h1:0,1,0,0;",                            // empty with a summary
      "h1:0,6,5,5;5:1",                         // min > max
      "h1:0,7,7,7;5:1",                         // min/max not in the bucket
      "h1:2,5,5,5;5:1",                         // more clamped than recorded
      "h1:1,5,5,5;5:1",                         // clamped but max below the top
      "h1:0,5,5,5;5:18446744073709551615,6:1",  // count overflow
      "h1:0,5,5,5;5:99999999999999999999",      // count too big
  };
  for (const char* text : bad) {
    Result<Histogram> h = Histogram::Deserialize(text);
    EXPECT_FALSE(h.ok()) << text;
    if (!h.ok()) {
      EXPECT_EQ(h.status().code(), StatusCode::kInvalidArgument) << text;
    }
  }
}

TEST(HistogramTest, NonEmptyBucketsHoldEveryValueInOrder) {
  Histogram h;
  EXPECT_TRUE(h.NonEmptyBuckets().empty());
  h.Record(5);
  h.Record(5);
  h.Record(3000);  // above 2047: buckets two values wide
  h.Record(3001);  // the same bucket as 3000
  h.RecordN(1'000'000, 4);
  const auto buckets = h.NonEmptyBuckets();
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].low_us, 5u);
  EXPECT_EQ(buckets[0].high_us, 5u);
  EXPECT_EQ(buckets[0].count, 2u);
  EXPECT_EQ(buckets[1].low_us, 3000u);
  EXPECT_EQ(buckets[1].high_us, 3001u);
  EXPECT_EQ(buckets[1].count, 2u);
  EXPECT_LE(buckets[2].low_us, 1'000'000u);
  EXPECT_GE(buckets[2].high_us, 1'000'000u);
  // Three significant digits: the bucket is at most 1/1024 of its value wide.
  EXPECT_LE(buckets[2].high_us - buckets[2].low_us, 1'000'000u / 1024);
  EXPECT_EQ(buckets[2].count, 4u);
  uint64_t total = 0;
  for (const auto& b : buckets) total += b.count;
  EXPECT_EQ(total, h.Count());
}

}  // namespace
}  // namespace benchlab
