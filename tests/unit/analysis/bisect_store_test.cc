// A bisection stored step by step goes on after the store is reopened: the steps read back and
// replayed give the range the search had (analysis/bisect.h, ReplayBisect; docs/store.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "analysis/bisect.h"
#include "coordinator/store.h"

namespace benchlab {
namespace {

namespace fs = std::filesystem;

std::vector<BisectCommit> SixteenCommits() {
  std::vector<BisectCommit> commits;
  for (int i = 0; i < 16; ++i)
    commits.push_back({"oid" + std::to_string(i), "change " + std::to_string(i)});
  return commits;
}

BisectStepRow StepRowOf(int64_t id, const BisectRange& range, size_t i) {
  BisectStepRow row;
  row.bisection_id = id;
  row.oid = range.commit(i).oid;
  row.subject = range.commit(i).subject;
  row.decision = CommitStateName(range.state(i));
  row.build = range.state(i) == CommitState::kBuildFailed ? "failed" : "built";
  return row;
}

Result<BisectRange> Replayed(const BisectionRecord& record) {
  std::vector<BisectStep> steps;
  for (const BisectStepRow& row : record.steps) {
    std::optional<CommitState> state = ParseCommitState(row.decision);
    EXPECT_TRUE(state.has_value()) << row.decision;
    steps.push_back({row.oid, state.value_or(CommitState::kUntested)});
  }
  return ReplayBisect(SixteenCommits(), steps);
}

TEST(BisectStoreTest, ReopeningTheStoreGoesOnWithTheSameBisection) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("benchlab_bisect_store_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "benchlab.db").string();
  const size_t culprit = 13;
  auto truth = [&](size_t i) { return i >= culprit ? CommitState::kBad : CommitState::kGood; };

  BisectRange live = *MakeBisectRange(SixteenCommits());
  int64_t id = 0;
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    BisectionRow row;
    row.good_oid = live.commit(0).oid;
    row.bad_oid = live.commit(15).oid;
    row.target = "hello";
    row.cell = "plaintext/c64";
    row.figure = "cpu_us_per_request";
    row.commits = 16;
    id = *(*store)->CreateBisection(row);
    // Two decisions, the second a build failure, then the coordinator stops.
    size_t next = *live.Next();
    ASSERT_TRUE(live.Mark(next, truth(next)).ok());
    ASSERT_TRUE((*store)->AppendBisectStep(StepRowOf(id, live, next)).ok());
    next = *live.Next();
    ASSERT_TRUE(live.Mark(next, CommitState::kBuildFailed).ok());
    ASSERT_TRUE((*store)->AppendBisectStep(StepRowOf(id, live, next)).ok());
  }

  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto record = (*store)->LoadBisection(id);
  ASSERT_TRUE(record.ok() && record->has_value());
  EXPECT_EQ((*record)->bisection.state, "running");
  Result<BisectRange> resumed = Replayed(**record);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(resumed->Next(), live.Next());
  EXPECT_EQ(resumed->Ahead(4), live.Ahead(4));

  // The resumed search goes on to the culprit, recording as it goes.
  while (std::optional<size_t> next = resumed->Next()) {
    ASSERT_TRUE(resumed->Mark(*next, truth(*next)).ok());
    ASSERT_TRUE((*store)->AppendBisectStep(StepRowOf(id, *resumed, *next)).ok());
  }
  const BisectResult result = resumed->Result();
  ASSERT_EQ(result.outcome, BisectOutcome::kFound) << result.reason;
  EXPECT_EQ(result.culprit, culprit);
  BisectionRow done = (*record)->bisection;
  done.state = BisectOutcomeName(result.outcome);
  done.culprit = resumed->commit(culprit).oid;
  done.result = result.reason;
  ASSERT_TRUE((*store)->UpdateBisection(done).ok());

  auto final_record = (*store)->LoadBisection(id);
  ASSERT_TRUE(final_record.ok() && final_record->has_value());
  EXPECT_EQ((*final_record)->bisection.culprit, "oid13");
  Result<BisectRange> again = Replayed(**final_record);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->Done());
  EXPECT_EQ(again->Result().culprit, culprit);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace benchlab
