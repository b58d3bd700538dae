#include "common/config_toml.h"

#include <gtest/gtest.h>

#include <string>

namespace benchlab::config {
namespace {

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(TomlNesting, DeepArrayIsRefusedWithFileAndLineInsteadOfCrashing) {
  // 10,000 levels (20 KB) overflowed toml11's recursive parser's stack before the scan.
  const std::string text = "name = \"x\"\n\nx = " + Repeat("[", 10000) + Repeat("]", 10000) + "\n";
  auto parsed = ParseToml(text, "deep.toml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("deep.toml:3: nesting deeper than 32 levels"),
            std::string::npos)
      << parsed.status().message();
}

TEST(TomlNesting, DeepInlineTablesAndDottedKeysAreRefused) {
  auto tables = ParseToml("x = " + Repeat("{a = ", 40) + "1" + Repeat("}", 40) + "\n", "t.toml");
  ASSERT_FALSE(tables.ok());
  EXPECT_NE(tables.status().message().find("t.toml:1: nesting"), std::string::npos);
  auto dotted = ParseToml("a" + Repeat(".a", 5000) + " = 1\n", "d.toml");
  ASSERT_FALSE(dotted.ok());
  EXPECT_NE(dotted.status().message().find("d.toml:1: nesting"), std::string::npos);
  auto header = ParseToml("[a" + Repeat(".a", 5000) + "]\n", "h.toml");
  ASSERT_FALSE(header.ok());
  EXPECT_NE(header.status().message().find("h.toml:1: nesting"), std::string::npos);
}

TEST(TomlNesting, ThirtyTwoLevelsParse) {
  auto ok = ParseToml("x = " + Repeat("[", 32) + "1" + Repeat("]", 32) + "\n", "ok.toml");
  EXPECT_TRUE(ok.ok()) << ok.status().message();
  auto over = ParseToml("x = " + Repeat("[", 33) + "1" + Repeat("]", 33) + "\n", "over.toml");
  EXPECT_FALSE(over.ok());
}

TEST(TomlNesting, BracketsInStringsAndCommentsDoNotCount) {
  const std::string text = "a = \"" + Repeat("[", 100) + "\"\n" + "b = '" + Repeat("{", 100) +
                           "'\n" + "# " + Repeat("[", 100) + "\n" + "c = \"\"\"\n" +
                           Repeat("[", 100) + "\n\"\"\"\n" + "d = '''" + Repeat("[", 50) + "'''\n" +
                           "e = \"esc \\\" [[[[\"\n" + "f = [1.5, 2.5, {g.h = 1}]\n";
  auto parsed = ParseToml(text, "s.toml");
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
}

TEST(TomlNesting, LineNumbersCountMultilineStrings) {
  const std::string text = "a = \"\"\"\none\ntwo\n\"\"\"\nb = " + Repeat("[", 40) + "\n";
  auto parsed = ParseToml(text, "m.toml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("m.toml:5: nesting"), std::string::npos)
      << parsed.status().message();
}

}  // namespace
}  // namespace benchlab::config

namespace benchlab::config {
namespace {

TEST(TomlShape, ALongLineIsRefusedWithItsNumberBeforeToml11ScansIt) {
  // One line of 100,000 numbers took toml11 minutes (it scans back along the line per value).
  std::string numbers;
  for (int i = 0; i < 100000; ++i) numbers += (i ? "," : "") + std::to_string(i);
  auto parsed = ParseToml("name = \"x\"\nx = [" + numbers + "]\n", "long.toml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("long.toml:2: line of"), std::string::npos)
      << parsed.status().message();
  EXPECT_NE(parsed.status().message().find("over the limit of 16384"), std::string::npos);
}

TEST(TomlShape, ManyShortLinesParseAndATooLargeTextIsRefused) {
  std::string lines = "x = [\n";
  for (int i = 0; i < 2000; ++i) lines += std::to_string(i) + ",\n";
  lines += "]\n";
  EXPECT_TRUE(ParseToml(lines, "ok.toml").ok());
  std::string huge(kMaxTomlBytes + 1, '\n');
  auto parsed = ParseToml(huge, "huge.toml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("huge.toml: 4194305 bytes, over the limit"),
            std::string::npos)
      << parsed.status().message();
}

}  // namespace
}  // namespace benchlab::config
