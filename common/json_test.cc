#include "common/json.h"

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

}  // namespace
}  // namespace meridian
