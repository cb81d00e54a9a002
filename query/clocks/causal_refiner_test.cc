#include "query/clocks/causal_refiner.h"

#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

using Kind = SpanRole;

CausalSpan Collective(Kind kind, int node, int rank, uint64_t seq,
                      int64_t start, int64_t end, int root = -1) {
  CausalSpan s;
  s.role = kind;
  s.node = node;
  s.rank = rank;
  s.comm = 1;
  s.seq = seq;
  s.peer = root;
  s.start = start;
  s.end = end;
  return s;
}

CausalSpan PointToPoint(Kind kind, int node, int rank, int peer, int64_t start,
                        int64_t end) {
  CausalSpan s;
  s.role = kind;
  s.node = node;
  s.rank = rank;
  s.comm = 1;
  s.peer = peer;
  s.tag = 5;
  s.start = start;
  s.end = end;
  return s;
}

// A Sendrecv of `rank` on `node` with the other rank (tag 5 both ways).
CausalSpan Exchange(int node, int rank, int other, int64_t start, int64_t end) {
  CausalSpan s = PointToPoint(Kind::kSendRecv, node, rank, other, start, end);
  s.recv_peer = other;
  s.recv_tag = 5;
  return s;
}

// Two barriers on two nodes. The second says x1 - x0 <= -50 (rank 0 ended
// at 1100, before rank 1 entered at 1150) and x0 - x1 <= 160; the first
// says x1 - x0 <= 50 and x0 - x1 <= 420. So x1 - x0 is in [-160, -50].
TEST(CausalRefinerTest, BarriersBoundTheNodesOffsetsAndRemoveViolations) {
  CausalRefiner refiner(2);
  refiner.Add(Collective(Kind::kAllToAll, 0, 0, 0, 100, 500));
  refiner.Add(Collective(Kind::kAllToAll, 1, 1, 0, 450, 520));
  refiner.Add(Collective(Kind::kAllToAll, 0, 0, 1, 1000, 1100));
  refiner.Add(Collective(Kind::kAllToAll, 1, 1, 1, 1150, 1160));
  const Refinement r = refiner.Solve({1000, 1000});
  ASSERT_TRUE(r.refined) << r.note;
  EXPECT_EQ(r.constraints, 4);
  EXPECT_EQ(r.violations_before, 1);
  EXPECT_EQ(r.violations_after, 0);
  // Both ranges are 1950 wide: node 0 is fixed first, at the point of
  // [-950, 1000] closest to 0; then node 1 in [0 - 160, 0 - 50].
  EXPECT_EQ(r.correction_ns, (std::vector<int64_t>{0, -50}));
  EXPECT_EQ(r.note, "");
}

// A job claiming 100,000 nodes (a client chooses how many): refined like
// any other, in memory for its nodes and the pairs that communicate, not
// their square (the dense solve allocated nothing here and corrected
// nothing: it stopped at 512 nodes).
TEST(CausalRefinerTest, ManyNodesAreRefinedSparsely) {
  CausalRefiner refiner(100000);
  refiner.Add(Collective(Kind::kAllToAll, 0, 0, 1, 1000, 1100));
  refiner.Add(Collective(Kind::kAllToAll, 99999, 1, 1, 1150, 1160));
  const Refinement r = refiner.Solve(std::vector<int64_t>(100000, 1000));
  ASSERT_TRUE(r.refined) << r.note;
  EXPECT_EQ(r.violations_before, 1);
  EXPECT_EQ(r.violations_after, 0);
  // x_99999 - x_0 <= 1100 - 1150: node 99999 (fixed after node 0, at 0:
  // both 2000 wide, the lower first) moves 50 ns earlier.
  std::vector<int64_t> expected(100000, 0);
  expected[99999] = -50;
  EXPECT_EQ(r.correction_ns, expected);
  EXPECT_EQ(r.note, "");
}

