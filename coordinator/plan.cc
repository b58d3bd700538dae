#include "coordinator/plan.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

namespace benchlab {
namespace {

// A uniform integer in [0, bound), bound >= 1. Rejecting the lowest 2^64 mod bound outputs
// leaves a multiple of bound equally likely values, so `r % bound` has no bias.
uint64_t Below(uint64_t& state, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const uint64_t r = SplitMix64(state);
    if (r >= threshold) return r % bound;
  }
}

// Whether the process that ran `a` may also run `b`, the window right after it.
bool SharesProcess(FreshProcess mode, const PlannedWindow& a, const PlannedWindow& b) {
  if (mode == FreshProcess::kWindow || a.noise || b.noise) return false;
  if (a.target != b.target || a.round != b.round) return false;
  return mode == FreshProcess::kRound || a.scenario == b.scenario;
}

PlannedWindow MakeWindow(const std::string& target, const std::string& scenario,
                         const LoadLevel& level) {
  PlannedWindow w;
  w.target = target;
  w.scenario = scenario;
  w.connections = level.connections;
  w.rate = level.rate;
  w.tool = level.tool;
  return w;
}

// The matrix windows, cut into blocks that noise windows never split: a (scenario, level) group
// of a round, whose targets are compared back to back, or one target's windows of a round, which
// may share a process.
std::vector<std::vector<PlannedWindow>> MatrixBlocks(const Campaign& campaign) {
  const std::vector<LoadLevel> levels = campaign.LoadLevels();
  const bool target_major = campaign.fresh_process != FreshProcess::kWindow;
  std::vector<std::vector<PlannedWindow>> blocks;
  for (int round = 1; round <= campaign.rounds; ++round) {
    const std::vector<std::string> order = TargetOrderForRound(campaign, round);
    int position = 0;
    auto add = [&](std::vector<PlannedWindow>& block, const std::string& target,
                   const std::string& scenario, const LoadLevel& level) {
      PlannedWindow& w = block.emplace_back(MakeWindow(target, scenario, level));
      w.round = round;
      w.position = position++;
    };
    if (target_major) {
      for (const auto& target : order) {
        std::vector<PlannedWindow> block;
        for (const auto& scenario : campaign.scenarios) {
          for (const auto& level : levels) add(block, target, scenario.name, level);
        }
        if (!block.empty()) blocks.push_back(std::move(block));
      }
    } else {
      for (const auto& scenario : campaign.scenarios) {
        for (const auto& level : levels) {
          std::vector<PlannedWindow> block;
          for (const auto& target : order) add(block, target, scenario.name, level);
          if (!block.empty()) blocks.push_back(std::move(block));
        }
      }
    }
  }
  return blocks;
}

}  // namespace

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::vector<int> ShufflePermutation(uint64_t seed, int round, int count) {
  std::vector<int> permutation;
  for (int i = 0; i < count; ++i) permutation.push_back(i);
  // The seed is scrambled first so that nearby seeds and nearby rounds give unrelated streams.
  uint64_t state = seed;
  state = SplitMix64(state) ^ static_cast<uint64_t>(static_cast<uint32_t>(round));
  for (int i = count - 1; i > 0; --i) {
    const int j = static_cast<int>(Below(state, static_cast<uint64_t>(i) + 1));
    std::swap(permutation[i], permutation[j]);
  }
  return permutation;
}

std::vector<std::string> TargetOrderForRound(const Campaign& campaign, int round) {
  std::vector<std::string> order;
  const size_t count = campaign.targets.size();
  if (count == 0) return order;
  order.reserve(count);
  if (campaign.order == Order::kShuffle) {
    for (int i : ShufflePermutation(campaign.seed, round, static_cast<int>(count))) {
      order.push_back(campaign.targets[i].name);
    }
    return order;
  }
  // Rotating the start shifts every target one place per round, so no target always runs first
  // (cold caches, a fresh CPU frequency) or last (after the machine has warmed up).
  size_t start = 0;
  if (campaign.order == Order::kRotate && round >= 1) {
    start = static_cast<size_t>(round - 1) % count;
  }
  for (size_t i = 0; i < count; ++i) order.push_back(campaign.targets[(start + i) % count].name);
  return order;
}

