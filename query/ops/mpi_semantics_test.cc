#include "query/ops/mpi_semantics.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "capture/probe/mpi_ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

std::vector<int32_t> Ids(absl::Span<const int32_t> ids) {
  return std::vector<int32_t>(ids.begin(), ids.end());
}

MpiMatching Match(const std::vector<MpiOp>& ops) {
  return MpiMatching(static_cast<int32_t>(ops.size()),
                     [&ops](int32_t i) { return ops[i]; });
}

MpiOp Collective(SpanRole role, int32_t rank, uint64_t seq, int64_t start,
                 int32_t root = -1) {
  return MpiOp{role, rank, root, 0, /*comm=*/7, seq, true, start};
}

MpiOp Message(SpanRole role, int32_t rank, int32_t peer, int32_t tag,
              int64_t start) {
  return MpiOp{role, rank, peer, tag, /*comm=*/7, 0, false, start};
}

// A Win_lock(_all) or Win_unlock(_all) of `rank` on window 9, from start to
// end.
MpiOp Lock(SpanRole role, int32_t rank, int32_t target, int64_t start,
           int64_t end) {
  return MpiOp{role, rank, target, 0, /*comm=*/9, 0, false, start, end};
}

// A Win_post, Win_start, Win_complete or Win_wait of `rank` on window 9;
// `group` (a post's or start's) must outlive the matching.
MpiOp Epoch(SpanRole role, int32_t rank, int64_t start, int64_t end,
            const std::vector<int32_t>& group = {}) {
  MpiOp op{role, rank, -1, 0, /*comm=*/9, 0, false, start, end};
  op.sources = group;
  return op;
}

// A group as (starts, ends, last).
using GroupIds =
    std::tuple<std::vector<int32_t>, std::vector<int32_t>, int32_t>;

GroupIds IdsOf(const MpiMatching::Group& g) {
  return {Ids(g.starts), Ids(g.ends), g.last};
}

std::vector<GroupIds> InstanceGroups(const MpiMatching& m, int64_t k) {
  std::vector<GroupIds> groups;
  m.ForEachInstanceGroup(k, [&groups](const MpiMatching::Group& g) {
    groups.push_back(IdsOf(g));
  });
  return groups;
}

TEST(MpiSemanticsTest, RolesFromCategoryAndName) {
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Iallreduce"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Gatherv"), SpanRole::kRootIn);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Bcast"), SpanRole::kRootOut);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Ssend"), SpanRole::kSend);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Irecv"), SpanRole::kRecv);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Waitall"), SpanRole::kWait);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Scan"), SpanRole::kPrefix);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Iexscan"),
            SpanRole::kExclusivePrefix);
  EXPECT_EQ(RoleOf(v1::CATEGORY_USER, "MPI_Bcast"), SpanRole::kNone);
  EXPECT_EQ(RoleOf(v1::CATEGORY_NCCL, "ncclAllReduce"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_NCCL, "Broadcast"), SpanRole::kRootOut);
  EXPECT_EQ(RoleOf(v1::CATEGORY_NCCL, "ncclRecv"), SpanRole::kRecv);
  // torch.distributed's, by capture/torch's names.
  EXPECT_EQ(RoleOf(v1::CATEGORY_C10D, "allreduce"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_C10D, "barrier"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_C10D, "reduce_scatter"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_C10D, "gather"), SpanRole::kRootIn);
  EXPECT_EQ(RoleOf(v1::CATEGORY_C10D, "broadcast"), SpanRole::kRootOut);
  EXPECT_EQ(RoleOf(v1::CATEGORY_C10D, "send"), SpanRole::kSend);
  EXPECT_EQ(RoleOf(v1::CATEGORY_C10D, "recv"), SpanRole::kRecv);
  EXPECT_EQ(RoleOf(v1::CATEGORY_C10D, "MPI_Bcast"), SpanRole::kNone);
  EXPECT_EQ(RoleOf(v1::CATEGORY_C10D, "allreduce_"), SpanRole::kNone);
  EXPECT_EQ(RoleOf(v1::CATEGORY_CUDA_SYNC, "anything"), SpanRole::kSync);
  EXPECT_EQ(RoleOf(v1::CATEGORY_CUDA_RUNTIME, "cudaStreamSynchronize"),
            SpanRole::kSync);
  EXPECT_EQ(RoleOf(v1::CATEGORY_CUDA_RUNTIME, "cudaLaunchKernel"),
            SpanRole::kNone);
  EXPECT_TRUE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Isend"));
  EXPECT_TRUE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Iallreduce"));
  EXPECT_FALSE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Init"));
  EXPECT_FALSE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Send"));
  EXPECT_TRUE(IsCollective(SpanRole::kRootIn));
  EXPECT_FALSE(IsCollective(SpanRole::kSend));
  // The wider coverage: Alltoallw and epoch-ending fences are instances
  // over every member; persistent starts and matched receives are
  // messages, completed by their Wait like I- calls.
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Ialltoallw"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Win_fence"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Send_init"), SpanRole::kSend);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Recv_init"), SpanRole::kRecv);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Mrecv"), SpanRole::kRecv);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Put"), SpanRole::kNone);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Neighbor_allgather"),
            SpanRole::kNeighbor);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Ineighbor_alltoallw"),
            SpanRole::kNeighbor);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Win_lock"), SpanRole::kLock);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Win_unlock"), SpanRole::kUnlock);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Win_lock_all"), SpanRole::kLockAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Win_unlock_all"),
            SpanRole::kUnlockAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Win_post"), SpanRole::kPost);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Win_start"), SpanRole::kStart);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Win_complete"), SpanRole::kComplete);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Win_wait"), SpanRole::kWinWait);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Win_test"), SpanRole::kNone);
  EXPECT_FALSE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Win_wait"));
  EXPECT_TRUE(IsCollective(SpanRole::kNeighbor));
  EXPECT_TRUE(IsCollective(SpanRole::kExclusivePrefix));
  EXPECT_FALSE(IsCollective(SpanRole::kLock));
  // Their I- forms are completed by a Wait.
  EXPECT_TRUE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Ineighbor_alltoall"));
  EXPECT_TRUE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Iscan"));
  EXPECT_FALSE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Win_lock"));
  EXPECT_TRUE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Send_init"));
  EXPECT_TRUE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Imrecv"));
  EXPECT_FALSE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Mrecv"));
  EXPECT_TRUE(IsMessage(SpanRole::kRecv));
  EXPECT_FALSE(IsMessage(SpanRole::kWait));
}

