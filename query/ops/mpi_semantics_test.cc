#include "query/ops/mpi_semantics.h"

#include <vector>

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

TEST(MpiSemanticsTest, RolesFromCategoryAndName) {
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Iallreduce"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Gatherv"), SpanRole::kRootIn);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Bcast"), SpanRole::kRootOut);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Ssend"), SpanRole::kSend);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Irecv"), SpanRole::kRecv);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Waitall"), SpanRole::kWait);
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Scan"), SpanRole::kNone);
  EXPECT_EQ(RoleOf(v1::CATEGORY_USER, "MPI_Bcast"), SpanRole::kNone);
  EXPECT_EQ(RoleOf(v1::CATEGORY_NCCL, "ncclAllReduce"), SpanRole::kAllToAll);
  EXPECT_EQ(RoleOf(v1::CATEGORY_NCCL, "Broadcast"), SpanRole::kRootOut);
  EXPECT_EQ(RoleOf(v1::CATEGORY_NCCL, "ncclRecv"), SpanRole::kRecv);
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
            SpanRole::kNone);
  EXPECT_TRUE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Send_init"));
  EXPECT_TRUE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Imrecv"));
  EXPECT_FALSE(IsAsynchronous(v1::CATEGORY_MPI, "MPI_Mrecv"));
  EXPECT_TRUE(IsMessage(SpanRole::kRecv));
  EXPECT_FALSE(IsMessage(SpanRole::kWait));
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
  // The roles stay as they were: a Sendrecv is no matched message.
  EXPECT_EQ(RoleOf(v1::CATEGORY_MPI, "MPI_Sendrecv"), SpanRole::kNone);
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
  const MpiMatching::Group g = m.InstanceGroup(0);
  EXPECT_THAT(Ids(g.starts), ElementsAre(2));
  EXPECT_THAT(Ids(g.ends), ElementsAre(1, 2, 0));
  EXPECT_EQ(g.last, 2);
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
  const MpiMatching::Group all = m.InstanceGroup(0);
  EXPECT_THAT(Ids(all.starts), ElementsAre(0, 1, 2));
  EXPECT_THAT(Ids(all.ends), ElementsAre(0, 1, 2));
  EXPECT_EQ(all.last, 1);
  const MpiMatching::Group in = m.InstanceGroup(1);
  EXPECT_THAT(Ids(in.starts), ElementsAre(3, 4));
  EXPECT_THAT(Ids(in.ends), ElementsAre(3));
  EXPECT_EQ(in.last, 4);
}

TEST(MpiSemanticsTest, RootedInstanceWithoutItsRootHasNoGroup) {
  const MpiMatching m = Match({Collective(SpanRole::kRootOut, 0, 1, 10, 3),
                               Collective(SpanRole::kRootOut, 1, 1, 20, 3)});
  ASSERT_EQ(m.instances(), 1);
  EXPECT_THAT(Ids(m.InstanceGroup(0).ends), IsEmpty());
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

TEST(MessageOrdinalsTest, NumbersEachChannelsEndsInOrder) {
  MessageOrdinals ordinals;
  auto send = ordinals.Next(SpanRole::kSend, 0, 1, 5, 7);
  ASSERT_TRUE(send.has_value());
  EXPECT_TRUE(send->send);
  EXPECT_EQ(send->source, 0);
  EXPECT_EQ(send->destination, 1);
  EXPECT_EQ(send->ordinal, 0u);
  EXPECT_EQ(ordinals.Next(SpanRole::kSend, 0, 1, 5, 7)->ordinal, 1u);
  // Another tag is another channel.
  EXPECT_EQ(ordinals.Next(SpanRole::kSend, 0, 1, 6, 7)->ordinal, 0u);
  auto recv = ordinals.Next(SpanRole::kRecv, 1, 0, 5, 7);
  ASSERT_TRUE(recv.has_value());
  EXPECT_FALSE(recv->send);
  EXPECT_EQ(recv->source, 0);
  EXPECT_EQ(recv->destination, 1);
  EXPECT_EQ(recv->ordinal, 0u);
  EXPECT_EQ(ordinals.Next(SpanRole::kRecv, 1, 0, 5, 7)->ordinal, 1u);
  EXPECT_FALSE(ordinals.Next(SpanRole::kAllToAll, 1, 0, 5, 7).has_value());
  EXPECT_FALSE(ordinals.Next(SpanRole::kSend, 1, std::nullopt, 5, 7));
  EXPECT_FALSE(ordinals.Next(SpanRole::kSend, -1, 0, 5, 7));
}

}  // namespace
}  // namespace meridian
