#include "agent/clock_estimator.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr int64_t kT = 1700000000000000000;
constexpr int64_t kSecond = 1000000000;

// A probe sent at true time `at` by a node whose clock reads true + offset,
// with one-way delays `up` and `down` and 1 us of collector processing.
ClockProbe Probe(int64_t at, int64_t offset, int64_t up, int64_t down) {
  return {at + offset, at + up, at + up + 1000, at + up + 1000 + down + offset};
}

TEST(ClockEstimatorTest, SymmetricDelaysGiveTheExactOffset) {
  ClockEstimator estimator;
  EXPECT_FALSE(estimator.has_model());
  ASSERT_TRUE(estimator.AddBurst({Probe(kT, 5000000, 40000, 40000)}));
  const v1::ClockModel model = estimator.Model();
  EXPECT_EQ(model.offset_ns(), 5000000);
  EXPECT_EQ(model.drift_ppb(), 0);
  EXPECT_EQ(model.reference_ns(), kT + 5000000 + 40500);
  EXPECT_EQ(model.uncertainty_ns(), 40000);  // half the 80 us round trip
}

TEST(ClockEstimatorTest, ABurstKeepsItsShortestRoundTrip) {
  ClockEstimator estimator;
  // Delays 300/100 us (error 100 us), 50/30 us (error 10 us), 900/20 us.
  ASSERT_TRUE(estimator.AddBurst({Probe(kT, -7000, 300000, 100000),
                                  Probe(kT + 1000000, -7000, 50000, 30000),
                                  Probe(kT + 2000000, -7000, 900000, 20000)}));
  const v1::ClockModel model = estimator.Model();
  // theta = offset - (up - down) / 2.
  EXPECT_EQ(model.offset_ns(), -7000 - 10000);
  EXPECT_EQ(model.uncertainty_ns(), 40000);
}

TEST(ClockEstimatorTest, FitsDriftAcrossBursts) {
  // 80 ppm fast: offset 1 ms at kT, +80 us per second; symmetric delays.
  ClockEstimator estimator;
  for (int i = 0; i <= 10; ++i) {
    const int64_t at = kT + i * kSecond;
    ASSERT_TRUE(
        estimator.AddBurst({Probe(at, 1000000 + 80000 * i, 20000, 20000)}));
  }
  const v1::ClockModel model = estimator.Model();
  // Per ns of node time, which runs 80 ppm fast: 80000 / 1.00008.
  EXPECT_EQ(model.drift_ppb(), 79994);
  // At the newest burst (true kT + 10 s): 1 ms + 800 us.
  EXPECT_EQ(model.offset_ns(), 1800000);
  EXPECT_EQ(model.uncertainty_ns(), 20000);
}

TEST(ClockEstimatorTest, IgnoresBurstsSlowedByLoadAndProbesOutOfOrder) {
  ClockEstimator estimator;
  ASSERT_TRUE(estimator.AddBurst({Probe(kT, 300, 10000, 10000)}));
  // Under load: 5 ms each way, and asymmetric: would say 300 - 1 ms.
  ASSERT_TRUE(estimator.AddBurst({Probe(kT + kSecond, 300, 7000000, 5000000)}));
  ASSERT_TRUE(estimator.AddBurst({Probe(kT + 2 * kSecond, 300, 10000, 10000)}));
  EXPECT_EQ(estimator.Model().offset_ns(), 300);
  EXPECT_EQ(estimator.Model().drift_ppb(), 0);
  // A reply "received" before its request was sent: not usable.
  EXPECT_FALSE(estimator.AddBurst({{kT, kT, kT, kT - 1}}));
  EXPECT_FALSE(estimator.AddBurst({}));
}

TEST(ClockEstimatorTest, ForgetsBurstsOutsideTheWindow) {
  ClockEstimator estimator(/*window=*/2);
  ASSERT_TRUE(estimator.AddBurst({Probe(kT, 0, 1000, 1000)}));
  ASSERT_TRUE(estimator.AddBurst({Probe(kT + kSecond, 9000, 1000, 1000)}));
  ASSERT_TRUE(estimator.AddBurst({Probe(kT + 2 * kSecond, 9000, 1000, 1000)}));
  EXPECT_EQ(estimator.Model().offset_ns(), 9000);
  EXPECT_EQ(estimator.Model().drift_ppb(), 0);
}

}  // namespace
}  // namespace meridian
