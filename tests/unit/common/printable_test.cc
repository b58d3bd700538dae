#include "common/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace benchlab {
namespace {

TEST(PrintableTextTest, PrintableUtf8StaysAsItIs) {
  EXPECT_EQ(PrintableText("nginx 1.22 · µs ✓ 東京"), "nginx 1.22 · µs ✓ 東京");
  EXPECT_EQ(PrintableText(""), "");
}

TEST(PrintableTextTest, AForgedSecondLineAndAnEscapeSequenceStayOnOneLine) {
  const std::string forged =
      "/api/v1/x\n2026-12-01T10:00:00.000Z  local:root  local  TokenCreate\x1b[2J\r\t\x7f";
  const std::string shown = PrintableText(forged);
  EXPECT_EQ(shown,
            "/api/v1/x\\n2026-12-01T10:00:00.000Z  local:root  local  TokenCreate\\x1b[2J\\r\\t"
            "\\x7f");
  for (char c : shown) {
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << shown;
  }
}

TEST(PrintableTextTest, C1ControlsSeparatorsAndBidiMarksAreEscaped) {
  // U+009B is CSI to a terminal that reads C1 controls; U+202E reverses what follows.
  EXPECT_EQ(PrintableText("a\xc2\x9b"
                          "2Jb"),
            "a\\u009b2Jb");
  EXPECT_EQ(PrintableText("x\xe2\x80\xa8y\xe2\x80\xaez\xe2\x81\xa6"), "x\\u2028y\\u202ez\\u2066");
  EXPECT_EQ(PrintableText("\xc2\xa0"), "\xc2\xa0") << "U+00A0 is printable";
}

TEST(PrintableTextTest, BytesThatAreNotUtf8AreEscapedOneByOne) {
  EXPECT_EQ(PrintableText("a\xff\xfe"
                          "b"),
            "a\\xff\\xfeb");
  // An overlong '/' and a lone surrogate.
  EXPECT_EQ(PrintableText("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(PrintableText("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  // A character cut short at the end.
  EXPECT_EQ(PrintableText("ok\xe6\x9d"), "ok\\xe6\\x9d");
}

TEST(PrintableTextTest, ABackslashIsDoubledSoNoEscapeCanBeForged) {
  // A peer that writes the four characters \x1b gets them shown as five, unlike a real ESC.
  EXPECT_EQ(PrintableText("\\x1b"), "\\\\x1b");
  EXPECT_NE(PrintableText("\\x1b"), PrintableText("\x1b"));
}

TEST(FirstUnprintableTest, FindsTheFirstControlOrBadByte) {
  EXPECT_EQ(FirstUnprintable("Intel(R) Xeon(R) CPU @ 2.20GHz"), std::string_view::npos);
  EXPECT_EQ(FirstUnprintable("a\\b · é"), std::string_view::npos) << "backslashes are printable";
  EXPECT_EQ(FirstUnprintable("box\x1b[2J"), 3u);
  EXPECT_EQ(FirstUnprintable("box\nFAKE"), 3u);
  EXPECT_EQ(FirstUnprintable("é\xff"), 2u);
  EXPECT_EQ(FirstUnprintable("ab\xc2\x85"), 2u);
}

TEST(TruncatedTest, KeepsWhatFitsAndCountsWhatIsCut) {
  EXPECT_EQ(Truncated("short", 256), "short");
  EXPECT_EQ(Truncated(std::string(256, 'x'), 256), std::string(256, 'x'));
  const std::string big(3 << 20, 'x');
  const std::string cut = Truncated(big, 256);
  EXPECT_EQ(cut, std::string(256, 'x') + "…[+3145472 bytes]");
}

TEST(TruncatedTest, NeverCutsACharacterInTwo) {
  // "é" is two bytes: 255 ASCII bytes and then an é straddle the 256th byte.
  const std::string text = std::string(255, 'a') + "é" + "tail";
  const std::string cut = Truncated(text, 256);
  EXPECT_EQ(cut, std::string(255, 'a') + "…[+6 bytes]");
  EXPECT_EQ(FirstUnprintable(cut), std::string_view::npos);
  // Four-byte characters throughout: the cut falls on a character's start.
  std::string emoji;
  for (int i = 0; i < 100; ++i) emoji += "😀";
  EXPECT_EQ(Truncated(emoji, 10), "😀😀…[+392 bytes]");
  // Bytes that are not UTF-8 at all are cut at the limit.
  EXPECT_EQ(Truncated(std::string(10, '\x80'), 4), std::string(4, '\x80') + "…[+6 bytes]");
}

}  // namespace
}  // namespace benchlab