// Each start of a persistent collective is an instance of the collective.
TEST(MpiSemanticsTest, PersistentCollectivesTakeTheirCollectivesRole) {
  const auto mpi = v1::CATEGORY_MPI;
  EXPECT_EQ(RoleOf(mpi, "MPI_Allreduce_init"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(mpi, "MPI_Barrier_init"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(mpi, "MPI_Bcast_init"), SpanRole::kRootOut);
  EXPECT_EQ(RoleOf(mpi, "MPI_Gatherv_init"), SpanRole::kRootIn);
  EXPECT_EQ(RoleOf(mpi, "MPI_Exscan_init"), SpanRole::kExclusivePrefix);
  EXPECT_EQ(RoleOf(mpi, "MPI_Neighbor_alltoallw_init"), SpanRole::kNeighbor);
  EXPECT_EQ(RoleOf(mpi, "MPI_Psend_init"), SpanRole::kSend);
  EXPECT_EQ(RoleOf(mpi, "MPI_Precv_init"), SpanRole::kRecv);
  EXPECT_EQ(RoleOf(mpi, "MPI_Session_init"), SpanRole::kNone);
  EXPECT_EQ(RoleOf(mpi, "_init"), SpanRole::kNone);
  EXPECT_EQ(DataFlowOf(mpi, "MPI_Allgatherv_init"), DataFlow::kAllToAllTotal);
  EXPECT_EQ(DataFlowOf(mpi, "MPI_Psend_init"), DataFlow::kToPeer);
  EXPECT_TRUE(IsAsynchronous(mpi, "MPI_Allreduce_init"));
  EXPECT_TRUE(IsAsynchronous(mpi, "MPI_Psend_init"));
  EXPECT_FALSE(IsAsynchronous(mpi, "MPI_Session_init"));
}

TEST(MpiSemanticsTest, DataFlowsFromCategoryAndName) {
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_MPI, "MPI_Ibsend"), DataFlow::kToPeer);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_MPI, "MPI_Send_init"), DataFlow::kToPeer);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_MPI, "MPI_Compare_and_swap"),
            DataFlow::kToPeer);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_MPI, "MPI_Sendrecv_replace"),
            DataFlow::kExchange);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_MPI, "MPI_Rget"), DataFlow::kFromPeer);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_MPI, "MPI_Iscatterv"), DataFlow::kFromRoot);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_MPI, "MPI_Reduce"), DataFlow::kToRoot);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_MPI, "MPI_Reduce_scatter_block"),
            DataFlow::kAllToAll);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_MPI, "MPI_Allgatherv"),
            DataFlow::kAllToAllTotal);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_MPI, "MPI_Iexscan"), DataFlow::kPrefix);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_MPI, "MPI_Barrier"),
            DataFlow::kSynchronize);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_MPI, "MPI_Recv"), DataFlow::kNone);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_MPI, "MPI_Neighbor_alltoall"),
            DataFlow::kNone);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_NCCL, "ncclSend"), DataFlow::kNone);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_C10D, "allreduce"), DataFlow::kAllToAll);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_C10D, "alltoall"),
            DataFlow::kAllToAllTotal);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_C10D, "broadcast"), DataFlow::kFromRoot);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_C10D, "reduce"), DataFlow::kToRoot);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_C10D, "send"), DataFlow::kToPeer);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_C10D, "recv"), DataFlow::kNone);
  EXPECT_EQ(DataFlowOf(v1::CATEGORY_C10D, "barrier"), DataFlow::kSynchronize);
  // A Sendrecv is a send and a receive for matching.
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Sendrecv"), SpanRole::kSendRecv);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Sendrecv_replace"),
            SpanRole::kSendRecv);
  EXPECT_TRUE(IsMessage(SpanRole::kSendRecv));
  EXPECT_TRUE(IsCollective(DataFlow::kSynchronize));
  EXPECT_FALSE(IsCollective(DataFlow::kExchange));
}

