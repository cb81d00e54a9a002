#include "query/analysis/wait_states.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "testing/scenario_fixture.h"
#include "testing/scenario_job.h"

namespace meridian {
namespace {

// "pattern rank step: wait_ns xinstances <- rank:in:ns, ..." per entry.
std::vector<std::string> Lines(const WaitStatesResult& r) {
  std::vector<std::string> lines;
  for (const WaitPatternEntry& e : r.patterns) {
    std::string line =
        absl::StrCat(e.pattern, " ", e.rank, " ",
                     e.step ? absl::StrCat(*e.step) : std::string("-"), ": ",
                     e.wait_ns, " x", e.instances, " <-");
    for (const WaitCause& c : e.caused_by) {
      absl::StrAppend(&line, " ", c.rank, ":", c.in, ":", c.ns);
    }
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> Ranks(const WaitStatesResult& r) {
  std::vector<std::string> lines;
  for (const RankWaits& w : r.ranks) {
    lines.push_back(absl::StrCat(w.rank, " waited ", w.wait_ns, " short ",
                                 w.short_term_ns, " long ", w.long_term_ns));
  }
  return lines;
}

TEST(WaitStatesTest, ASlowRanksForwardMakesTheOthersWaitAtTheAllreduce) {
  auto f = ScenarioFixture::Load("slow-rank");
  ASSERT_NE(f, nullptr);
  const WaitStatesResult job = WaitStates(*f->graph, /*by_step=*/false);
  EXPECT_EQ(Lines(job), (std::vector<std::string>{
                            "wait_at_nxn 0 -: 8000000 x4 <- 2:forward:8000000",
                            "wait_at_nxn 1 -: 8000000 x4 <- 2:forward:8000000",
                            "wait_at_nxn 3 -: 8000000 x4 <- 2:forward:8000000",
                        }));
  EXPECT_EQ(Ranks(job), (std::vector<std::string>{
                            "0 waited 8000000 short 0 long 0",
                            "1 waited 8000000 short 0 long 0",
                            "2 waited 0 short 24000000 long 0",
                            "3 waited 8000000 short 0 long 0",
                        }));
  // By step: each step's wait beside the totals.
  const WaitStatesResult steps = WaitStates(*f->graph, /*by_step=*/true);
  ASSERT_EQ(steps.patterns.size(), 3u + 3u * 4u);
  EXPECT_EQ(Lines(steps)[3],
            "wait_at_nxn 0 0: 2000000 x1 <- 2:forward:2000000");
  EXPECT_EQ(Lines(steps)[14],
            "wait_at_nxn 3 3: 2000000 x1 <- 2:forward:2000000");
}

TEST(WaitStatesTest, AChainOfLateSendersIsChargedToItsRoots) {
  // Rank 0 computes 1 ms before its send to rank 1, which computes 1 ms
  // after receiving before its send to rank 2, and so on: rank 3's wait of
  // 3.1 ms is rank 0's compute (1 ms, through ranks 1 and 2), rank 1's
  // (1.05 ms: its receive's tail and compute, through rank 2) and rank
  // 2's own (1.05 ms).
  auto f = ScenarioFixture::Load("p2p-chain");
  ASSERT_NE(f, nullptr);
  const WaitStatesResult r = WaitStates(*f->graph, /*by_step=*/false);
  EXPECT_EQ(Lines(r), (std::vector<std::string>{
                          "late_sender 3 -: 3100000 x1 <- 1:compute:1050000 "
                          "2:compute:1050000 0:compute:1000000",
                          "late_sender 2 -: 2050000 x1 <- 1:compute:1050000 "
                          "0:compute:1000000",
                          "late_sender 1 -: 1000000 x1 <- 0:compute:1000000",
                      }));
  // Every ns charged once: 6.15 ms of waits, 6.15 ms of costs.
  EXPECT_EQ(Ranks(r), (std::vector<std::string>{
                          "0 waited 0 short 1000000 long 2000000",
                          "1 waited 1000000 short 1050000 long 1050000",
                          "2 waited 2050000 short 1050000 long 0",
                          "3 waited 3100000 short 0 long 0",
                      }));
}

TEST(WaitStatesTest, ASlowLinkMakesItsReceiverLateAtTheBarrier) {
  // Rank 2's receive over the slow link 1 -> 2 ends 1.9 ms after the
  // others': they wait at the barrier for rank 2, which was in MPI_Wait
  // (no wait state of its own: its sender had started before it waited).
  auto f = ScenarioFixture::Load("slow-link");
  ASSERT_NE(f, nullptr);
  const WaitStatesResult r = WaitStates(*f->graph, /*by_step=*/false);
  EXPECT_EQ(Lines(r),
            (std::vector<std::string>{
                "wait_at_barrier 0 -: 3800000 x2 <- 2:MPI_Wait:3800000",
                "wait_at_barrier 1 -: 3800000 x2 <- 2:MPI_Wait:3800000",
                "wait_at_barrier 3 -: 3800000 x2 <- 2:MPI_Wait:3800000",
            }));
  EXPECT_EQ(r.ranks[2].short_term_ns, 11400000);
}

TEST(WaitStatesTest, OneWaitOfEachPattern) {
  auto f = ScenarioFixture::Load("waits");
  ASSERT_NE(f, nullptr);
  const WaitStatesResult r = WaitStates(*f->graph, /*by_step=*/false);
  EXPECT_EQ(Lines(r),
            (std::vector<std::string>{
                "late_sender 0 -: 2000000 x1 <- 1:compute:2000000",
                "late_receiver 2 -: 1500000 x1 <- 3:compute:1500000",
                "early_reduce 0 -: 1000000 x1 <- 3:compute:1000000",
                "late_broadcast 0 -: 1000000 x1 <- 1:compute:1000000",
                "late_broadcast 2 -: 1000000 x1 <- 1:compute:1000000",
                "late_broadcast 3 -: 1000000 x1 <- 1:compute:1000000",
                "wait_at_barrier 1 -: 1000000 x1 <- 0:compute:1000000",
                "wait_at_barrier 2 -: 1000000 x1 <- 0:compute:1000000",
                "wait_at_barrier 3 -: 1000000 x1 <- 0:compute:1000000",
                "wait_at_nxn 0 -: 1000000 x1 <- 2:compute:1000000",
                "wait_at_nxn 1 -: 1000000 x1 <- 2:compute:1000000",
                "wait_at_nxn 3 -: 1000000 x1 <- 2:compute:1000000",
            }));
  EXPECT_EQ(Ranks(r), (std::vector<std::string>{
                          "0 waited 5000000 short 3000000 long 0",
                          "1 waited 2000000 short 5000000 long 0",
                          "2 waited 3500000 short 3000000 long 0",
                          "3 waited 3000000 short 2500000 long 0",
                      }));
}

}  // namespace
}  // namespace meridian
