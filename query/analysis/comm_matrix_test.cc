#include "query/analysis/comm_matrix.h"

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

// (from, to, messages, bytes)
using Cell = std::tuple<int32_t, int32_t, int64_t, int64_t>;
using Matrix = std::vector<Cell>;

constexpr uint64_t kWorld = 1;

// A job of four ranks, 0 to 3, one process and track each (rank r: process
// r + 1, track 10 + r); operations are added as spans name them, so a
// selection and a builder are made after their spans.
class CommMatrixTest : public ::testing::Test {
 protected:
  CommMatrixTest() {
    catalog_.job.name = "j";
    for (int32_t r = 0; r < 4; ++r) {
      catalog_.processes.push_back({r + 1, "node", r, r, 100 + r});
      catalog_.tracks.push_back({10 + r, r + 1, v1::TRACK_KIND_THREAD, 1, ""});
    }
  }

  int64_t OpId(const std::string& name, v1::Category category) {
    for (const OpInfo& op : catalog_.ops) {
      if (op.name == name && op.category == category) return op.id;
    }
    const int64_t id = static_cast<int64_t>(catalog_.ops.size()) + 1;
    catalog_.ops.push_back({id, category, name});
    return id;
  }

  // A point-to-point or one-sided span of `rank`.
  StoredSpan P2p(int32_t rank, const std::string& name, int64_t bytes,
                 std::optional<int32_t> peer,
                 v1::Category category = v1::CATEGORY_MPI) {
    StoredSpan span;
    span.track_id = 10 + rank;
    span.op_id = OpId(name, category);
    span.bytes = bytes;
    span.peer = peer;
    span.comm = kWorld;
    span.comm_size = 4;
    return span;
  }

  // `rank`'s record of instance `seq` of a collective on `comm`.
  StoredSpan Coll(int32_t rank, const std::string& name, uint64_t comm,
                  uint32_t comm_size, uint64_t seq, int64_t bytes,
                  int32_t root = -1) {
    StoredSpan span = P2p(rank, name, bytes, std::nullopt);
    if (root >= 0) span.peer = root;
    span.comm = comm;
    span.comm_size = comm_size;
    span.seq = seq;
    return span;
  }

  // Every instance of `name` on the world communicator, each member
  // recording `bytes[rank]`.
  std::vector<StoredSpan> World(const std::string& name,
                                const std::vector<int64_t>& bytes, uint64_t seq,
                                int32_t root = -1) {
    std::vector<StoredSpan> spans;
    for (int32_t r = 0; r < 4; ++r) {
      spans.push_back(Coll(r, name, kWorld, 4, seq, bytes[r], root));
    }
    return spans;
  }

  // The matrix of `spans` (those the filter selects, as GetStats feeds it).
  Matrix Build(const std::vector<StoredSpan>& spans, bool expand,
               const v1::SpanFilter& filter = v1::SpanFilter()) {
    auto selection = SpanSelection::Make(catalog_, filter);
    EXPECT_TRUE(selection.ok()) << selection.status();
    CommMatrixBuilder builder(catalog_, *selection, {expand});
    for (const StoredSpan& span : spans) {
      if (selection->Selects(span)) builder.Add(span);
    }
    return Finish(builder);
  }

  static Matrix Finish(CommMatrixBuilder& builder) {
    v1::StatsReply reply;
    builder.Finish(reply.mutable_matrix());
    Matrix matrix;
    for (const v1::RankTraffic& t : reply.matrix()) {
      matrix.emplace_back(t.from_rank(), t.to_rank(), t.messages(), t.bytes());
    }
    return matrix;
  }

  JobCatalog catalog_;
};