// The header's example: ranks 0, 1, 2 enter MPI_Bcast (root 1) at 10, 30,
// 20; the ends wait for the root.
TEST(MpiSemanticsTest, RootOutInstanceWaitsForTheRoot) {
  const MpiMatching m = Match({Collective(SpanRole::kRootOut, 2, 4, 20, 1),
                               Collective(SpanRole::kRootOut, 0, 4, 10, 1),
                               Collective(SpanRole::kRootOut, 1, 4, 30, 1)});
  ASSERT_EQ(m.instances(), 1);
  EXPECT_THAT(Ids(m.members(0)), ElementsAre(1, 2, 0));  // ascending rank
  EXPECT_EQ(InstanceGroups(m, 0), (std::vector<GroupIds>{{{2}, {1, 2, 0}, 2}}));
}

// Instances come in (communicator, seq) order, whatever order their spans
// are in, and each one's members by (rank, then the order added): a rank
// of -1 sorts first, two spans of one rank keep their order.
TEST(MpiSemanticsTest, InstancesInCommunicatorAndSeqOrder) {
  std::vector<MpiOp> ops = {
      Collective(SpanRole::kAllToAll, 1, 5, 10),   // 0
      Collective(SpanRole::kAllToAll, 0, 2, 20),   // 1
      Collective(SpanRole::kAllToAll, 1, 2, 30),   // 2
      Collective(SpanRole::kAllToAll, 0, 5, 40),   // 3
      Collective(SpanRole::kAllToAll, -1, 5, 50),  // 4
      Collective(SpanRole::kAllToAll, 1, 5, 60),   // 5: rank 1 again
      Collective(SpanRole::kAllToAll, 3, 1, 70),   // 6
  };
  ops.push_back(ops[1]);  // 7: seq 2, rank 0, on communicator 3
  ops.back().comm = 3;
  ops.push_back(ops[6]);  // 8: seq 1 << 40, rank 3, on communicator 3
  ops.back().comm = 3;
  ops.back().seq = uint64_t{1} << 40;
  const MpiMatching m = Match(ops);
  ASSERT_EQ(m.instances(), 5);
  EXPECT_THAT(Ids(m.members(0)), ElementsAre(7));
  EXPECT_THAT(Ids(m.members(1)), ElementsAre(8));
  EXPECT_THAT(Ids(m.members(2)), ElementsAre(6));
  EXPECT_THAT(Ids(m.members(3)), ElementsAre(1, 2));
  EXPECT_THAT(Ids(m.members(4)), ElementsAre(4, 3, 0, 5));
}

// Far from that order (a sort by insertion would move each span about 50
// places), the same: 100 instances of two ranks, last seq first.
TEST(MpiSemanticsTest, InstancesInSeqOrderFromReversedSpans) {
  std::vector<MpiOp> ops;
  for (int seq = 99; seq >= 0; --seq) {
    ops.push_back(Collective(SpanRole::kAllToAll, 1, seq, 1000 - seq));
    ops.push_back(Collective(SpanRole::kAllToAll, 0, seq, 1000 - seq));
  }
  const MpiMatching m = Match(ops);
  ASSERT_EQ(m.instances(), 100);
  for (int seq = 0; seq < 100; ++seq) {
    const int32_t rank1 = 2 * (99 - seq);
    EXPECT_THAT(Ids(m.members(seq)), ElementsAre(rank1 + 1, rank1)) << seq;
  }
}

// Far from order, with ranks interleaved as many ranks' members are:
// sorted by counting where communicators' seqs and the ranks are dense,
// else whole; either way the order of (comm, seq, rank, then the order
// added), here against a sort of those keys. Rank -1, two spans of one
// rank in one instance, and three communicators are among them.
TEST(MpiSemanticsTest, InstancesInOrderWhateverTheSort) {
  for (const uint64_t far_seq : {uint64_t{0}, uint64_t{1} << 40}) {
    std::vector<MpiOp> ops;
    uint64_t state = 12345;
    auto next = [&state](uint64_t n) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      return (state >> 33) % n;
    };
    for (int i = 0; i < 3000; ++i) {
      MpiOp op =
          Collective(SpanRole::kAllToAll, static_cast<int32_t>(next(9)) - 1,
                     400 - next(400), static_cast<int64_t>(i));
      op.comm = 3 + 4 * next(3);
      ops.push_back(op);
    }
    if (far_seq != 0) ops[1500].seq = far_seq;  // seqs no longer dense
    std::vector<std::tuple<uint64_t, uint64_t, int32_t, int32_t>> keys;
    for (int32_t i = 0; i < static_cast<int32_t>(ops.size()); ++i) {
      keys.emplace_back(ops[i].comm, ops[i].seq, ops[i].rank, i);
    }
    std::sort(keys.begin(), keys.end());
    std::vector<std::vector<int32_t>> want;
    for (size_t k = 0; k < keys.size(); ++k) {
      if (k == 0 || std::get<0>(keys[k]) != std::get<0>(keys[k - 1]) ||
          std::get<1>(keys[k]) != std::get<1>(keys[k - 1])) {
        want.emplace_back();
      }
      want.back().push_back(std::get<3>(keys[k]));
    }
    const MpiMatching m = Match(ops);
    ASSERT_EQ(m.instances(), static_cast<int64_t>(want.size())) << far_seq;
    for (int64_t k = 0; k < m.instances(); ++k) {
      EXPECT_EQ(Ids(m.members(k)), want[k]) << far_seq << " instance " << k;
    }
  }
}