// An instance over more than 32 nodes bounds only the pairs of its latest
// start's node (39, entered at 2000; the others at 1000) and its earliest
// end's node (5, left at 1900; the others at 2100): x39 - x5 <= -100 is
// the binding one, so node 39 moves 100 earlier and nothing else moves.
TEST(CausalRefinerTest, AWideInstanceBoundsItsLatestAndEarliestNodes) {
  CausalRefiner refiner(40);
  for (int n = 0; n < 40; ++n) {
    refiner.Add(Collective(Kind::kAllToAll, n, n, 7, n == 39 ? 2000 : 1000,
                           n == 5 ? 1900 : 2100));
  }
  const Refinement r = refiner.Solve(std::vector<int64_t>(40, 1000));
  ASSERT_TRUE(r.refined) << r.note;
  EXPECT_EQ(r.constraints, 40);
  EXPECT_EQ(r.violations_before, 1);
  EXPECT_EQ(r.violations_after, 0);
  std::vector<int64_t> expected(40, 0);
  expected[39] = -100;
  EXPECT_EQ(r.correction_ns, expected);
}

// A neighbor collective bounds only what its sources say: rank 1 (node 1)
// receives from rank 0 (node 0), so its end at 900 must follow rank 0's
// start at 1000: x0 - x1 <= -100, so node 1 moves 100 later. Rank 0 lists
// no source: its end bounds nothing (an all-to-all instance would have it
// follow rank 1's start too). Add copies rank 1's list: it need not outlive
// the call.
TEST(CausalRefinerTest, NeighborCollectivesBoundOnlyTheirSources) {
  CausalRefiner refiner(2);
  refiner.Add(Collective(Kind::kNeighbor, 0, 0, 0, 1000, 1010));
  {
    const std::vector<int32_t> from_rank_0 = {0};
    CausalSpan rank_1 = Collective(Kind::kNeighbor, 1, 1, 0, 800, 900);
    rank_1.sources = from_rank_0;
    refiner.Add(rank_1);
  }
  const Refinement r = refiner.Solve({1000, 1000});
  ASSERT_TRUE(r.refined) << r.note;
  EXPECT_EQ(r.constraints, 1);
  EXPECT_EQ(r.violations_before, 1);
  EXPECT_EQ(r.violations_after, 0);
  EXPECT_EQ(r.correction_ns, (std::vector<int64_t>{0, 100}));
}

// Generalized active target: rank 1 (node 1) exposes its window to rank 0
// (node 0), which accesses it. Rank 1's Win_wait ends at 900, before rank
// 0's Win_complete starts at 1000: x0 - x1 <= -100, so node 1 moves 100
// later. Rank 0's Win_start returned (450) after rank 1's Win_post began
// (400), which would say x1 - x0 <= 50 if it were used; it is not (whether
// a start waited is read from the times being corrected): one constraint.
TEST(CausalRefinerTest, WinWaitFollowsTheMatchedWinCompleteOnly) {
  CausalRefiner refiner(2);
  const std::vector<int32_t> rank_0 = {0}, rank_1 = {1};
  CausalSpan start = PointToPoint(Kind::kStart, 0, 0, -1, 300, 450);
  start.sources = rank_1;
  refiner.Add(start);
  refiner.Add(PointToPoint(Kind::kComplete, 0, 0, -1, 1000, 1010));
  CausalSpan post = PointToPoint(Kind::kPost, 1, 1, -1, 400, 410);
  post.sources = rank_0;
  refiner.Add(post);
  refiner.Add(PointToPoint(Kind::kWinWait, 1, 1, -1, 800, 900));
  // A lock is no part of it.
  refiner.Add(PointToPoint(Kind::kLock, 0, 0, 1, 2000, 2010));
  const Refinement r = refiner.Solve({1000, 1000});
  ASSERT_TRUE(r.refined) << r.note;
  EXPECT_EQ(r.constraints, 1);
  EXPECT_EQ(r.violations_before, 1);
  EXPECT_EQ(r.violations_after, 0);
  EXPECT_EQ(r.correction_ns, (std::vector<int64_t>{0, 100}));
}

