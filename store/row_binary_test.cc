#include "store/row_binary.h"

#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(RowBinaryTest, WritesWhatClickHouseReads) {
  RowBinaryWriter w;
  w.Int64(1);
  w.String("abc");
  w.UInt8(7);
  // The bytes ClickHouse 18.16 gave for SELECT 1, 'abc', 7 FORMAT RowBinary.
  EXPECT_EQ(w.bytes(), std::string("\x01\0\0\0\0\0\0\0\x03"
                                   "abc\x07",
                                   13));
  w.Clear();
  w.String(std::string(300, 'x'));  // a two-byte LEB128 length
  EXPECT_EQ(w.bytes().substr(0, 2), "\xac\x02");
  EXPECT_EQ(w.bytes().size(), 302u);
}

TEST(RowBinaryTest, ReadsBackEveryType) {
  RowBinaryWriter w;
  w.Int64(std::numeric_limits<int64_t>::min());
  w.Int32(-5);
  w.UInt8(255);
  w.Float64(2.5);
  w.String(std::string("a\0b", 3));
  w.ArraySize(2);
  RowBinaryReader r(w.bytes());
  int64_t i64;
  int32_t i32;
  uint8_t u8;
  double f;
  absl::string_view s;
  uint64_t n;
  ASSERT_TRUE(r.Int64(&i64) && r.Int32(&i32) && r.UInt8(&u8) && r.Float64(&f) &&
              r.String(&s) && r.ArraySize(&n));
  EXPECT_EQ(i64, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(i32, -5);
  EXPECT_EQ(u8, 255);
  EXPECT_EQ(f, 2.5);
  EXPECT_EQ(s, std::string("a\0b", 3));
  EXPECT_EQ(n, 2u);
  EXPECT_TRUE(r.done());
}

// A row cut anywhere reads as "not yet", leaving the reader where it was.
TEST(RowBinaryTest, TruncationLeavesTheReaderInPlace) {
  RowBinaryWriter w;
  w.Int64(42);
  w.String(std::string(200, 'y'));
  const std::string whole = w.Take();
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    RowBinaryReader r(absl::string_view(whole).substr(0, cut));
    int64_t v = 0;
    absl::string_view s;
    const bool first = r.Int64(&v);
    EXPECT_EQ(first, cut >= 8) << cut;
    if (first) {
      EXPECT_FALSE(r.String(&s)) << cut;
      EXPECT_EQ(r.offset(), 8u) << cut;
    } else {
      EXPECT_EQ(r.offset(), 0u) << cut;
    }
  }
}

TEST(RowBinaryTest, RefusesHostileLengths) {
  // 2^35: beyond kMaxLength.
  RowBinaryReader huge(std::string("\x80\x80\x80\x80\x80\x01", 6));
  absl::string_view s;
  EXPECT_FALSE(huge.String(&s));
  // Eleven continuation bytes: not a 64-bit LEB128 at all.
  RowBinaryReader endless(std::string(11, '\xff'));
  uint64_t n;
  EXPECT_FALSE(endless.ArraySize(&n));
}

}  // namespace
}  // namespace meridian