TEST(MpiSemanticsTest, AllToAllAndRootInGroups) {
  const MpiMatching m = Match({
      Collective(SpanRole::kAllToAll, 0, 1, 100),
      Collective(SpanRole::kAllToAll, 1, 1, 150),
      Collective(SpanRole::kAllToAll, 2, 1, 150),  // tied: rank 1 is last
      Collective(SpanRole::kRootIn, 0, 2, 300, 0),
      Collective(SpanRole::kRootIn, 1, 2, 400, 0),
  });
  ASSERT_EQ(m.instances(), 2);
  EXPECT_EQ(InstanceGroups(m, 0),
            (std::vector<GroupIds>{{{0, 1, 2}, {0, 1, 2}, 1}}));
  EXPECT_EQ(InstanceGroups(m, 1), (std::vector<GroupIds>{{{3, 4}, {3}, 4}}));
}

// Scan: rank r's result needs the inputs of ranks 0..r; Exscan's of ranks
// 0..r-1, so rank 0's Exscan waits for no one.
TEST(MpiSemanticsTest, PrefixGroupsPerMember) {
  const MpiMatching m = Match({
      Collective(SpanRole::kPrefix, 2, 1, 20),           // 0
      Collective(SpanRole::kPrefix, 0, 1, 30),           // 1
      Collective(SpanRole::kPrefix, 1, 1, 10),           // 2
      Collective(SpanRole::kExclusivePrefix, 0, 2, 10),  // 3
      Collective(SpanRole::kExclusivePrefix, 1, 2, 40),  // 4
      Collective(SpanRole::kExclusivePrefix, 2, 2, 20),  // 5
  });
  ASSERT_EQ(m.instances(), 2);
  EXPECT_EQ(InstanceGroups(m, 0), (std::vector<GroupIds>{
                                      {{1}, {1}, 1},
                                      {{1, 2}, {2}, 1},
                                      {{1, 2, 0}, {0}, 1},
                                  }));
  EXPECT_EQ(InstanceGroups(m, 1), (std::vector<GroupIds>{
                                      {{3}, {4}, 3},
                                      {{3, 4}, {5}, 4},
                                  }));
}

// The header's example on a directed ring: each rank waits for its one
// in-neighbor, not for every member. Sources that are no member's rank
// (7), or a member listing none, give no start.
TEST(MpiSemanticsTest, NeighborGroupsFollowEachMembersSources) {
  const std::vector<int32_t> from_2 = {2}, from_0 = {0}, from_1_and_7 = {1, 7},
                             from_7 = {7};
  auto neighbor = [](int32_t rank, uint64_t seq, int64_t start,
                     const std::vector<int32_t>& sources) {
    MpiOp op = Collective(SpanRole::kNeighbor, rank, seq, start);
    op.sources = sources;
    return op;
  };
  const MpiMatching m = Match({
      neighbor(0, 1, 10, from_2),        // 0
      neighbor(1, 1, 30, from_0),        // 1
      neighbor(2, 1, 20, from_1_and_7),  // 2
      neighbor(0, 2, 10, from_7),        // 3
      neighbor(1, 2, 10, {}),            // 4
  });
  ASSERT_EQ(m.instances(), 2);
  EXPECT_EQ(InstanceGroups(m, 0), (std::vector<GroupIds>{
                                      {{2}, {0}, 2},
                                      {{0}, {1}, 0},
                                      {{1}, {2}, 1},
                                  }));
  EXPECT_THAT(InstanceGroups(m, 1), IsEmpty());
  // A rank that lists all (and itself) is an all-to-all member.
  const std::vector<int32_t> all = {0, 1};
  const MpiMatching both =
      Match({neighbor(0, 1, 10, all), neighbor(1, 1, 30, all)});
  EXPECT_EQ(InstanceGroups(both, 0), (std::vector<GroupIds>{
                                         {{0, 1}, {0}, 1},
                                         {{0, 1}, {1}, 1},
                                     }));
}

