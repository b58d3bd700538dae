#include "coordinator/rerun.h"

#include <gtest/gtest.h>

namespace benchlab {
namespace {

WindowRow Attempt(int64_t id, const std::string& target, int round, int attempt,
                  const std::string& verdict, int64_t campaign = 1) {
  WindowRow w;
  w.id = id;
  w.campaign_id = campaign;
  w.target = target;
  w.scenario = "hello";
  w.load_level = "c16";
  w.round = round;
  w.attempt = attempt;
  w.verdict = verdict;
  return w;
}

TEST(RerunTest, OnlyTheNewestAttemptOfEachWindowCounts) {
  std::vector<WindowRow> attempts = {
      Attempt(1, "a", 1, 1, "invalid"),  // re-run below, now valid
      Attempt(2, "b", 1, 1, "failed"),
      Attempt(3, "a", 2, 1, "invalid"),
      Attempt(4, "a", 1, 2, "valid"),
      Attempt(5, "b", 2, 1, "skipped"),
      Attempt(6, "a", 1, 1, "invalid", /*campaign=*/2),  // same key, another campaign
  };
  EXPECT_EQ(SelectForRerun(attempts, true, false), (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(SelectForRerun(attempts, false, true), (std::vector<int64_t>{2}));
  EXPECT_EQ(SelectForRerun(attempts, true, true), (std::vector<int64_t>{2, 3, 6}));
  EXPECT_TRUE(SelectForRerun(attempts, false, false).empty());
  std::vector<int64_t> newest;
  for (const WindowRow& w : NewestAttempts(attempts)) newest.push_back(w.id);
  EXPECT_EQ(newest, (std::vector<int64_t>{2, 3, 4, 5, 6}));
}

TEST(RerunTest, NoiseWindowsAreToldApartByPosition) {
  WindowRow n0 = Attempt(1, "a", 0, 1, "invalid");
  WindowRow n1 = Attempt(2, "a", 0, 1, "invalid");
  n0.noise = n1.noise = 1;
  n1.position = 1;
  EXPECT_EQ(SelectForRerun({n0, n1}, true, false), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace benchlab
