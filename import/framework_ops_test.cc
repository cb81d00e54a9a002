#include "import/framework_ops.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

void Expect(const FrameworkOp& op, v1::Category category,
            const std::string& name, const std::string& timeline_name) {
  EXPECT_EQ(op.category, category) << name;
  EXPECT_EQ(op.name, name);
  EXPECT_EQ(op.timeline_name, timeline_name) << name;
  EXPECT_EQ(op.communication(), category != v1::CATEGORY_USER) << name;
}

TEST(FrameworkOpsTest, Horovod) {
  Expect(HorovodOp("NCCL_ALLREDUCE"), v1::CATEGORY_NCCL, "ncclAllReduce",
         "NCCL_ALLREDUCE");
  Expect(HorovodOp("NCCL_REDUCESCATTER"), v1::CATEGORY_NCCL,
         "ncclReduceScatter", "NCCL_REDUCESCATTER");
  Expect(HorovodOp("NCCL_ALLGATHER"), v1::CATEGORY_NCCL, "ncclAllGather",
         "NCCL_ALLGATHER");
  Expect(HorovodOp("NCCL_REDUCE"), v1::CATEGORY_NCCL, "ncclReduce",
         "NCCL_REDUCE");
  Expect(HorovodOp("NCCL_BCAST"), v1::CATEGORY_NCCL, "ncclBroadcast",
         "NCCL_BCAST");
  Expect(HorovodOp("NCCL_ALLTOALL"), v1::CATEGORY_NCCL, "ncclAllToAll",
         "NCCL_ALLTOALL");
  Expect(HorovodOp("NCCL_TORUS"), v1::CATEGORY_NCCL, "NCCL_TORUS", "");
  Expect(HorovodOp("MPI_ALLREDUCE"), v1::CATEGORY_MPI, "MPI_Allreduce",
         "MPI_ALLREDUCE");
  Expect(HorovodOp("MPI_ALLGATHER"), v1::CATEGORY_MPI, "MPI_Allgather",
         "MPI_ALLGATHER");
  Expect(HorovodOp("MPI_BCAST"), v1::CATEGORY_MPI, "MPI_Bcast", "MPI_BCAST");
  Expect(HorovodOp("MPI_ALLTOALL"), v1::CATEGORY_MPI, "MPI_Alltoall",
         "MPI_ALLTOALL");
  Expect(HorovodOp("MPI_REDUCESCATTER"), v1::CATEGORY_MPI, "MPI_Reduce_scatter",
         "MPI_REDUCESCATTER");
  Expect(HorovodOp("MPI_ADASUM_ALLREDUCE"), v1::CATEGORY_MPI,
         "MPI_ADASUM_ALLREDUCE", "");
  Expect(HorovodOp("GLOO_ALLREDUCE"), v1::CATEGORY_MPI, "GLOO_ALLREDUCE", "");
  Expect(HorovodOp("CCL_ALLGATHER"), v1::CATEGORY_MPI, "CCL_ALLGATHER", "");
  for (const char* phase :
       {"NEGOTIATE_ALLREDUCE", "ALLREDUCE", "WAIT_FOR_DATA", "QUEUE",
        "MEMCPY_IN_FUSION_BUFFER", "INIT_NCCL", "ERROR", ""}) {
    Expect(HorovodOp(phase), v1::CATEGORY_USER, phase, "");
  }
}

TEST(FrameworkOpsTest, Bluefog) {
  Expect(BluefogOp("PROC_ALLREDUCE"), v1::CATEGORY_MPI, "MPI_Allreduce",
         "PROC_ALLREDUCE");
  Expect(BluefogOp("PROC_BROADCAST"), v1::CATEGORY_MPI, "MPI_Bcast",
         "PROC_BROADCAST");
  Expect(BluefogOp("MPI_ALLGATHER"), v1::CATEGORY_MPI, "MPI_Allgather",
         "MPI_ALLGATHER");
  Expect(BluefogOp("PROC_BARRIER"), v1::CATEGORY_MPI, "MPI_Barrier",
         "PROC_BARRIER");
  Expect(BluefogOp("PROC_WIN_PUT"), v1::CATEGORY_MPI, "PROC_WIN_PUT", "");
  Expect(BluefogOp("MPI_NEIGHBOR_ALLREDUCE"), v1::CATEGORY_MPI,
         "MPI_NEIGHBOR_ALLREDUCE", "");
  Expect(BluefogOp("NCCL_ALLREDUCE"), v1::CATEGORY_NCCL, "ncclAllReduce",
         "NCCL_ALLREDUCE");
  for (const char* phase :
       {"ENQUEUE_ALLREDUCE", "COMMUNICATE", "COMPUTE_AVERAGE", "FORWARD"}) {
    Expect(BluefogOp(phase), v1::CATEGORY_USER, phase, "");
  }
}

TEST(FrameworkOpsTest, BytePS) {
  Expect(BytePSStage("PUSH"), v1::CATEGORY_MPI, "PUSH", "");
  Expect(BytePSStage("PULL"), v1::CATEGORY_MPI, "PULL", "");
  Expect(BytePSStage("REDUCE"), v1::CATEGORY_NCCL, "REDUCE", "");
  Expect(BytePSStage("BROADCAST"), v1::CATEGORY_NCCL, "BROADCAST", "");
  for (const char* stage :
       {"COORDINATE_REDUCE", "COPYD2H", "PCIE_REDUCE", "COORDINATE_PUSH",
        "COMPRESS", "DECOMPRESS", "COPYH2D", "COORDINATE_BROADCAST"}) {
    Expect(BytePSStage(stage), v1::CATEGORY_USER, stage, "");
  }
}

}  // namespace
}  // namespace meridian
