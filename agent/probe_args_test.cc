#include "agent/probe_args.h"

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
