#include "collector/args_blob.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(ArgsBlobTest, RoundTripsEveryType) {
  std::vector<EncodedArg> args(3);
  args[0].key_id = 5;
  args[0].type = EncodedArg::Type::kString;
  args[0].string_id = 300;
  args[1].key_id = 6;
  args[1].type = EncodedArg::Type::kInt;
  args[1].int_value = -123456789012LL;
  args[2].key_id = 7;
  args[2].type = EncodedArg::Type::kReal;
  args[2].real_value = 2.5;
  std::string blob = EncodeArgs(args);
  // 5,0,300(2 bytes) | 6,1,zigzag (6 bytes) | 7,2,8 bytes
  EXPECT_EQ(blob.size(), 4u + 8u + 10u);
  auto decoded = DecodeArgs(blob);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, args);
  EXPECT_TRUE(EncodeArgs({}).empty());
}

TEST(ArgsBlobTest, ReportsCorruption) {
  EXPECT_EQ(DecodeArgs(std::string("\x05", 1)).status().message(),
            "args blob is corrupt at byte 1: missing type");
  EXPECT_EQ(DecodeArgs(std::string("\x05\x09", 2)).status().message(),
            "args blob is corrupt at byte 2: unknown type");
  EXPECT_EQ(DecodeArgs(std::string("\x05\x02\x01", 3)).status().message(),
            "args blob is corrupt at byte 2: truncated real");
}

}  // namespace
}  // namespace meridian
