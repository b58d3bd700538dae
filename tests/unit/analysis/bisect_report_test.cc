// A stored bisection as `benchlab bisect --status`, the API and a regression's report show it
// (analysis/bisect_report.h).
#include "analysis/bisect_report.h"

#include <gtest/gtest.h>

#include <string>

namespace benchlab {
namespace {

BisectionRecord FoundSearch() {
  BisectionRecord r;
  BisectionRow& b = r.bisection;
  b.id = 4;
  b.target = "app";
  b.cell = "plain/c16";
  b.figure = "cpu_us_per_request";
  b.good_oid = std::string(40, 'a');
  b.bad_oid = std::string(40, 'b');
  b.commits = 64;
  b.state = "found";
  b.culprit = "3f2a91c04b7e" + std::string(28, '0');
  b.size = 1.058;
  b.size_low = 1.041;
  b.size_high = 1.076;
  b.confidence = 0.95;
  b.change_id = 7;
  b.result = "first bad commit: ...";
  BisectStepRow good;
  good.step = 1;
  good.oid = std::string(40, 'c');
  good.subject = "Tidy the parser";
  good.decision = "good";
  good.rounds = 5;
  good.figures = {{10.0, 10.1, 10.7}};
  BisectStepRow failed;
  failed.step = 2;
  failed.oid = std::string(40, 'd');
  failed.subject = "Half a refactor";
  failed.build = "failed";
  failed.decision = "build failed";
  BisectStepRow bad;
  bad.step = 3;
  bad.position = 40;
  bad.oid = b.culprit;
  bad.subject = "Parse headers twice";
  bad.decision = "bad";
  bad.rounds = 6;
  bad.estimate = 1.03;
  bad.low = 1.01;
  bad.high = 1.05;
  r.steps = {good, failed, bad};
  return r;
}

TEST(BisectReportTest, CulpritLineNamesCommitSubjectAndSizeWithItsInterval) {
  EXPECT_EQ(CulpritLine(FoundSearch()),
            "culprit: 3f2a91c04b7e 'Parse headers twice', +5.8% [+4.1%, +7.6%] CPU µs/req "
            "(bisection 4, 2 commits measured)");
}

TEST(BisectReportTest, CulpritLineOfASearchNotFoundSaysWhereItStands) {
  BisectionRecord running = FoundSearch();
  running.bisection.state = "running";
  running.bisection.culprit.clear();
  EXPECT_EQ(CulpritLine(running), "bisection 4: running, 3 of 62 commits between the ends decided");
  BisectionRecord split = FoundSearch();
  split.bisection.state = "unsplittable";
  split.bisection.culprit.clear();
  split.bisection.result = "unsplittable: dddd failed to build";
  EXPECT_EQ(CulpritLine(split), "bisection 4: unsplittable: unsplittable: dddd failed to build");
}

TEST(BisectReportTest, JsonCarriesStepsFiguresAndNullsForWhatIsUnknown) {
  const nlohmann::json j = BisectionJson(FoundSearch());
  EXPECT_EQ(j["culprit_subject"], "Parse headers twice");
  EXPECT_EQ(j["change"], 7);
  ASSERT_EQ(j["steps"].size(), 3u);
  EXPECT_EQ(j["steps"][0]["figures"][0]["bad"], 10.7);
  EXPECT_TRUE(j["steps"][1]["estimate"].is_null());
  EXPECT_EQ(j["steps"][1]["build"], "failed");
  EXPECT_TRUE(j["steps"][1]["position"].is_null());
  EXPECT_EQ(j["steps"][2]["position"], 40);
  BisectionRecord by_hand = FoundSearch();
  by_hand.bisection.change_id = 0;
  by_hand.bisection.size.reset();
  EXPECT_TRUE(BisectionJson(by_hand)["change"].is_null());
  EXPECT_TRUE(BisectionJson(by_hand)["size"].is_null());
}

TEST(BisectReportTest, TextHasALinePerStepAndTheResult) {
  const std::string text = FormatBisectionText(FoundSearch());
  EXPECT_NE(
      text.find("bisection 4: app on plain/c16, cpu_us_per_request, aaaaaaaaaaaa..bbbbbbbbbbbb "
                "(64 commits): found\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("  step 2: dddddddddddd Half a refactor: build failed after 0 round(s)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("candidate/midpoint 1.0300 [1.0100, 1.0500]"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 22), "first bad commit: ...\n");
}

}  // namespace
}  // namespace benchlab