TEST_F(CommMatrixTest, CountsSendsFromRankToPeer) {
  std::vector<StoredSpan> spans = {
      P2p(0, "MPI_Send", 50, 1), P2p(0, "MPI_Isend", 30, 1),
      P2p(1, "MPI_Ssend", 8, 2),
      P2p(1, "MPI_Recv", 50, 0),   // counted at its send
      P2p(1, "MPI_Irecv", 30, 0),  // likewise
      // Each MPI_Start of a persistent send, under the init call's name.
      P2p(2, "MPI_Send_init", 16, 3), P2p(2, "MPI_Send_init", 16, 3),
      P2p(2, "MPI_Bsend_init", 1, 0),
      P2p(3, "MPI_Rsend", 4, 3),                     // to itself: the diagonal
      P2p(3, "MPI_Send", 99, std::nullopt),          // no peer: left out
      P2p(3, "ncclSend", 64, 0, v1::CATEGORY_NCCL),  // communicator ranks
      Coll(0, "MPI_Allreduce", kWorld, 1, 0, 8),     // without expansion
  };
  EXPECT_EQ(Build(spans, /*expand=*/false), (Matrix{{0, 1, 2, 80},
                                                    {1, 2, 1, 8},
                                                    {2, 0, 1, 1},
                                                    {2, 3, 2, 32},
                                                    {3, 3, 1, 4}}));
}

TEST_F(CommMatrixTest, SendrecvCountsItsSendHalf) {
  StoredSpan with_arg = P2p(1, "MPI_Sendrecv", 100, 0);
  StoredArg arg;
  arg.key = "send_bytes";
  arg.int_value = 70;
  with_arg.args.push_back(arg);
  std::vector<StoredSpan> spans = {
      P2p(0, "MPI_Sendrecv", 100, 1),         // send + receive: half of them
      with_arg,                               // its send, as the probe says
      P2p(2, "MPI_Sendrecv_replace", 64, 3),  // twice one buffer
  };
  EXPECT_EQ(Build(spans, false),
            (Matrix{{0, 1, 1, 50}, {1, 0, 1, 70}, {2, 3, 1, 32}}));
}

TEST_F(CommMatrixTest, OneSidedWritesGoToTheTargetAndGetsComeFromIt) {
  std::vector<StoredSpan> spans = {
      P2p(0, "MPI_Put", 40, 1),
      P2p(0, "MPI_Rput", 2, 1),
      P2p(0, "MPI_Get", 24, 2),  // 2 -> 0
      P2p(1, "MPI_Rget", 8, 3),  // 3 -> 1
      P2p(1, "MPI_Accumulate", 16, 2),
      P2p(1, "MPI_Raccumulate", 16, 2),
      P2p(2, "MPI_Get_accumulate", 4, 1),
      P2p(3, "MPI_Fetch_and_op", 8, 0),
      P2p(3, "MPI_Compare_and_swap", 8, 0),
  };
  EXPECT_EQ(Build(spans, false), (Matrix{{0, 1, 2, 42},
                                         {1, 2, 2, 32},
                                         {2, 0, 1, 24},
                                         {2, 1, 1, 4},
                                         {3, 0, 2, 16},
                                         {3, 1, 1, 8}}));
}

TEST_F(CommMatrixTest, RootToMembers) {
  std::vector<StoredSpan> spans = World("MPI_Bcast", {8, 8, 8, 8}, 0, 1);
  // Scatterv: the root records all it sends, each member what it received.
  for (const StoredSpan& s : World("MPI_Scatterv", {60, 10, 20, 30}, 1, 0)) {
    spans.push_back(s);
  }
  EXPECT_EQ(Build(spans, true), (Matrix{{0, 1, 1, 10},
                                        {0, 2, 1, 20},
                                        {0, 3, 1, 30},
                                        {1, 0, 1, 8},
                                        {1, 2, 1, 8},
                                        {1, 3, 1, 8}}));
}

TEST_F(CommMatrixTest, MembersToRoot) {
  // Gather: the root records its whole receive buffer, the others what
  // they sent.
  std::vector<StoredSpan> spans = World("MPI_Gather", {10, 10, 40, 10}, 0, 2);
  for (const StoredSpan& s : World("MPI_Ireduce", {16, 16, 16, 16}, 1, 0)) {
    spans.push_back(s);
  }
  EXPECT_EQ(Build(spans, true), (Matrix{{0, 2, 1, 10},
                                        {1, 0, 1, 16},
                                        {1, 2, 1, 10},
                                        {2, 0, 1, 16},
                                        {3, 0, 1, 16},
                                        {3, 2, 1, 10}}));
}