// Exclusive epochs on window 9, target 3, in the order their Win_unlock
// began: rank 0's (its Win_unlock went on after it let go of the lock, as
// MPICH's does), rank 1's (its Win_lock returned only after rank 0's
// Win_unlock began: it took the lock there), rank 1's again (same rank: no
// hand-off), rank 2's (its Win_lock returned at once: it takes the lock
// lazily, in Win_unlock). Another target's epoch and an unlock without a
// lock (a shared epoch's) hand nothing over.
TEST(MpiSemanticsTest, ExclusiveLockEpochsHandOverInTheOrderTheirUnlocksBegan) {
  const MpiMatching m = Match({
      Lock(SpanRole::kLock, 0, 3, 0, 1),        // 0
      Lock(SpanRole::kUnlock, 0, 3, 100, 130),  // 1
      Lock(SpanRole::kLock, 1, 3, 5, 101),      // 2
      Lock(SpanRole::kUnlock, 1, 3, 102, 103),  // 3
      Lock(SpanRole::kLock, 1, 3, 110, 111),    // 4
      Lock(SpanRole::kUnlock, 1, 3, 112, 113),  // 5
      Lock(SpanRole::kLock, 2, 3, 6, 7),        // 6
      Lock(SpanRole::kUnlock, 2, 3, 116, 150),  // 7
      Lock(SpanRole::kLock, 3, 2, 9, 10),       // 8: target 2
      Lock(SpanRole::kUnlock, 3, 2, 11, 120),   // 9
      Lock(SpanRole::kUnlock, 3, 3, 160, 170),  // 10: no lock
  });
  EXPECT_THAT(m.lock_handoffs(), ElementsAre(Pair(1, 2), Pair(5, 7)));
  ASSERT_EQ(m.epoch_groups(), 2u);
  EXPECT_EQ(IdsOf(m.EpochGroup(0)), (GroupIds{{1}, {2}, 1}));
  EXPECT_EQ(IdsOf(m.EpochGroup(1)), (GroupIds{{5}, {7}, 5}));
  int groups = 0;
  m.ForEachGroup([&groups](const MpiMatching::Group&) { ++groups; });
  EXPECT_EQ(groups, 2);
}

// Epochs on window 9, target 3, in the order their Win_unlock(_all) began:
//   unlock at  50  rank 1 shared
//             100  rank 0 shared
//             102  rank 2 exclusive: after both shared ones (its Win_lock
//                  returned at 101, after both unlocks began)
//             108  rank 3 shared: after rank 2's (its Win_lock returned at
//                  107)
//             111  rank 0 shared: after rank 2's
//             120  rank 1 Win_lock_all: shared on every target, after rank
//                  2's (its Win_lock_all returned at 115)
//             127  rank 3 exclusive: after the shared epochs since rank 2's
//                  but its own (rank 0's and rank 1's); its Win_lock
//                  returned at 114, after rank 0's unlock began, before
//                  rank 1's Win_unlock_all did: that one it waited for in
//                  its Win_unlock (a lazy library).
// Shared epochs order none of each other. Target 4 has shared epochs only,
// and window 8 a Win_lock_all only: nothing to hand over.
TEST(MpiSemanticsTest, SharedEpochsHandOverToAndFromExclusiveOnes) {
  MpiOp lock_all_8 = Lock(SpanRole::kLockAll, 0, -1, 60, 61);
  MpiOp unlock_all_8 = Lock(SpanRole::kUnlockAll, 0, -1, 62, 63);
  lock_all_8.comm = unlock_all_8.comm = 8;
  const MpiMatching m = Match({
      Lock(SpanRole::kSharedLock, 0, 3, 0, 1),      // 0
      Lock(SpanRole::kUnlock, 0, 3, 100, 130),      // 1
      Lock(SpanRole::kSharedLock, 1, 3, 2, 3),      // 2
      Lock(SpanRole::kUnlock, 1, 3, 50, 52),        // 3
      Lock(SpanRole::kLock, 2, 3, 5, 101),          // 4
      Lock(SpanRole::kUnlock, 2, 3, 102, 103),      // 5
      Lock(SpanRole::kSharedLock, 0, 3, 104, 110),  // 6
      Lock(SpanRole::kUnlock, 0, 3, 111, 112),      // 7
      Lock(SpanRole::kLockAll, 1, -1, 105, 115),    // 8
      Lock(SpanRole::kUnlockAll, 1, -1, 120, 125),  // 9
      Lock(SpanRole::kSharedLock, 3, 3, 106, 107),  // 10
      Lock(SpanRole::kUnlock, 3, 3, 108, 109),      // 11
      Lock(SpanRole::kLock, 3, 3, 113, 114),        // 12
      Lock(SpanRole::kUnlock, 3, 3, 127, 128),      // 13
      Lock(SpanRole::kSharedLock, 0, 4, 0, 1),      // 14: target 4
      Lock(SpanRole::kUnlock, 0, 4, 2, 3),          // 15
      Lock(SpanRole::kSharedLock, 2, 4, 0, 1),      // 16
      Lock(SpanRole::kUnlock, 2, 4, 4, 5),          // 17
      lock_all_8,                                   // 18: window 8
      unlock_all_8,                                 // 19
  });
  EXPECT_THAT(m.lock_handoffs(),
              ElementsAre(Pair(3, 4), Pair(1, 4), Pair(5, 10), Pair(5, 6),
                          Pair(5, 8), Pair(7, 12), Pair(9, 13)));
  std::vector<GroupIds> groups;
  m.ForEachGroup(
      [&groups](const MpiMatching::Group& g) { groups.push_back(IdsOf(g)); });
  EXPECT_EQ(groups, (std::vector<GroupIds>{{{3, 1}, {4}, 1},
                                           {{5}, {6}, 5},
                                           {{5}, {8}, 5},
                                           {{5}, {10}, 5},
                                           {{7}, {12}, 7},
                                           {{9}, {13}, 9}}));
  EXPECT_THAT(m.epoch_completions(), IsEmpty());
}

