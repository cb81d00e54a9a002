#include "agent/probe_args.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(ProbeArgsTest, NumbersTextAndJunk) {
  const std::vector<ProbeArg> args =
      ParseProbeArgs("bucket=3;phase=fwd;=x;junk;;big=99999999999999999999");
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0].key, "bucket");
  EXPECT_TRUE(args[0].is_number);
  EXPECT_EQ(args[0].number, 3);
  EXPECT_EQ(args[1].key, "phase");
  EXPECT_FALSE(args[1].is_number);
  EXPECT_EQ(args[1].text, "fwd");
  EXPECT_FALSE(args[2].is_number);  // beyond int64: kept as text
  EXPECT_EQ(args[2].text, "99999999999999999999");
}

// Integers across int64's range are numbers, exactly; any other text
// (a decimal, an exponent) stays the text the process wrote, unrounded.
TEST(ProbeArgsTest, Int64ExtremesAreExactAndDecimalsStayText) {
  const std::vector<ProbeArg> args = ParseProbeArgs(
      "max=9223372036854775807;min=-9223372036854775808;p=9007199254740993;"
      "loss=0.123456789;big=1234567890123.0;e=1e300");
  ASSERT_EQ(args.size(), 6u);
  EXPECT_TRUE(args[0].is_number);
  EXPECT_EQ(args[0].number, INT64_MAX);
  EXPECT_TRUE(args[1].is_number);
  EXPECT_EQ(args[1].number, INT64_MIN);
  EXPECT_TRUE(args[2].is_number);
  EXPECT_EQ(args[2].number, 9007199254740993);
  for (size_t i = 3; i < 6; ++i) EXPECT_FALSE(args[i].is_number) << i;
  EXPECT_EQ(args[3].text, "0.123456789");
  EXPECT_EQ(args[4].text, "1234567890123.0");
  EXPECT_EQ(args[5].text, "1e300");
}

TEST(ProbeArgsTest, BoundedWhateverTheProcessWrites) {
  std::string many;
  for (int i = 0; i < 1000; ++i) many += "k" + std::to_string(i) + "=1;";
  EXPECT_EQ(ParseProbeArgs(many).size(), kMaxProbeArgs);
  const std::vector<ProbeArg> long_ones = ParseProbeArgs(
      std::string(300, 'k') + "=" + std::string(4094, 'v') + "\xE2\x82\xAC");
  ASSERT_EQ(long_ones.size(), 1u);
  EXPECT_EQ(long_ones[0].key.size(), kMaxArgKeyBytes);
  EXPECT_EQ(long_ones[0].text.size(), 4094u);  // not inside the euro sign
}

}  // namespace
}  // namespace meridian
