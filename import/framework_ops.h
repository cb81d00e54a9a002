// FrameworkOp: the operations that Horovod, Bluefog and BytePS timelines
// name, as Meridian's categories and names. Collectives become
// communication spans (CATEGORY_MPI or CATEGORY_NCCL, what `meridian
// stats` counts as communication) named as Meridian's own capture names
// them, so that imported and captured operations line up and the MPI rules
// (query/ops/mpi_semantics.h) know their role; everything else (waiting,
// queueing, copies, negotiation) is a phase, CATEGORY_USER, named as the
// timeline names it.
//
//   Horovod  NCCL_ALLREDUCE -> NCCL "ncclAllReduce" (ncclReduceScatter,
//            ncclAllGather, ncclReduce, ncclBroadcast, ncclAllToAll; other
//            NCCL_* keep their name); MPI_ALLREDUCE -> MPI "MPI_Allreduce"
//            (MPI_Allgather, MPI_Bcast, MPI_Alltoall, MPI_Reduce_scatter,
//            MPI_Barrier; other MPI_* keep their name); GLOO_* and CCL_*
//            -> MPI, their name kept (Meridian has no category of its own
//            for CPU collective libraries: they count as MPI-like
//            communication).
//   Bluefog  PROC_<OP> (and MPI_<OP>, its name before June 2020) -> MPI,
//            "MPI_Allreduce" etc. for the operations MPI has by that name
//            (ALLREDUCE, ALLGATHER, BROADCAST, BARRIER), else the name
//            kept (PROC_NEIGHBOR_ALLREDUCE, PROC_WIN_PUT); NCCL_<OP> as
//            Horovod's.
//   BytePS   PUSH, PULL (ps-lite messages to the servers) -> MPI;
//            REDUCE, BROADCAST (NCCL within the node) -> NCCL; the name
//            kept. Other stages are phases.
// A renamed operation keeps its timeline name in `timeline_name`, which
// the readers store as the arg "timeline_name".
#ifndef MERIDIAN_IMPORT_FRAMEWORK_OPS_H_
#define MERIDIAN_IMPORT_FRAMEWORK_OPS_H_

#include <string>
#include <string_view>

#include "meridian/v1/span.pb.h"

namespace meridian {

struct FrameworkOp {
  v1::Category category = v1::CATEGORY_USER;
  std::string name;           // Meridian's name
  std::string timeline_name;  // the timeline's, if it differs; else ""

  bool communication() const { return category != v1::CATEGORY_USER; }
};

FrameworkOp HorovodOp(std::string_view activity);
FrameworkOp BluefogOp(std::string_view activity);
FrameworkOp BytePSStage(std::string_view queue);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_FRAMEWORK_OPS_H_