// Unlocks without a lock, shared epochs of one rank, and Win_lock_all
// epochs without an exclusive epoch on their window hand nothing over.
TEST(MpiSemanticsTest, SharedEpochsAloneOrderNothing) {
  const MpiMatching m = Match({
      Lock(SpanRole::kSharedLock, 0, 3, 0, 1),
      Lock(SpanRole::kUnlock, 0, 3, 10, 11),
      Lock(SpanRole::kLockAll, 1, -1, 2, 30),
      Lock(SpanRole::kUnlockAll, 1, -1, 31, 32),
      Lock(SpanRole::kSharedLock, 2, 3, 3, 40),
      Lock(SpanRole::kUnlock, 2, 3, 41, 42),
      Lock(SpanRole::kUnlockAll, 3, -1, 5, 6),  // no Win_lock_all
  });
  EXPECT_THAT(m.lock_handoffs(), IsEmpty());
  EXPECT_EQ(m.epoch_groups(), 0u);
  // Rank 0's own exclusive epoch after its shared one: no hand-off.
  const MpiMatching own = Match({
      Lock(SpanRole::kSharedLock, 0, 3, 0, 1),
      Lock(SpanRole::kUnlock, 0, 3, 10, 11),
      Lock(SpanRole::kLock, 0, 3, 12, 13),
      Lock(SpanRole::kUnlock, 0, 3, 14, 15),
  });
  EXPECT_THAT(own.lock_handoffs(), IsEmpty());
}

// Window 9: rank 3 exposes its memory to ranks 0, 1 and 2, which each
// access it (one group each: {3}); its Win_wait ends after each of their
// Win_completes starts, and waited for the latest, rank 1's (80). Then it
// exposes it to rank 1 only: rank 0's second access epoch towards rank 3
// matches no exposure (it would be rank 3's second listing rank 0). Rank 2
// posts once without a group (not recorded): from there on its exposures
// match nothing, so rank 0's access to it is no edge. Rank 1's last access
// epoch is never completed: no edge either. Each Win_start that returned
// after its matched Win_post began ends after it; rank 1's last one
// returned before (295 < 300): no edge.
TEST(MpiSemanticsTest, WinWaitWaitsForTheCompletesOfMatchedAccessEpochs) {
  const std::vector<int32_t> origins = {0, 1, 2}, target_3 = {3}, one = {1},
                             target_2 = {2}, zero = {0};
  const MpiMatching m = Match({
      Epoch(SpanRole::kPost, 3, 0, 1, origins),        // 0
      Epoch(SpanRole::kWinWait, 3, 2, 90),             // 1
      Epoch(SpanRole::kStart, 0, 0, 1, target_3),      // 2
      Epoch(SpanRole::kComplete, 0, 10, 11),           // 3
      Epoch(SpanRole::kStart, 1, 0, 1, target_3),      // 4
      Epoch(SpanRole::kComplete, 1, 80, 85),           // 5
      Epoch(SpanRole::kStart, 2, 0, 1, target_3),      // 6
      Epoch(SpanRole::kComplete, 2, 20, 21),           // 7
      Epoch(SpanRole::kPost, 3, 100, 101, one),        // 8
      Epoch(SpanRole::kWinWait, 3, 102, 150),          // 9
      Epoch(SpanRole::kStart, 1, 100, 101, target_3),  // 10
      Epoch(SpanRole::kComplete, 1, 140, 141),         // 11
      Epoch(SpanRole::kStart, 0, 100, 101, target_3),  // 12
      Epoch(SpanRole::kComplete, 0, 105, 106),         // 13
      Epoch(SpanRole::kPost, 2, 200, 201),             // 14: no group
      Epoch(SpanRole::kWinWait, 2, 202, 203),          // 15
      Epoch(SpanRole::kPost, 2, 210, 211, zero),       // 16
      Epoch(SpanRole::kWinWait, 2, 212, 260),          // 17
      Epoch(SpanRole::kStart, 0, 210, 211, target_2),  // 18
      Epoch(SpanRole::kComplete, 0, 250, 251),         // 19
      Epoch(SpanRole::kPost, 3, 300, 301, one),        // 20
      Epoch(SpanRole::kWinWait, 3, 302, 350),          // 21
      Epoch(SpanRole::kStart, 1, 290, 295, target_3),  // 22
  });
  EXPECT_THAT(m.epoch_completions(),
              ElementsAre(Pair(3, 1), Pair(5, 1), Pair(7, 1), Pair(11, 9)));
  EXPECT_THAT(m.epoch_posts(),
              ElementsAre(Pair(0, 2), Pair(0, 4), Pair(0, 6), Pair(8, 10)));
  std::vector<GroupIds> groups;
  m.ForEachGroup(
      [&groups](const MpiMatching::Group& g) { groups.push_back(IdsOf(g)); });
  EXPECT_EQ(groups, (std::vector<GroupIds>{{{3, 7, 5}, {1}, 5},
                                           {{0}, {2}, 0},
                                           {{0}, {4}, 0},
                                           {{0}, {6}, 0},
                                           {{11}, {9}, 11},
                                           {{8}, {10}, 8}}));
  EXPECT_THAT(m.lock_handoffs(), IsEmpty());
}

