#include "import/micros.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace meridian {
namespace {

int64_t Ns(const char* text) {
  int64_t ns = -12345;
  EXPECT_TRUE(MicrosToNs(text, &ns)) << text;
  return ns;
}

TEST(MicrosTest, ExactFromTheText) {
  EXPECT_EQ(Ns("0"), 0);
  EXPECT_EQ(Ns("12"), 12000);
  EXPECT_EQ(Ns("12.5"), 12500);
  EXPECT_EQ(Ns("-3.25"), -3250);
  // Epoch microseconds with three decimals: beyond a double's precision.
  EXPECT_EQ(Ns("1764000000123456.789"), 1764000000123456789);
  EXPECT_EQ(Ns("1.5e3"), 1500000);
  EXPECT_EQ(Ns("15E-1"), 1500);
  EXPECT_EQ(Ns("0.0004"), 0);
  EXPECT_EQ(Ns("0.0005"), 1);  // half away from zero
  EXPECT_EQ(Ns("-0.0005"), -1);
  EXPECT_EQ(Ns("0.00149999"), 1);
  EXPECT_EQ(Ns("1e-30"), 0);
}

TEST(MicrosTest, RefusesWhatIsNotAJsonNumberOrDoesNotFit) {
  int64_t ns = 0;
  for (const char* bad :
       {"", "-", "abc", "1.", ".5", "1e", "1e+", "12x", "0x10", "01", "+1",
        "9223372036854775808", "1e20", "\"12\""}) {
    EXPECT_FALSE(MicrosToNs(bad, &ns)) << bad;
  }
  EXPECT_TRUE(MicrosToNs("9223372036854775.807", &ns));
  EXPECT_EQ(ns, 9223372036854775807);
}

}  // namespace
}  // namespace meridian
