#include "common/utf8.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(Utf8Test, ValidTextPassesUnchanged) {
  for (const char* s : {"", "MPI_Allreduce", "caf\xC3\xA9", "\xE2\x82\xAC",
                        "\xF0\x9F\x9A\x80 launch", "\xF4\x8F\xBF\xBF"}) {
    EXPECT_TRUE(IsValidUtf8(s)) << s;
    EXPECT_EQ(RepairUtf8(s), s);
  }
}

TEST(Utf8Test, IllFormedSequencesBecomeOneReplacementEach) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(RepairUtf8("ab\xE2\x82"), "ab" + r);    // cut euro sign
  EXPECT_EQ(RepairUtf8("\xC0\xAF"), r);             // overlong '/'
  EXPECT_EQ(RepairUtf8("\xED\xA0\x80x"), r + "x");  // a surrogate
  EXPECT_EQ(RepairUtf8("\xF4\x90\x80\x80"), r);     // above U+10FFFF
  EXPECT_EQ(RepairUtf8("\xFF"
                       "a\x80"
                       "b"),
            r + "a" + r + "b");
  EXPECT_FALSE(IsValidUtf8("ab\xE2\x82"));
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));
  EXPECT_TRUE(IsValidUtf8(RepairUtf8("\xF0\x9F\x9A")));
}

TEST(Utf8Test, PrefixesEndOnCharacterBoundaries) {
  const std::string euro =
      "ab\xE2\x82\xAC"
      "c";  // a, b, euro (3), c
  EXPECT_EQ(Utf8Prefix(euro, 10), 6u);
  EXPECT_EQ(Utf8Prefix(euro, 6), 6u);
  EXPECT_EQ(Utf8Prefix(euro, 5), 5u);  // after the euro sign
  EXPECT_EQ(Utf8Prefix(euro, 4), 2u);  // inside it: before it
  EXPECT_EQ(Utf8Prefix(euro, 3), 2u);
  EXPECT_EQ(Utf8Prefix(euro, 2), 2u);
  EXPECT_EQ(Utf8Prefix("\x80\x80\x80\x80\x80", 4), 4u);  // no sequence
}

}  // namespace
}  // namespace meridian
