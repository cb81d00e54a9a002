#include "common/json.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <regex>

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(JsonTest, EscapesQuotesBackslashesAndControlCharacters) {
  std::string out;
  AppendJsonString(&out, std::string("a\"b\\c\nd\te\x01 \xc3\xa9", 13));
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\nd\\te\\u0001 \xc3\xa9\"");
}

TEST(JsonTest, WritesMicrosecondsWithNanosecondPrecision) {
  std::string out;
  AppendMicros(&out, 0);
  out += " ";
  AppendMicros(&out, 1);
  out += " ";
  AppendMicros(&out, 123456789012345);
  out += " ";
  AppendMicros(&out, -1500);
  EXPECT_EQ(out, "0.000 0.001 123456789012.345 -1.500");
}

TEST(JsonTest, WritesFixedPointExactly) {
  std::string out;
  AppendFixedPoint(&out, 1234567890123456789, 9);
  out += " ";
  AppendFixedPoint(&out, -5, 3);
  out += " ";
  AppendFixedPoint(&out, std::numeric_limits<int64_t>::min(), 9);
  out += " ";
  AppendFixedPoint(&out, 42, 0);
  EXPECT_EQ(out, "1234567890.123456789 -0.005 -9223372036.854775808 42");
  EXPECT_EQ(FixedPoint(20053477, 3), "20053.477");
}

std::string Double(double v) {
  std::string out;
  AppendJsonDouble(&out, v);
  return out;
}

TEST(JsonTest, WritesDoublesAsTheShortestTextThatReadsBackExactly) {
  EXPECT_EQ(Double(0.1), "0.1");
  EXPECT_EQ(Double(0.123456789), "0.123456789");
  EXPECT_EQ(Double(1234567890123.0), "1234567890123.0");
  EXPECT_EQ(Double(0.0), "0.0");
  EXPECT_EQ(Double(-0.0), "-0.0");
  EXPECT_EQ(Double(1.0), "1.0");
  EXPECT_EQ(Double(-2.5), "-2.5");
  EXPECT_EQ(Double(9007199254740993.0), "9007199254740992.0");  // 2^53 + 1
  EXPECT_EQ(Double(9007199254740994.0), "9007199254740994.0");
  EXPECT_EQ(Double(9223372036854775807.0), "9223372036854775808.0");  // 2^63
  EXPECT_EQ(Double(1e300), "1e+300");
  EXPECT_EQ(Double(1e22), "1e+22");
  EXPECT_EQ(Double(1e-7), "1e-07");
  EXPECT_EQ(Double(std::numeric_limits<double>::denorm_min()), "5e-324");
  EXPECT_EQ(Double(std::numeric_limits<double>::min()),
            "2.2250738585072014e-308");
  EXPECT_EQ(Double(-std::numeric_limits<double>::max()),
            "-1.7976931348623157e+308");
  EXPECT_EQ(Double(std::nan("")), "null");
  EXPECT_EQ(Double(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(Double(-std::numeric_limits<double>::infinity()), "null");
}

// Every finite double, drawn as random bits, is written as a JSON number
// (RFC 8259's grammar) that reads back as the same bits.
TEST(JsonTest, EveryFiniteDoubleReadsBackBitForBit) {
  const std::regex json_number(
      R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
  std::mt19937_64 random(25);
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    uint64_t bits = random();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    const std::string text = Double(v);
    double back = 0;
    const auto r =
        std::from_chars(text.data(), text.data() + text.size(), back);
    ASSERT_EQ(r.ec, std::errc()) << text;
    ASSERT_EQ(r.ptr, text.data() + text.size()) << text;
    uint64_t back_bits;
    std::memcpy(&back_bits, &back, sizeof back);
    ASSERT_EQ(back_bits, bits) << text;
    if (i < 2000) {
      ASSERT_TRUE(std::regex_match(text, json_number)) << text;
    }
    ++checked;
  }
  EXPECT_GT(checked, 199000);
}

TEST(JsonTest, WritesIntegersAsDigits) {
  std::string out;
  AppendJsonNumber(&out, std::numeric_limits<int64_t>::max());
  out += " ";
  AppendJsonNumber(&out, std::numeric_limits<int64_t>::min());
  out += " ";
  AppendJsonNumber(&out, std::numeric_limits<uint64_t>::max());
  out += " ";
  AppendJsonNumber(&out, int32_t{-7});
  out += " ";
  AppendJsonNumber(&out, int64_t{9007199254740993});
  out += " ";
  AppendJsonNumber(&out, 0.5f);
  EXPECT_EQ(out,
            "9223372036854775807 -9223372036854775808 18446744073709551615 -7 "
            "9007199254740993 0.5");
}

}  // namespace
}  // namespace meridian
