#include "agent/step_times.h"

#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr uint8_t kMpi = 1, kNccl = 2, kUser = 9, kC10d = 10;

std::vector<std::vector<int64_t>> Rows(const std::vector<StepTimes::Step>& s) {
  std::vector<std::vector<int64_t>> rows;
  for (const StepTimes::Step& step : s) {
    rows.push_back({step.step, step.dur_ns, step.comm_ns});
  }
  return rows;
}

TEST(StepTimesTest, EachStepWithItsCommunication) {
  StepTimes t;
  t.Add(1, kMpi, false, false, 300);
  t.Add(1, kMpi, false, false, 200);
  t.Add(1, kUser, false, false, 50);   // a phase: not communication
  t.Add(1, kNccl, false, true, 900);   // a GPU track: left out
  t.Add(1, kUser, true, false, 1000);  // step 1's own span
  t.Add(2, kUser, true, false, 800);   // step 2's, before its calls...
  t.Add(2, kC10d, false, false, 400);  // ...on another thread's ring
  t.Add(2, kMpi, false, false, 350);   // c10d over MPI: not twice
  EXPECT_EQ(Rows(t.Take()),
            (std::vector<std::vector<int64_t>>{{1, 1000, 500}, {2, 800, 400}}));
  EXPECT_TRUE(t.Take().empty());
  // A late call of a taken step counts nowhere; step 3 goes on.
  t.Add(2, kMpi, false, false, 999);
  t.Add(3, kMpi, false, false, 2000);  // longer than its step: capped
  t.Add(3, kUser, true, false, 1500);
  EXPECT_EQ(Rows(t.Take()),
            (std::vector<std::vector<int64_t>>{{3, 1500, 1500}}));
  EXPECT_EQ(t.dropped(), 0u);
}

// A second's steps of a fast job, each with its calls, some read after the
// step's own span (another thread's ring): every one keeps its calls.
TEST(StepTimesTest, AThousandStepsBetweenTwoTakes) {
  StepTimes t;
  for (int64_t step = 0; step < 1000; ++step) {
    t.Add(step, kMpi, false, false, 100);
    t.Add(step, kUser, true, false, 1000);
    t.Add(step, kMpi, false, false, 50);
  }
  const std::vector<StepTimes::Step> taken = t.Take();
  ASSERT_EQ(taken.size(), 1000u);
  for (const StepTimes::Step& s : taken) {
    ASSERT_EQ(s.comm_ns, 150) << "step " << s.step;
  }
}

TEST(StepTimesTest, Bounded) {
  StepTimes t;
  for (int64_t step = 0; step < 5000; ++step) {
    t.Add(step, kMpi, false, false, 1);  // steps never ended: forgotten
  }
  for (int64_t step = 0; step < 2000; ++step) {
    t.Add(10000 + step, kUser, true, false, 10);
  }
  const std::vector<StepTimes::Step> taken = t.Take();
  ASSERT_EQ(taken.size(), StepTimes::kMaxDone);
  EXPECT_EQ(taken.front().step, 10000 + 2000 - 1024);
  EXPECT_EQ(t.dropped(), 2000u - 1024u);
}

TEST(StepTimesTest, PointToPointCallsSummedPerPeer) {
  StepTimes t;
  t.Add(1, kMpi, false, false, 300, 2, 1024);
  t.Add(1, kMpi, false, false, 100, 0, 64);
  t.Add(1, kMpi, false, false, 200, 2, 1024);
  t.Add(1, kMpi, false, false, 50, 2, 0);       // no payload: not a transfer
  t.Add(1, kMpi, false, false, 70);             // a collective: no peer
  for (int32_t peer = 10; peer < 20; ++peer) {  // 8 peers at most
    t.Add(1, kMpi, false, false, 1, peer, 1);
  }
  t.Add(1, kUser, true, false, 1000);
  const std::vector<StepTimes::Step> steps = t.Take();
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].comm_ns, 730);
  std::vector<std::vector<int64_t>> peers;
  for (const StepTimes::Peer& p : steps[0].peers) {
    peers.push_back({p.peer, p.ns, p.bytes});
  }
  EXPECT_EQ(peers, (std::vector<std::vector<int64_t>>{{2, 500, 2048},
                                                      {0, 100, 64},
                                                      {10, 1, 1},
                                                      {11, 1, 1},
                                                      {12, 1, 1},
                                                      {13, 1, 1},
                                                      {14, 1, 1},
                                                      {15, 1, 1}}));
}

}  // namespace
}  // namespace meridian