TEST_F(CommMatrixTest, EachMemberToEveryOtherItsOwnBytes) {
  // Allreduce over ranks 0-2 (communicator 5); Alltoall over 2 and 3
  // (communicator 6), per destination; Reduce_scatter_block over 0 and 3.
  std::vector<StoredSpan> spans = {
      Coll(0, "MPI_Allreduce", 5, 3, 0, 8),
      Coll(1, "MPI_Allreduce", 5, 3, 0, 8),
      Coll(2, "MPI_Allreduce", 5, 3, 0, 8),
      Coll(2, "MPI_Ialltoall", 6, 2, 0, 5),
      Coll(3, "MPI_Ialltoall", 6, 2, 0, 7),
      Coll(0, "MPI_Reduce_scatter_block", 9, 2, 4, 100),
      Coll(3, "MPI_Reduce_scatter_block", 9, 2, 4, 100),
  };
  EXPECT_EQ(Build(spans, true), (Matrix{{0, 1, 1, 8},
                                        {0, 2, 1, 8},
                                        {0, 3, 1, 100},
                                        {1, 0, 1, 8},
                                        {1, 2, 1, 8},
                                        {2, 0, 1, 8},
                                        {2, 1, 1, 8},
                                        {2, 3, 1, 5},
                                        {3, 0, 1, 100},
                                        {3, 2, 1, 7}}));
}

TEST_F(CommMatrixTest, TotalsOverMembersAreSpreadEvenly) {
  // Allgatherv: every member records the sum of the receive counts.
  std::vector<StoredSpan> spans =
      World("MPI_Allgatherv", {100, 100, 100, 100}, 0);
  // Alltoallv over 0 and 1: the sum over both destinations, rounded down.
  spans.push_back(Coll(0, "MPI_Alltoallv", 5, 2, 0, 40));
  spans.push_back(Coll(1, "MPI_Alltoallv", 5, 2, 0, 41));
  spans.push_back(Coll(2, "MPI_Reduce_scatter", 6, 2, 0, 64));
  spans.push_back(Coll(3, "MPI_Reduce_scatter", 6, 2, 0, 64));
  EXPECT_EQ(Build(spans, true), (Matrix{{0, 1, 2, 45},
                                        {0, 2, 1, 25},
                                        {0, 3, 1, 25},
                                        {1, 0, 2, 45},
                                        {1, 2, 1, 25},
                                        {1, 3, 1, 25},
                                        {2, 0, 1, 25},
                                        {2, 1, 1, 25},
                                        {2, 3, 2, 57},
                                        {3, 0, 1, 25},
                                        {3, 1, 1, 25},
                                        {3, 2, 2, 57}}));
}

TEST_F(CommMatrixTest, PrefixReductionsGoToHigherRanks) {
  std::vector<StoredSpan> spans = {
      Coll(0, "MPI_Scan", 5, 3, 0, 4),    Coll(1, "MPI_Scan", 5, 3, 0, 4),
      Coll(2, "MPI_Scan", 5, 3, 0, 4),    Coll(1, "MPI_Iexscan", 6, 2, 0, 2),
      Coll(3, "MPI_Iexscan", 6, 2, 0, 2),
  };
  EXPECT_EQ(Build(spans, true),
            (Matrix{{0, 1, 1, 4}, {0, 2, 1, 4}, {1, 2, 1, 4}, {1, 3, 1, 2}}));
}

TEST_F(CommMatrixTest, BarriersMoveNothing) {
  std::vector<StoredSpan> spans = World("MPI_Barrier", {0, 0, 0, 0}, 0);
  for (const StoredSpan& s : World("MPI_Ibarrier", {0, 0, 0, 0}, 1)) {
    spans.push_back(s);
  }
  EXPECT_EQ(Build(spans, true), Matrix{});
}

