#include "bench/changepoint_sim/sim.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace benchlab::changepoint_sim {
namespace {

double WindowNoise(const Scenario& s, Rng& rng) {
  const double sd = s.figure.window_log_sd;
  if (s.noise == Noise::kHeavyTailed) return sd * rng.StudentT3() / std::sqrt(3.0);
  return sd * rng.Normal();
}

// The re-measurement of an alarm: the first decision that is not undecided.
ConfirmationDecision Remeasure(const Scenario& s, const ChangePoint& cp, double true_ratio,
                               const ConfirmationRule& rule, Rng& rng, int* rounds) {
  const Noise noise = s.noise == Noise::kOutlier ? Noise::kOutlier : s.noise;
  const std::vector<double> all =
      stats_sim::DrawRatios(s.figure, noise, true_ratio, rule.plan.max_rounds, rng);
  ConfirmationDecision d;
  for (int n = rule.plan.min_rounds; n <= rule.plan.max_rounds; ++n) {
    d = DecideConfirmation(std::vector<double>(all.begin(), all.begin() + n), cp, rule);
    *rounds = n;
    if (d.decision != Confirmation::kUndecided) break;
  }
  return d;
}

}  // namespace

std::vector<SeriesPoint> DrawSeries(const Scenario& s, int index, Rng& rng,
                                    std::vector<double>* levels) {
  const double after = index % 2 == 0 ? 1 + s.step : 1 / (1 + s.step);
  std::vector<SeriesPoint> series;
  if (levels) levels->clear();
  for (int c = 0; c < s.campaigns; ++c) {
    const double level = s.step_at >= 0 && c >= s.step_at ? after : 1.0;
    if (levels) levels->push_back(level);
    double shift = std::log(level);
    if (s.campaign_log_sd > 0) shift += s.campaign_log_sd * rng.Normal();
    const bool outlier = s.noise == Noise::kOutlier && rng.Uniform() < kOutlierCampaignShare;
    SeriesPoint p;
    p.campaign_id = c + 1;
    double log_sum = 0;
    for (int r = 1; r <= s.rounds; ++r) {
      double l = shift + WindowNoise(s, rng);
      if (outlier && r == stats_sim::kOutlierRound) {
        const double worse = std::log(stats_sim::kOutlierFactor);
        l += s.figure.better == Better::kHigher ? worse : -worse;
      }
      log_sum += l;
      p.rounds.push_back(std::exp(l));
    }
    p.estimate = std::exp(log_sum / s.rounds);
    series.push_back(std::move(p));
  }
  return series;
}

Outcome WatchSeries(const Scenario& s, const Options& options, int index, std::uint64_t seed) {
  Rng rng(seed);
  Rng remeasure_rng(seed ^ 0x5eed5eed5eed5eedULL);
  std::vector<double> levels;
  const std::vector<SeriesPoint> series = DrawSeries(s, index, rng, &levels);
  Outcome out;
  out.step = s.step_at >= 0 && s.step != 0;
  out.campaigns = s.campaigns;
  ChangePointOptions detector = options.detector;
  detector.better = s.figure.better;
  std::vector<size_t> alarms;  // each alarm's latest index
  const int first = 2 * std::max(2, detector.min_segment);
  for (int n = first; n <= s.campaigns; ++n) {
    const std::vector<SeriesPoint> prefix(series.begin(), series.begin() + n);
    for (const ChangePoint& cp : DetectChangePoints(prefix, detector).change_points) {
      // The step is detected the first time a change point lies within 1 of it, whatever was
      // raised nearby before; any other change point is a false alarm unless it lies within 1
      // of one already raised (a change point may move by one as campaigns are added).
      const bool at_step = out.step && std::abs(static_cast<int>(cp.index) - s.step_at) <= 1;
      if (at_step && out.detected) continue;
      if (!at_step) {
        bool known = false;
        for (size_t& a : alarms) {
          if (a + 1 >= cp.index && cp.index + 1 >= a) {
            a = cp.index;
            known = true;
            break;
          }
        }
        if (known) continue;
        alarms.push_back(cp.index);
      }
      const double true_ratio = levels[n - 1] / levels[cp.old_index];
      int rounds = 0;
      const bool confirmed =
          Remeasure(s, cp, true_ratio, options.confirmation, remeasure_rng, &rounds).decision ==
          Confirmation::kConfirmed;
      ++out.confirmations;
      out.confirmation_rounds += rounds;
      if (at_step) {
        out.detected = true;
        out.delay = n - s.step_at;
        out.confirmed = confirmed;
      } else {
        ++out.false_alarms;
        out.false_alarms_confirmed += confirmed;
        if (true_ratio == 1.0) {
          ++out.spurious;
          out.spurious_confirmed += confirmed;
        }
      }
    }
  }
  return out;
}

void Tally::Add(const Outcome& o) {
  ++series;
  step_series += o.step;
  if (o.detected) {
    ++detected;
    detected_confirmed += o.confirmed;
    delays.insert(std::upper_bound(delays.begin(), delays.end(), o.delay), o.delay);
  }
  campaigns += o.campaigns;
  false_alarms += o.false_alarms;
  false_alarms_confirmed += o.false_alarms_confirmed;
  spurious += o.spurious;
  spurious_confirmed += o.spurious_confirmed;
  confirmations += o.confirmations;
  confirmation_rounds += o.confirmation_rounds;
}

double Tally::DetectionRate() const { return step_series ? double(detected) / step_series : kNaN; }

double Tally::ConfirmedDetectionRate() const {
  return step_series ? double(detected_confirmed) / step_series : kNaN;
}

double Tally::KeptShare() const { return detected ? double(detected_confirmed) / detected : kNaN; }

double Tally::MedianDelay() const {
  if (delays.empty()) return kNaN;
  const size_t n = delays.size();
  return n % 2 ? delays[n / 2] : (delays[n / 2 - 1] + delays[n / 2]) / 2.0;
}

double Tally::MeanDelay() const {
  if (delays.empty()) return kNaN;
  double sum = 0;
  for (int d : delays) sum += d;
  return sum / double(delays.size());
}

double Tally::FalseAlarmsPer100() const {
  return campaigns ? 100.0 * false_alarms / double(campaigns) : kNaN;
}

double Tally::ConfirmedFalseAlarmsPer100() const {
  return campaigns ? 100.0 * false_alarms_confirmed / double(campaigns) : kNaN;
}

double Tally::RemovedShare() const {
  return false_alarms ? 1 - double(false_alarms_confirmed) / false_alarms : kNaN;
}

double Tally::SpuriousPer100() const {
  return campaigns ? 100.0 * spurious / double(campaigns) : kNaN;
}

double Tally::ConfirmedSpuriousPer100() const {
  return campaigns ? 100.0 * spurious_confirmed / double(campaigns) : kNaN;
}

double Tally::SpuriousRemovedShare() const {
  return spurious ? 1 - double(spurious_confirmed) / spurious : kNaN;
}

double Tally::MeanConfirmationRounds() const {
  return confirmations ? double(confirmation_rounds) / confirmations : kNaN;
}

Tally Simulate(const Scenario& scenario, const Options& options, int series, std::uint64_t seed,
               int threads) {
  threads = std::max(1, threads);
  std::vector<Outcome> outcomes(static_cast<size_t>(series));
  auto work = [&](int first) {
    for (int i = first; i < series; i += threads) {
      outcomes[static_cast<size_t>(i)] = WatchSeries(scenario, options, i, seed + i);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& t : pool) t.join();
  Tally tally;
  for (const Outcome& o : outcomes) tally.Add(o);
  return tally;
}

}  // namespace benchlab::changepoint_sim