TEST(CausalRefinerTest, MatchesSendsToReceivesAndRootsToMembers) {
  CausalRefiner refiner(2);
  // Rank 1's receive "ends" at 90, before rank 0's send started at 100:
  // x0 - x1 <= -10. Then rank 1 sends back, received by rank 0.
  refiner.Add(PointToPoint(Kind::kSend, 0, 0, 1, 100, 110));
  refiner.Add(PointToPoint(Kind::kRecv, 1, 1, 0, 50, 90));
  refiner.Add(PointToPoint(Kind::kSend, 1, 1, 0, 200, 210));
  refiner.Add(PointToPoint(Kind::kRecv, 0, 0, 1, 150, 300));
  // Reduce to root 0: the root ends (700) after rank 1 entered (600), so
  // x1 - x0 <= 100; rank 1 ending at 610 says nothing.
  refiner.Add(Collective(Kind::kRootIn, 0, 0, 0, 500, 700, 0));
  refiner.Add(Collective(Kind::kRootIn, 1, 1, 0, 600, 610, 0));
  // A send nobody received: no constraint.
  refiner.Add(PointToPoint(Kind::kSend, 0, 0, 1, 900, 910));
  const Refinement r = refiner.Solve({1000, 1000});
  ASSERT_TRUE(r.refined);
  EXPECT_EQ(r.constraints, 3);
  EXPECT_EQ(r.violations_before, 1);
  EXPECT_EQ(r.violations_after, 0);
  EXPECT_LE(r.correction_ns[0] - r.correction_ns[1], -10);
  EXPECT_LE(r.correction_ns[1] - r.correction_ns[0], 100);
}

TEST(CausalRefinerTest, WidensProbeBoundsThatContradictCausality) {
  CausalRefiner refiner(2);
  refiner.Add(Collective(Kind::kAllToAll, 0, 0, 0, 1000, 1100));
  refiner.Add(Collective(Kind::kAllToAll, 1, 1, 0, 1150, 1160));
  // x1 - x0 <= -50 cannot hold with |x| <= 10; with |x| <= 40 it can.
  const Refinement r = refiner.Solve({10, 10});
  ASSERT_TRUE(r.refined);
  EXPECT_EQ(r.note, "the probe bounds contradicted causality; widened 4x");
  EXPECT_EQ(r.violations_after, 0);
  EXPECT_LE(r.correction_ns[1] - r.correction_ns[0], -50);
}

TEST(CausalRefinerTest, RelaxesCausalityThatContradictsItselfByTheLeastSlack) {
  CausalRefiner refiner(2);
  // Send 0 -> 1 says x0 - x1 <= -10; a Bcast from root 1 that rank 0 left
  // before the root entered says x1 - x0 <= -50: 60 ns apart, so each
  // bound is loosened by 30 and x0 - x1 = 20.
  CausalSpan recv = PointToPoint(Kind::kRecv, 1, 1, 0, 50, 90);
  recv.id = 2;
  CausalSpan member = Collective(Kind::kRootOut, 0, 0, 0, 400, 450, 1);
  member.id = 4;
  refiner.Add(PointToPoint(Kind::kSend, 0, 0, 1, 100, 110));
  refiner.Add(recv);
  refiner.Add(Collective(Kind::kRootOut, 1, 1, 0, 500, 510, 1));
  refiner.Add(member);
  const Refinement r = refiner.Solve({1000, 1000});
  ASSERT_TRUE(r.refined);
  EXPECT_EQ(r.correction_ns, (std::vector<int64_t>{0, -20}));
  EXPECT_EQ(r.violations_before, 2);
  EXPECT_EQ(r.violations_after, 2);  // each by 30 ns instead of 10 and 50
  // Moving the receive's end and rank 0's Bcast end 30 ns later clears
  // them.
  ASSERT_EQ(r.adjustments.size(), 2u);
  EXPECT_EQ(r.adjustments[0].id, 2u);
  EXPECT_EQ(r.adjustments[0].end_shift_ns, 30);
  EXPECT_EQ(r.adjustments[1].id, 4u);
  EXPECT_EQ(r.adjustments[1].end_shift_ns, 30);
  EXPECT_EQ(r.note,
            "the causal constraints contradict each other by up to 30 ns "
            "(each node's error varies during the job): relaxed by that");
}

