#include "analysis/profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "analysis/interval.h"
#include "common/folded_profile.h"

namespace benchlab {
namespace {

TEST(MicrosPerRequestTest, AShareOfTheMeasuredCpuPerRequest) {
  ProfiledRound round;
  round.profile = *ParseFolded("s;f 25\ns;g 75\n");
  round.cpu_s = 2.0;
  round.requests = 1000;
  // 2 s over 1000 requests is 2000 µs each; f holds a quarter of the samples.
  EXPECT_DOUBLE_EQ(MicrosPerRequest(25, round), 500.0);
  EXPECT_DOUBLE_EQ(MicrosPerRequest(100, round), 2000.0);
  round.requests = 0;
  EXPECT_TRUE(std::isnan(MicrosPerRequest(25, round)));
}

ProfiledRound Round(const std::string& folded, double cpu_s, double requests) {
  ProfiledRound r;
  r.profile = *ParseFolded(folded);
  r.cpu_s = cpu_s;
  r.requests = requests;
  return r;
}

TEST(DiffProfilesTest, NamesTheFunctionThatGrewWithItsIntervalAndShare) {
  // Base: 10 µs per request, half in parse, half in write. New: parse grew by 2 + 0.1·i µs in
  // round i, write stayed at 5 µs, and a function only the new build has costs 1 µs.
  std::vector<ProfiledRound> base, next;
  std::vector<double> grew;
  for (int i = 0; i < 5; ++i) {
    base.push_back(Round("srv;main;parse 500\nsrv;main;write 500\n", 10.0, 1e6));
    const double parse = 7.0 + 0.1 * i;
    const double total = parse + 5.0 + 1.0;
    // Samples in proportion to the µs (x100), CPU seconds for 1e6 requests.
    next.push_back(Round("srv;main;parse " + std::to_string(std::lround(parse * 100)) +
                             "\nsrv;main;write 500\nsrv;main;check 100\n",
                         total, 1e6));
    grew.push_back(parse - 5.0);
  }
  auto diff = DiffProfiles(base, next, 0.95, 5);
  ASSERT_TRUE(diff.ok()) << diff.status().message();
  EXPECT_EQ(diff->rounds, 5);
  EXPECT_NEAR(diff->base_us, 10.0, 1e-9);
  EXPECT_NEAR(diff->delta_us, 3.2, 1e-9);  // 2.2 mean growth in parse + 1 µs of check
  ASSERT_EQ(diff->functions.size(), 4u);
  // By self time: the function whose own code grew first, not main, which holds all of it.
  const FunctionDiff& parse = diff->functions[0];
  EXPECT_EQ(parse.function, "parse");
  EXPECT_NEAR(parse.delta_us, 2.2, 1e-9);
  // The t interval over the rounds' growths 2.0, 2.1, ..., 2.4: sd = 0.158, t(0.95, 4) = 2.776.
  const double half = StudentT(0.95, 4) * std::sqrt(0.025) / std::sqrt(5.0);
  EXPECT_NEAR(parse.low, 2.2 - half, 1e-9);
  EXPECT_NEAR(parse.high, 2.2 + half, 1e-9);
  EXPECT_NEAR(parse.share, 2.2 / 3.2, 1e-9);
  EXPECT_NEAR(parse.total_delta_us, 2.2, 1e-9);
  EXPECT_NEAR(parse.base_us, 5.0, 1e-9);
  EXPECT_EQ(diff->functions[1].function, "check");
  EXPECT_TRUE(diff->functions[1].only_new);
  EXPECT_NEAR(diff->functions[1].delta_us, 1.0, 1e-9);
  // Self shares add up to the whole difference.
  double shares = 0;
  for (const auto& f : diff->functions) shares += f.share;
  EXPECT_NEAR(shares, 1.0, 1e-9);
  // No self time of its own: main and write tie at 0, main first by its total (+3.2).
  EXPECT_EQ(diff->functions[2].function, "main");
  EXPECT_NEAR(diff->functions[2].delta_us, 0.0, 1e-9);
  EXPECT_NEAR(diff->functions[2].total_delta_us, 3.2, 1e-9);
  EXPECT_EQ(diff->functions[3].function, "write");
  EXPECT_NEAR(diff->functions[3].delta_us, 0.0, 1e-9);
}

TEST(DiffProfilesTest, RareFunctionsAreLeftOutAndRoundsWithoutSamplesDoNotPair) {
  std::vector<ProfiledRound> base{Round("s;f 100\ns;rare 1\n", 1, 1000),
                                  Round("s;f 100\n", 1, 1000)};
  std::vector<ProfiledRound> next{Round("s;f 100\n", 1.1, 1000), ProfiledRound{}};
  auto diff = DiffProfiles(base, next, 0.95, 5);
  ASSERT_TRUE(diff.ok());
  EXPECT_EQ(diff->rounds, 1) << "the second round has no profile on the new side";
  ASSERT_EQ(diff->functions.size(), 1u);
  EXPECT_EQ(diff->functions[0].function, "f");
  EXPECT_TRUE(std::isnan(diff->functions[0].low)) << "one round gives no interval";
  EXPECT_FALSE(DiffProfiles({ProfiledRound{}}, {ProfiledRound{}}).ok());
}

}  // namespace
}  // namespace benchlab