std::vector<PlannedWindow> ExpandMatrix(const Campaign& campaign) {
  const std::vector<std::vector<PlannedWindow>> blocks = MatrixBlocks(campaign);
  const int64_t block_count = static_cast<int64_t>(blocks.size());
  const int64_t noise_count = campaign.noise ? campaign.noise->windows : 0;
  // Noise window k goes before block floor(k * B / (K - 1)): the first before everything, the
  // last after everything, the rest evenly between, so their spread covers the whole campaign.
  auto slot = [&](int64_t k) { return noise_count > 1 ? k * block_count / (noise_count - 1) : 0; };

  std::vector<PlannedWindow> windows;
  int64_t next_noise = 0;
  for (int64_t b = 0; b <= block_count; ++b) {
    for (; next_noise < noise_count && slot(next_noise) == b; ++next_noise) {
      const NoiseSpec& noise = *campaign.noise;
      PlannedWindow& w =
          windows.emplace_back(MakeWindow(noise.target, noise.scenario, noise.level));
      w.noise = true;
      w.round = 0;
      w.position = static_cast<int>(next_noise);
    }
    if (b < block_count) windows.insert(windows.end(), blocks[b].begin(), blocks[b].end());
  }

  for (size_t i = 0; i < windows.size(); ++i) {
    PlannedWindow& w = windows[i];
    w.index = static_cast<int>(i);
    w.start_process = i == 0 || !SharesProcess(campaign.fresh_process, windows[i - 1], w);
    w.stop_process =
        i + 1 == windows.size() || !SharesProcess(campaign.fresh_process, w, windows[i + 1]);
  }
  return windows;
}

namespace {

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

// 1200005 -> "1,200,005".
std::string WithThousands(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

uint64_t PlanSize::Total() const {
  uint64_t matrix = SaturatingMul(SaturatingMul(targets, scenarios), SaturatingMul(levels, rounds));
  uint64_t per_pair = matrix > UINT64_MAX - noise ? UINT64_MAX : matrix + noise;
  return SaturatingMul(per_pair, pairs);
}

std::string PlanSize::Describe() const {
  std::string text = "targets " + WithThousands(targets) + " × scenarios " +
                     WithThousands(scenarios) + " × load levels " + WithThousands(levels) +
                     " × rounds " + WithThousands(rounds);
  if (noise > 0) {
    text += pairs > 1 ? " + noise windows " + WithThousands(noise)
                      : " (+ noise windows " + WithThousands(noise) + ")";
  }
  if (pairs > 1) text = "(" + text + ") × pairs " + WithThousands(pairs);
  return text + " = " + WithThousands(Total()) + " windows";
}

PlanSize SizeOfPlan(const Campaign& campaign) {
  PlanSize size;
  size.targets = campaign.targets.size();
  size.scenarios = campaign.scenarios.size();
  size.levels = campaign.connections.size() * campaign.load_tools.size() + campaign.rates.size();
  size.rounds = static_cast<uint64_t>(std::max(campaign.rounds, 0));
  size.noise = campaign.noise ? static_cast<uint64_t>(std::max(campaign.noise->windows, 0)) : 0;
  size.pairs = std::max<uint64_t>(1, campaign.placement_pairs.size());
  return size;
}

Status CheckPlanSize(const Campaign& campaign, uint64_t max_windows, uint64_t pairs) {
  PlanSize size = SizeOfPlan(campaign);
  if (pairs > 0) size.pairs = pairs;
  if (size.Total() <= max_windows) return Status::Ok();
  return Status::InvalidArgument(campaign.source_name + ": the plan has " + size.Describe() +
                                 ", over the limit of " + WithThousands(max_windows) +
                                 " (--max-windows)");
}

std::string LoadLevelLabel(const PlannedWindow& window) {
  return LoadLevelLabel(LoadLevel{window.connections, window.rate, window.tool});
}

}  // namespace benchlab