// The k-th post listing an origin matches that origin's k-th start listing
// the target, whatever came between on other pairs; a start or post that
// lists its own rank, or an epoch left open by the next opening, is
// skipped.
TEST(MpiSemanticsTest, ExposuresMatchAccessesInOrderPerPair) {
  const std::vector<int32_t> to_1 = {1}, to_2 = {2}, to_1_and_2 = {1, 2},
                             from_0 = {0}, self_and_0 = {0, 1};
  const MpiMatching m = Match({
      Epoch(SpanRole::kStart, 0, 0, 1, to_1),          // 0
      Epoch(SpanRole::kComplete, 0, 5, 6),             // 1
      Epoch(SpanRole::kStart, 0, 10, 11, to_2),        // 2
      Epoch(SpanRole::kComplete, 0, 15, 16),           // 3
      Epoch(SpanRole::kStart, 0, 20, 21, to_1_and_2),  // 4
      Epoch(SpanRole::kComplete, 0, 25, 26),           // 5
      Epoch(SpanRole::kPost, 1, 0, 1, self_and_0),     // 6
      Epoch(SpanRole::kPost, 1, 2, 3, from_0),         // 7: 6 left open
      Epoch(SpanRole::kWinWait, 1, 4, 30),             // 8
      Epoch(SpanRole::kPost, 2, 0, 1, from_0),         // 9
      Epoch(SpanRole::kWinWait, 2, 2, 17),             // 10
      Epoch(SpanRole::kPost, 2, 18, 19, from_0),       // 11
      Epoch(SpanRole::kWinWait, 2, 20, 27),            // 12
  });
  // Rank 1: its first post (listing 0) matches rank 0's first start
  // towards 1 but closed no epoch; its second, rank 0's second (4).
  EXPECT_THAT(m.epoch_completions(),
              ElementsAre(Pair(3, 10), Pair(5, 8), Pair(5, 12)));
  // Rank 0's third Win_start matched posts of both targets (7, 11), and
  // waited for the later (18).
  EXPECT_THAT(m.epoch_posts(),
              ElementsAre(Pair(6, 0), Pair(7, 4), Pair(9, 2), Pair(11, 4)));
  bool found = false;
  m.ForEachGroup([&found](const MpiMatching::Group& g) {
    if (Ids(g.ends) != std::vector<int32_t>{4}) return;
    found = true;
    EXPECT_EQ(IdsOf(g), (GroupIds{{7, 11}, {4}, 11}));
  });
  EXPECT_TRUE(found);
}

TEST(MpiSemanticsTest, RootedInstanceWithoutItsRootHasNoGroup) {
  const MpiMatching m = Match({Collective(SpanRole::kRootOut, 0, 1, 10, 3),
                               Collective(SpanRole::kRootOut, 1, 1, 20, 3)});
  ASSERT_EQ(m.instances(), 1);
  EXPECT_THAT(InstanceGroups(m, 0), IsEmpty());
  int groups = 0;
  m.ForEachGroup([&groups](const MpiMatching::Group&) { ++groups; });
  EXPECT_EQ(groups, 0);
}

TEST(MpiSemanticsTest, SpansWithoutSequenceCommunicatorOrPeerMatchNothing) {
  MpiOp no_seq = Collective(SpanRole::kAllToAll, 0, 1, 10);
  no_seq.has_seq = false;
  MpiOp no_comm = Collective(SpanRole::kAllToAll, 1, 1, 10);
  no_comm.comm = 0;
  const MpiMatching m = Match({
      no_seq,
      no_comm,
      Message(SpanRole::kSend, 0, -1, 5, 10),  // no destination
      Message(SpanRole::kRecv, -1, 0, 5, 20),  // no rank
      Message(SpanRole::kWait, 0, 1, 5, 30),
  });
  EXPECT_EQ(m.instances(), 0);
  EXPECT_THAT(m.messages(), IsEmpty());
}

