// The request-mix file format, the weighted cycle and status lists.
#include "loadgen/request_mix.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace benchlab {
namespace {

TEST(RequestMixTest, ParsesWeightedRequests) {
  const std::string text =
      "# a comment, then a blank line\n"
      "\n"
      "{\"weight\": 3, \"path\": \"/a\"}\n"
      "{\"weight\": 1, \"method\": \"POST\", \"path\": \"/b\", \"headers\": {\"Content-Type\": "
      "\"text/plain\"}, \"body\": \"x=1\", \"expect_status\": \"2xx\", \"expect_body\": \"ok\"}\r\n"
      "  {\"path\": \"/c\", \"headers\": [\"X-A: 1\", \"X-B:2\"], \"expect_status\": [200, 204]}";
  Result<std::vector<MixRequest>> mix = ParseRequestMix(text, "mix.jsonl");
  ASSERT_TRUE(mix.ok()) << mix.status().ToString();
  ASSERT_EQ(mix->size(), 3u);
  EXPECT_EQ((*mix)[0].weight, 3u);
  EXPECT_EQ((*mix)[0].method, "GET");
  EXPECT_EQ((*mix)[0].path, "/a");
  EXPECT_FALSE((*mix)[0].expect_body.has_value());
  EXPECT_EQ((*mix)[1].method, "POST");
  EXPECT_EQ((*mix)[1].body, "x=1");
  EXPECT_EQ((*mix)[1].headers, (HeaderList{{"Content-Type", "text/plain"}}));
  EXPECT_EQ((*mix)[1].expect_status.size(), 100u);
  EXPECT_EQ((*mix)[1].expect_body, "ok");
  EXPECT_EQ((*mix)[2].weight, 1u);
  EXPECT_EQ((*mix)[2].headers, (HeaderList{{"X-A", "1"}, {"X-B", "2"}}));
  EXPECT_EQ((*mix)[2].expect_status, (std::vector<int>{200, 204}));
}

TEST(RequestMixTest, ErrorsNameTheLineAndTheProblem) {
  struct Case {
    std::string text;
    const char* want;
  } cases[] = {
      {"{\"path\": \"/\"}\n{\"weight\": 0}", "mix.jsonl:2: weight must be an integer"},
      {"{\"weight\": \"ten\"}", "mix.jsonl:1: weight"},
      {"not json", "mix.jsonl:1: not a JSON object"},
      {"[1, 2]", "mix.jsonl:1: each line must be a JSON object"},
      {"{\"method\": \"GE T\"}", "method must be one word"},
      {"{\"path\": \"/a b\"}", "path must be non-empty without spaces"},
      {"{\"paht\": \"/\"}", "unknown key \"paht\""},
      {"{\"headers\": {\"Bad Name\": \"1\"}}", "bad header"},
      {"{\"headers\": {\"X\": \"a\\r\\nInjected: 1\"}}", "bad header"},
      {"{\"headers\": {\"X\": \"a\\u0000b\"}}", "mix.jsonl:1: header \"X\" value \"a\\x00b\""},
      {"{\"path\": \"/caf\u00e9\"}", "mix.jsonl:1: path \"/caf\\xc3\\xa9\""},
      {"{\"method\": \"" + std::string(33, 'M') + "\"}", "mix.jsonl:1: method"},
      {"{\"expect_status\": 42}", "status must be 100-999"},
      {"{\"expect_status\": \"2yy\"}", "expected status codes"},
      {"# only a comment\n", "mix.jsonl: no requests"},
      {"{\"weight\": 600000}\n{\"weight\": 600000}", "mix.jsonl:2: the weights add up"},
  };
  for (const Case& c : cases) {
    Result<std::vector<MixRequest>> mix = ParseRequestMix(c.text, "mix.jsonl");
    ASSERT_FALSE(mix.ok()) << c.text;
    EXPECT_NE(mix.status().message().find(c.want), std::string::npos)
        << c.text << " -> " << mix.status().message();
  }
}

TEST(WeightedCycleTest, SpreadsEachIndexByItsWeight) {
  EXPECT_EQ(WeightedCycle({3, 1}), (std::vector<uint32_t>{0, 0, 1, 0}));
  EXPECT_EQ(WeightedCycle({1}), (std::vector<uint32_t>{0}));
  EXPECT_EQ(WeightedCycle({1, 1, 1}), (std::vector<uint32_t>{0, 1, 2}));
  const std::vector<uint32_t> cycle = WeightedCycle({5, 2, 3});
  ASSERT_EQ(cycle.size(), 10u);
  EXPECT_EQ(std::count(cycle.begin(), cycle.end(), 0u), 5);
  EXPECT_EQ(std::count(cycle.begin(), cycle.end(), 1u), 2);
  EXPECT_EQ(std::count(cycle.begin(), cycle.end(), 2u), 3);
  // Smooth: the heavy index never runs more than twice in a row here.
  for (size_t i = 0; i + 2 < cycle.size(); ++i) {
    EXPECT_FALSE(cycle[i] == 0 && cycle[i + 1] == 0 && cycle[i + 2] == 0) << i;
  }
}

TEST(StatusListTest, CodesClassesAndRanges) {
  EXPECT_EQ(*ParseStatusList("200"), (std::vector<int>{200}));
  EXPECT_EQ(*ParseStatusList("204, 200,200"), (std::vector<int>{200, 204}));
  Result<std::vector<int>> two = ParseStatusList("2xx,304");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->size(), 101u);
  EXPECT_EQ(two->front(), 200);
  EXPECT_EQ(two->back(), 304);
  EXPECT_EQ(ParseStatusList("301-303")->size(), 3u);
  for (const char* bad : {"", "20", "1000", "abc", "2x", "303-301", "200,", "0xx"}) {
    EXPECT_FALSE(ParseStatusList(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace benchlab