TEST(CausalRefinerTest, ViolationsWithinOneNodeStayCounted) {
  CausalRefiner refiner(2);
  refiner.Add(Collective(Kind::kAllToAll, 0, 0, 0, 100, 150));
  refiner.Add(Collective(Kind::kAllToAll, 0, 1, 0, 200, 250));
  const Refinement r = refiner.Solve({1000, 1000});
  ASSERT_TRUE(r.refined);
  EXPECT_EQ(r.violations_before, 1);
  EXPECT_EQ(r.violations_after, 1);
  EXPECT_EQ(r.correction_ns, (std::vector<int64_t>{0, 0}));
}

// Two ranks on two nodes exchange with MPI_Sendrecv: each ends no earlier
// than the other's started. Rank 1's exchange "ends" at 140, before rank
// 0's started at 150 (x0 - x1 <= -10); rank 0's ends at 300, after rank 1
// started at 100 (x1 - x0 <= 200).
TEST(CausalRefinerTest, ASendrecvBoundsAsTheSendAndTheReceiveItIs) {
  CausalRefiner refiner(2);
  refiner.Add(Exchange(0, 0, 1, 150, 300));
  refiner.Add(Exchange(1, 1, 0, 100, 140));
  const Refinement r = refiner.Solve({1000, 1000});
  ASSERT_TRUE(r.refined);
  EXPECT_EQ(r.constraints, 2);
  EXPECT_EQ(r.violations_before, 1);
  EXPECT_EQ(r.violations_after, 0);
  EXPECT_LE(r.correction_ns[0] - r.correction_ns[1], -10);
  EXPECT_LE(r.correction_ns[1] - r.correction_ns[0], 200);
}

// Settling: a message leaves the open spans with both its spans final, and
// a Sendrecv only once both of its messages do. Rank 0's second exchange
// (2) is received by rank 1's plain receive (3), both final, but receives
// from rank 1's send (4), not final yet: neither of 2's messages settles,
// or its receive, left open alone, would be paired again with a later
// send of its channel.
TEST(CausalRefinerTest, ASendrecvSettlesOnlyWithBothOfItsMessages) {
  CausalRefiner refiner(2);
  refiner.Add(Exchange(0, 0, 1, 100, 200));                   // 0
  refiner.Add(Exchange(1, 1, 0, 150, 250));                   // 1
  refiner.Add(Exchange(0, 0, 1, 300, 400));                   // 2
  refiner.Add(PointToPoint(Kind::kRecv, 1, 1, 0, 310, 420));  // 3
  refiner.Add(PointToPoint(Kind::kSend, 1, 1, 0, 900, 910));  // 4
  refiner.Solve({1000, 1000});
  SettledGroups settled;
  std::vector<bool> open =
      refiner.Settle([](int32_t i) { return i != 4; }, 0, &settled);
  EXPECT_EQ(open, (std::vector<bool>{false, false, true, true, true}));
  EXPECT_EQ(settled.groups(), 2);
  // Once 4 is final, everything settles.
  SettledGroups all;
  open = refiner.Settle([](int32_t) { return true; }, 0, &all);
  EXPECT_EQ(open, (std::vector<bool>(5, false)));
  EXPECT_EQ(all.groups(), 4);
}

}  // namespace
}  // namespace meridian