// Messages pair in order of start per (comm, source, destination, tag),
// whatever order they are given in; a send without a receive stays alone.
TEST(MpiSemanticsTest, MessagesPairInOrderPerChannel) {
  const MpiMatching m = Match({
      Message(SpanRole::kRecv, 1, 0, 5, 250),  // 0: second recv, tag 5
      Message(SpanRole::kSend, 0, 1, 5, 200),  // 1: second send, tag 5
      Message(SpanRole::kSend, 0, 1, 5, 100),  // 2: first send, tag 5
      Message(SpanRole::kRecv, 1, 0, 5, 50),   // 3: first recv, tag 5
      Message(SpanRole::kSend, 0, 1, 6, 120),  // 4: tag 6
      Message(SpanRole::kRecv, 1, 0, 6, 130),  // 5: tag 6
      Message(SpanRole::kSend, 1, 0, 5, 140),  // 6: unmatched, 1 -> 0
  });
  EXPECT_THAT(m.messages(), ElementsAre(Pair(2, 3), Pair(1, 0), Pair(4, 5)));
  const MpiMatching::Group g = m.MessageGroup(1);
  EXPECT_THAT(Ids(g.starts), ElementsAre(1));
  EXPECT_THAT(Ids(g.ends), ElementsAre(0));
  EXPECT_EQ(g.last, 1);
}

// A Sendrecv of `rank` sending to `to` (tag 7) and receiving from `from`
// (tag 7; -1: unknown).
MpiOp Exchange(int32_t rank, int32_t to, int32_t from, int64_t start) {
  MpiOp op = Message(SpanRole::kSendRecv, rank, to, 7, start);
  op.recv_peer = from;
  op.recv_tag = 7;
  return op;
}

// A halo exchange on a ring of 3: each rank's Sendrecv sends to its right
// and receives from its left, so each is the send of one message and the
// receive of another; rank 2's receive meets a plain Send of rank 1 first.
TEST(MpiSemanticsTest, ASendrecvIsTheSendOfOneMessageAndTheReceiveOfAnother) {
  const MpiMatching m = Match({
      Exchange(0, 1, 2, 100),                  // 0
      Exchange(1, 2, 0, 110),                  // 1
      Exchange(2, 0, 1, 300),                  // 2: rank 2 late
      Message(SpanRole::kSend, 1, 2, 7, 50),   // 3: before rank 1's exchange
      Message(SpanRole::kRecv, 2, 1, 7, 400),  // 4: after rank 2's
      Exchange(0, 1, -1, 500),                 // 5: its receive unknown
      Message(SpanRole::kRecv, 1, 0, 7, 600),  // 6: receives 5's send
  });
  // Channels in order: (0 -> 1): sends 0, 5; receives 1, 6. (1 -> 2):
  // sends 3, 1; receives 2, 4. (2 -> 0): send 2, receive 0.
  EXPECT_THAT(m.messages(), ElementsAre(Pair(0, 1), Pair(5, 6), Pair(3, 2),
                                        Pair(1, 4), Pair(2, 0)));
  // Rank 0's exchange ends no earlier than rank 2's, which it received.
  const MpiMatching::Group g = m.MessageGroup(4);
  EXPECT_THAT(Ids(g.starts), ElementsAre(2));
  EXPECT_THAT(Ids(g.ends), ElementsAre(0));
  EXPECT_TRUE(Sends(Exchange(0, 1, -1, 0)));
  EXPECT_FALSE(Receives(Exchange(0, 1, -1, 0)));
  EXPECT_FALSE(Sends(Exchange(0, -1, 2, 0)));
  EXPECT_TRUE(Receives(Exchange(0, -1, 2, 0)));
}

// The role table and the probe's list are two lists of MPI functions: every
// function with a role is one the probe records (a name mistyped, or
// recorded under another, would never match a span), and the two agree on
// how many there are of each.
TEST(MpiSemanticsTest, EveryOperationWithARoleIsOneTheProbeRecords) {
  std::set<std::string> recorded;
#define MERIDIAN_RECORDED(name) recorded.insert("MPI_" #name);
  MERIDIAN_MPI_OPS(MERIDIAN_RECORDED)
#undef MERIDIAN_RECORDED
  EXPECT_EQ(recorded.size(), 160u);
  const std::vector<std::string> with_roles = MpiOperationsWithRoles();
  EXPECT_EQ(with_roles.size(), 88u);
  std::vector<std::string> unknown;
  for (const std::string& name : with_roles) {
    if (!recorded.count(name)) unknown.push_back(name);
  }
  EXPECT_THAT(unknown, IsEmpty());
  EXPECT_EQ(std::set<std::string>(with_roles.begin(), with_roles.end()).size(),
            with_roles.size());  // none twice
  // And the roles of a few, by the table's names.
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Allreduce"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Allreduce_init"),
            SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Comm_rank"), SpanRole::kNone);
}

}  // namespace
}  // namespace meridian
