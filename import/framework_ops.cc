#include "import/framework_ops.h"

#include <utility>

namespace meridian {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The collective `op` (upper case, no library prefix) by the name of
// NCCL's function; "" if NCCL has none.
std::string_view NcclName(std::string_view op) {
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"ALLREDUCE", "ncclAllReduce"}, {"REDUCESCATTER", "ncclReduceScatter"},
      {"ALLGATHER", "ncclAllGather"}, {"REDUCE", "ncclReduce"},
      {"BCAST", "ncclBroadcast"},     {"BROADCAST", "ncclBroadcast"},
      {"ALLTOALL", "ncclAllToAll"},
  };
  for (const auto& [from, to] : kNames) {
    if (op == from) return to;
  }
  return "";
}

// The same by MPI's function, as Meridian's MPI capture names it.
std::string_view MpiName(std::string_view op) {
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"ALLREDUCE", "MPI_Allreduce"}, {"ALLGATHER", "MPI_Allgather"},
      {"BCAST", "MPI_Bcast"},         {"BROADCAST", "MPI_Bcast"},
      {"ALLTOALL", "MPI_Alltoall"},   {"REDUCESCATTER", "MPI_Reduce_scatter"},
      {"BARRIER", "MPI_Barrier"},
  };
  for (const auto& [from, to] : kNames) {
    if (op == from) return to;
  }
  return "";
}

FrameworkOp Make(v1::Category category, std::string_view written,
                 std::string_view renamed) {
  FrameworkOp op;
  op.category = category;
  if (renamed.empty()) {
    op.name = std::string(written);
  } else {
    op.name = std::string(renamed);
    op.timeline_name = std::string(written);
  }
  return op;
}

}  // namespace

FrameworkOp HorovodOp(std::string_view activity) {
  if (StartsWith(activity, "NCCL_")) {
    return Make(v1::CATEGORY_NCCL, activity, NcclName(activity.substr(5)));
  }
  if (StartsWith(activity, "MPI_")) {
    return Make(v1::CATEGORY_MPI, activity, MpiName(activity.substr(4)));
  }
  if (StartsWith(activity, "GLOO_") || StartsWith(activity, "CCL_")) {
    return Make(v1::CATEGORY_MPI, activity, "");
  }
  return Make(v1::CATEGORY_USER, activity, "");
}

FrameworkOp BluefogOp(std::string_view activity) {
  if (StartsWith(activity, "NCCL_")) {
    return Make(v1::CATEGORY_NCCL, activity, NcclName(activity.substr(5)));
  }
  for (std::string_view prefix : {"PROC_", "MPI_"}) {
    if (StartsWith(activity, prefix)) {
      return Make(v1::CATEGORY_MPI, activity,
                  MpiName(activity.substr(prefix.size())));
    }
  }
  return Make(v1::CATEGORY_USER, activity, "");
}

FrameworkOp BytePSStage(std::string_view queue) {
  if (queue == "PUSH" || queue == "PULL") {
    return Make(v1::CATEGORY_MPI, queue, "");
  }
  if (queue == "REDUCE" || queue == "BROADCAST") {
    return Make(v1::CATEGORY_NCCL, queue, "");
  }
  return Make(v1::CATEGORY_USER, queue, "");
}

}  // namespace meridian
