#include "cli/text_width.h"

#include <gtest/gtest.h>

#include "common/text_table.h"

namespace benchlab {
namespace {

TEST(TextWidthTest, TheFlagWinsThenAWideTerminalThenOneHundred) {
  EXPECT_EQ(ResolveTextWidth(0, 0), kDefaultTextWidth) << "not a terminal";
  EXPECT_EQ(ResolveTextWidth(0, 80), 100) << "a narrow terminal still gets 100";
  EXPECT_EQ(ResolveTextWidth(0, 180), 180) << "a wide terminal is used";
  EXPECT_EQ(ResolveTextWidth(60, 180), 60) << "--width wins";
  EXPECT_EQ(ResolveTextWidth(240, 0), 240);
}

TEST(TextWidthTest, TheFlagIsCheckedWhileParsing) {
  CLI::App app;
  AddWidthOption(&app);
  EXPECT_THROW(app.parse(std::vector<std::string>{"10", "--width"}), CLI::ValidationError);
  EXPECT_THROW(app.parse(std::vector<std::string>{"wide", "--width"}), CLI::ParseError);
  app.parse(std::vector<std::string>{"132", "--width"});  // CLI11 takes the vector reversed
  EXPECT_EQ(OutputWidth(), 132);
}

}  // namespace
}  // namespace benchlab
