#include "cli/columns.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

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

TEST(FormatColumnsTest, ACellWithControlCharactersStaysOnItsLineEscaped) {
  // A dashboard path that forges an audit row of its own and clears the screen.
  const std::string path = "/api/v1/x\n2026-12-01T10:00:00.000Z  local:root  \x1b[2J";
  const std::string out = FormatColumns({{"about", "outcome"}, {path, "refused"}});
  const std::string shown = "/api/v1/x\\n2026-12-01T10:00:00.000Z  local:root  \\x1b[2J";
  EXPECT_EQ(out,
            "about" + std::string(shown.size() - 5 + 2, ' ') + "outcome\n" + shown + "  refused\n");
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2);
}

TEST(FormatColumnsTest, ColumnsLineUpByCharactersNotBytes) {
  EXPECT_EQ(FormatColumns({{"outcome", "x"}, {"refused ×500", "-"}, {"ok", "-"}}),
            "outcome       x\n"
            "refused ×500  -\n"
            "ok            -\n");
}

}  // namespace
}  // namespace benchlab