TEST_F(CommMatrixTest, CompleteInstancesAreExpandedAtOnce) {
  const std::vector<StoredSpan> bcast = World("MPI_Bcast", {8, 8, 8, 8}, 0, 0);
  auto selection = SpanSelection::Make(catalog_, v1::SpanFilter());
  ASSERT_TRUE(selection.ok());
  CommMatrixBuilder builder(catalog_, *selection, {true});
  for (int i = 0; i < 3; ++i) builder.Add(bcast[i]);
  EXPECT_EQ(builder.pending_records(), 3);
  builder.Add(bcast[3]);
  EXPECT_EQ(builder.pending_records(), 0);
  EXPECT_EQ(Finish(builder),
            (Matrix{{0, 1, 1, 8}, {0, 2, 1, 8}, {0, 3, 1, 8}}));
}

TEST_F(CommMatrixTest, IncompleteInstancesAreExpandedAtTheEnd) {
  // Rank 3 recorded neither: the Bcast's members 0 to 2 still count; the
  // Gather's root (3) is missing, so it adds nothing.
  const std::vector<StoredSpan> bcast = World("MPI_Bcast", {8, 8, 8, 8}, 0, 0);
  const std::vector<StoredSpan> gather =
      World("MPI_Gather", {4, 4, 4, 12}, 1, 3);
  auto selection = SpanSelection::Make(catalog_, v1::SpanFilter());
  ASSERT_TRUE(selection.ok());
  CommMatrixBuilder builder(catalog_, *selection, {true});
  for (int i = 0; i < 3; ++i) builder.Add(bcast[i]);
  for (int i = 0; i < 3; ++i) builder.Add(gather[i]);
  EXPECT_EQ(builder.pending_records(), 6);
  EXPECT_EQ(Finish(builder), (Matrix{{0, 1, 1, 8}, {0, 2, 1, 8}}));
  EXPECT_EQ(builder.pending_records(), 0);
}

TEST_F(CommMatrixTest, FilteredRanksKeepTheirPairs) {
  v1::SpanFilter filter;
  filter.add_ranks(1);
  filter.add_ranks(2);
  std::vector<StoredSpan> spans = World("MPI_Allreduce", {8, 8, 8, 8}, 0);
  for (const StoredSpan& s : World("MPI_Bcast", {2, 2, 2, 2}, 1, 0)) {
    spans.push_back(s);  // its root, 0, is not selected
  }
  spans.push_back(P2p(1, "MPI_Send", 10, 0));  // a selected sender
  spans.push_back(P2p(0, "MPI_Send", 10, 1));  // not
  auto selection = SpanSelection::Make(catalog_, filter);
  ASSERT_TRUE(selection.ok());
  CommMatrixBuilder builder(catalog_, *selection, {true});
  for (const StoredSpan& span : spans) {
    if (selection->Selects(span)) builder.Add(span);
  }
  // Two selected ranks can record an instance: each was complete with
  // them. The Bcast's root did not record it: it adds nothing.
  EXPECT_EQ(builder.pending_records(), 0);
  EXPECT_EQ(Finish(builder),
            (Matrix{{1, 0, 1, 10}, {1, 2, 1, 8}, {2, 1, 1, 8}}));
}

TEST_F(CommMatrixTest, HoldsAtMostMaxPendingRecords) {
  CommMatrixOptions options;
  options.expand_collectives = true;
  options.max_pending_records = 2;
  auto record = [this](int32_t rank, uint64_t seq) {
    return Coll(rank, "MPI_Allreduce", kWorld, 4, seq, 8);
  };
  record(0, 0);  // the operation into the catalog
  auto selection = SpanSelection::Make(catalog_, v1::SpanFilter());
  ASSERT_TRUE(selection.ok());
  CommMatrixBuilder builder(catalog_, *selection, options);
  builder.Add(record(0, 0));
  builder.Add(record(1, 0));
  EXPECT_EQ(builder.pending_records(), 2);
  // A third record: instance 0, the oldest, is expanded with ranks 0 and 1.
  builder.Add(record(0, 1));
  EXPECT_EQ(builder.pending_records(), 1);
  // Rank 2's record of instance 0 comes too late: an instance of its own.
  builder.Add(record(2, 0));
  builder.Add(record(1, 1));  // instance 1 is the oldest
  EXPECT_EQ(builder.pending_records(), 1);
  EXPECT_EQ(Finish(builder), (Matrix{{0, 1, 2, 16}, {1, 0, 2, 16}}));
}

}  // namespace
}  // namespace meridian
