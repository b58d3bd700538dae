#include "cli/columns.h"

#include <gtest/gtest.h>

namespace benchlab {
namespace {

TEST(FormatColumnsTest, EachColumnIsAsWideAsItsWidestCellAndTheLastIsNotPadded) {
  EXPECT_EQ(
      FormatColumns({{"name", "state", "x"}, {"server-1", "ready", "-"}, {"l", "lost", "yes"}}),
      "name      state  x\n"
      "server-1  ready  -\n"
      "l         lost   yes\n");
  EXPECT_EQ(FormatColumns({}), "");
}

}  // namespace
}  // namespace benchlab
