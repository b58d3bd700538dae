// `--label TARGET=VALUE` (cli/labels.h): the flags' form, and the text the command submits.
#include "cli/labels.h"

#include <gtest/gtest.h>

namespace benchlab {
namespace {

constexpr char kCampaign[] = R"(name = "hello"
baseline = "hello"
[matrix]
connections = [4]
[[target]]
name = "hello"
[[scenario]]
name = "hello"
path = "/"
expect = { status = 200 }
)";

TEST(LabelFlagsTest, EachFlagIsATargetAndAValue) {
  auto labels = ParseLabelFlags({"hello=v1.4.2", "other=a=b"});
  ASSERT_TRUE(labels.ok()) << labels.status().ToString();
  EXPECT_EQ(*labels, (std::map<std::string, std::string>{{"hello", "v1.4.2"}, {"other", "a=b"}}));
  for (const char* flag : {"hello", "=v1", ""}) {
    auto bad = ParseLabelFlags({flag});
    ASSERT_FALSE(bad.ok()) << flag;
    EXPECT_EQ(bad.status().message(),
              "\"" + std::string(flag) + "\": expected TARGET=VALUE, such as hello=v1.4.2");
  }
  auto twice = ParseLabelFlags({"hello=v1", "hello=v2"});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(),
            "\"hello=v2\": target hello labelled twice; give each target one label");
}

TEST(LabelFlagsTest, TheFlagsLabelsAreAddedToTheText) {
  auto campaign = ParseCampaignText(kCampaign, "hello.toml", "/");
  ASSERT_TRUE(campaign.ok()) << campaign.status().ToString();
  auto unchanged = LabelCampaignText(*campaign, kCampaign, {});
  ASSERT_TRUE(unchanged.ok());
  EXPECT_EQ(*unchanged, kCampaign);
  auto text = LabelCampaignText(*campaign, kCampaign, {"hello=3f2a9c1"});
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, std::string(kCampaign) + "\n[labels]\nhello = \"3f2a9c1\"\n");
  auto empty = LabelCampaignText(*campaign, kCampaign, {"hello="});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(),
            "\"hello=\": expected a version string or a git commit of 1 to 256 printable "
            "characters after '=', got \"\"");
  auto unknown = LabelCampaignText(*campaign, kCampaign, {"nginx=1.22"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "\"nginx=1.22\": expected the name of a [[target]] (hello) before '=', got \"nginx\"");
}

}  // namespace
}  // namespace benchlab
