#include "common/crc32c.h"

#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

// Check values from RFC 3720 (iSCSI), appendix B.4.
TEST(Crc32cTest, KnownValues) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
}

TEST(Crc32cTest, ChainsAndSeesEveryBit) {
  const std::string a = "the spool keeps ", b = "every acknowledged span";
  EXPECT_EQ(Crc32c(b, Crc32c(a)), Crc32c(a + b));
  std::string flipped = a + b;
  flipped[5] ^= 0x01;
  EXPECT_NE(Crc32c(flipped), Crc32c(a + b));
}

}  // namespace
}  // namespace meridian
