#include "query/analysis/comm_model.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

CommModel Model(CommModel::Algorithm algorithm) {
  CommModel m;
  m.algorithm = algorithm;
  m.bytes_per_s = 1e9;  // 1 byte per ns
  m.latency_ns = 10000;
  return m;
}

constexpr auto kRing = CommModel::Algorithm::kRing;
constexpr auto kTree = CommModel::Algorithm::kTree;

std::optional<int64_t> Time(CommModel::Algorithm a, v1::Category category,
                            const std::string& name, int64_t bytes,
                            int32_t ranks, int32_t neighbors = 0) {
  return ModelTimeNs(Model(a), category, name, RoleOf(category, name), bytes,
                     ranks, neighbors);
}

// The header's table, one row at a time, with 1 MiB over 4 ranks: a = 10
// us, n b = 1048576 ns.
TEST(CommModelTest, EachRowOfTheTable) {
  const auto mpi = v1::CATEGORY_MPI;
  EXPECT_EQ(Time(kRing, mpi, "MPI_Send", 1 << 20, 0), 10000 + 1048576);
  EXPECT_EQ(Time(kTree, mpi, "MPI_Irecv", 1 << 20, 0), 10000 + 1048576);
  // 2 * 3 * (10000 + 262144); 2 * 2 * (10000 + 1048576).
  EXPECT_EQ(Time(kRing, mpi, "MPI_Allreduce", 1 << 20, 4), 1632864);
  EXPECT_EQ(Time(kTree, mpi, "MPI_Iallreduce", 1 << 20, 4), 4234304);
  EXPECT_EQ(Time(kRing, mpi, "MPI_Allreduce_init", 1 << 20, 4), 1632864);
  // 3 * (10000 + 1048576); 2 * 10000 + 3 * 1048576.
  EXPECT_EQ(Time(kRing, mpi, "MPI_Allgather", 1 << 20, 4), 3175728);
  EXPECT_EQ(Time(kTree, mpi, "MPI_Alltoall", 1 << 20, 4), 3165728);
  // 3 * (10000 + 262144); 2 * 10000 + 3 * 262144.
  EXPECT_EQ(Time(kRing, mpi, "MPI_Alltoallv", 1 << 20, 4), 816432);
  EXPECT_EQ(Time(kTree, mpi, "MPI_Reduce_scatter", 1 << 20, 4), 806432);
  EXPECT_EQ(Time(kRing, mpi, "MPI_Reduce_scatter_block", 1 << 20, 4), 3175728);
  // 3 * 10000 + 1048576; 2 * (10000 + 1048576).
  EXPECT_EQ(Time(kRing, mpi, "MPI_Bcast", 1 << 20, 4), 1078576);
  EXPECT_EQ(Time(kTree, mpi, "MPI_Gatherv", 1 << 20, 4), 2117152);
  EXPECT_EQ(Time(kRing, mpi, "MPI_Exscan", 1 << 20, 4), 3175728);
  EXPECT_EQ(Time(kRing, mpi, "MPI_Barrier", 0, 4), 60000);
  EXPECT_EQ(Time(kTree, mpi, "MPI_Ibarrier", 0, 4), 40000);
  EXPECT_EQ(Time(kRing, mpi, "MPI_Neighbor_alltoall", 1 << 20, 4, 2),
            2 * (10000 + 1048576));
  // NCCL's names.
  const auto nccl = v1::CATEGORY_NCCL;
  EXPECT_EQ(Time(kRing, nccl, "AllReduce", 1 << 20, 4), 1632864);
  EXPECT_EQ(Time(kRing, nccl, "ReduceScatter", 1 << 20, 4), 3175728);
  EXPECT_EQ(Time(kRing, nccl, "Broadcast", 1 << 20, 4), 1078576);
}

TEST(CommModelTest, OneRankAndOperationsWithoutAModel) {
  const auto mpi = v1::CATEGORY_MPI;
  EXPECT_EQ(Time(kRing, mpi, "MPI_Allreduce", 1 << 20, 1), 0);
  EXPECT_EQ(Time(kTree, mpi, "MPI_Bcast", 1 << 20, 1), 0);
  EXPECT_EQ(Time(kRing, mpi, "MPI_Wait", 0, 0), std::nullopt);
  EXPECT_EQ(Time(kRing, mpi, "MPI_Put", 64, 0), std::nullopt);
  EXPECT_EQ(Time(kRing, mpi, "MPI_File_write", 64, 0), std::nullopt);
  EXPECT_EQ(Time(kRing, v1::CATEGORY_USER, "allreduce", 64, 4), std::nullopt);
}

}  // namespace
}  // namespace meridian
