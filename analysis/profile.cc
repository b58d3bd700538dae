#include "analysis/profile.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "analysis/interval.h"

namespace benchlab {

double MicrosPerRequest(uint64_t function_samples, const ProfiledRound& round) {
  const uint64_t all = round.profile.samples();
  if (all == 0 || !(round.requests > 0) || !(round.cpu_s >= 0)) return kNaN;
  return static_cast<double>(function_samples) / static_cast<double>(all) * round.cpu_s * 1e6 /
         round.requests;
}

namespace {

struct MeanInterval {
  double mean = kNaN;
  double low = kNaN;
  double high = kNaN;
};

MeanInterval TInterval(const std::vector<double>& values, double level) {
  MeanInterval out;
  const size_t n = values.size();
  if (n == 0) return out;
  out.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(n);
  if (n < 2) return out;
  double ss = 0;
  for (double v : values) ss += (v - out.mean) * (v - out.mean);
  const double sd = std::sqrt(ss / static_cast<double>(n - 1));
  const double half =
      StudentT(level, static_cast<double>(n - 1)) * sd / std::sqrt(static_cast<double>(n));
  out.low = out.mean - half;
  out.high = out.mean + half;
  return out;
}

bool IsUsable(const ProfiledRound& r) {
  return r.profile.samples() > 0 && r.requests > 0 && r.cpu_s > 0;
}

}  // namespace

Result<ProfileDiff> DiffProfiles(const std::vector<ProfiledRound>& base,
                                 const std::vector<ProfiledRound>& new_rounds, double level,
                                 uint64_t min_samples) {
  std::vector<std::pair<const ProfiledRound*, const ProfiledRound*>> pairs;
  for (size_t i = 0; i < std::min(base.size(), new_rounds.size()); ++i) {
    if (IsUsable(base[i]) && IsUsable(new_rounds[i])) pairs.emplace_back(&base[i], &new_rounds[i]);
  }
  if (pairs.empty()) {
    return Status::InvalidArgument("no round has a profile with samples on both sides to compare");
  }
  struct Side {
    std::map<std::string, FunctionSamples> functions;
  };
  std::vector<std::pair<Side, Side>> sides(pairs.size());
  std::map<std::string, std::pair<uint64_t, uint64_t>> sampled;  // base, new totals
  for (size_t i = 0; i < pairs.size(); ++i) {
    sides[i].first.functions = SamplesByFunction(pairs[i].first->profile);
    sides[i].second.functions = SamplesByFunction(pairs[i].second->profile);
    for (const auto& [f, s] : sides[i].first.functions) sampled[f].first += s.total;
    for (const auto& [f, s] : sides[i].second.functions) sampled[f].second += s.total;
  }

  ProfileDiff diff;
  diff.rounds = static_cast<int>(pairs.size());
  std::vector<double> whole;
  double base_sum = 0;
  double new_sum = 0;
  for (const auto& [b, n] : pairs) {
    const double tb = b->cpu_s * 1e6 / b->requests;
    const double tn = n->cpu_s * 1e6 / n->requests;
    base_sum += tb;
    new_sum += tn;
    whole.push_back(tn - tb);
  }
  const double rounds = static_cast<double>(pairs.size());
  diff.base_us = base_sum / rounds;
  diff.new_us = new_sum / rounds;
  const MeanInterval whole_interval = TInterval(whole, level);
  diff.delta_us = whole_interval.mean;
  diff.low = whole_interval.low;
  diff.high = whole_interval.high;

  for (const auto& entry : sampled) {
    // Named, not bound: a lambda below uses it (clang 14 does not capture structured bindings).
    const std::string& function = entry.first;
    const auto& totals = entry.second;
    if (totals.first + totals.second < min_samples) continue;
    FunctionDiff row;
    row.function = function;
    row.rounds = diff.rounds;
    row.only_base = totals.second == 0;
    row.only_new = totals.first == 0;
    std::vector<double> deltas;
    std::vector<double> total_deltas;
    for (size_t i = 0; i < pairs.size(); ++i) {
      auto samples = [&](const Side& side, bool self) -> uint64_t {
        const auto it = side.functions.find(function);
        return it == side.functions.end() ? 0 : self ? it->second.self : it->second.total;
      };
      const double b = MicrosPerRequest(samples(sides[i].first, true), *pairs[i].first);
      const double n = MicrosPerRequest(samples(sides[i].second, true), *pairs[i].second);
      const double bt = MicrosPerRequest(samples(sides[i].first, false), *pairs[i].first);
      const double nt = MicrosPerRequest(samples(sides[i].second, false), *pairs[i].second);
      row.base_us += b / rounds;
      row.new_us += n / rounds;
      row.base_total_us += bt / rounds;
      row.new_total_us += nt / rounds;
      deltas.push_back(n - b);
      total_deltas.push_back(nt - bt);
    }
    const MeanInterval interval = TInterval(deltas, level);
    row.delta_us = interval.mean;
    row.low = interval.low;
    row.high = interval.high;
    row.total_delta_us = TInterval(total_deltas, level).mean;
    row.share = diff.delta_us != 0 ? row.delta_us / diff.delta_us : kNaN;
    diff.functions.push_back(std::move(row));
  }
  std::stable_sort(diff.functions.begin(), diff.functions.end(),
                   [](const FunctionDiff& a, const FunctionDiff& b) {
                     // To a millionth of a µs: sums of shares that are equal on paper must tie.
                     const auto key = [](double us) { return std::llround(std::fabs(us) * 1e6); };
                     if (key(a.delta_us) != key(b.delta_us)) {
                       return key(a.delta_us) > key(b.delta_us);
                     }
                     return std::fabs(a.total_delta_us) > std::fabs(b.total_delta_us);
                   });
  return diff;
}

}  // namespace benchlab
