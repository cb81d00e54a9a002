#include "query/ops/category.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace meridian {
namespace {

constexpr struct {
  v1::Category category;
  absl::string_view name;
} kNames[] = {
    {v1::CATEGORY_MPI, "mpi"},
    {v1::CATEGORY_NCCL, "nccl"},
    {v1::CATEGORY_CUDA_KERNEL, "cuda_kernel"},
    {v1::CATEGORY_CUDA_MEMCPY, "cuda_memcpy"},
    {v1::CATEGORY_CUDA_MEMSET, "cuda_memset"},
    {v1::CATEGORY_CUDA_SYNC, "cuda_sync"},
    {v1::CATEGORY_CUDA_RUNTIME, "cuda_runtime"},
    {v1::CATEGORY_NVTX, "nvtx"},
    {v1::CATEGORY_USER, "user"},
    {v1::CATEGORY_C10D, "c10d"},
};

}  // namespace

absl::string_view CategoryName(v1::Category category) {
  for (const auto& entry : kNames) {
    if (entry.category == category) return entry.name;
  }
  return "unknown";
}

absl::StatusOr<v1::Category> ParseCategory(absl::string_view name) {
  std::string known;
  for (const auto& entry : kNames) {
    if (entry.name == name) return entry.category;
    absl::StrAppend(&known, known.empty() ? "" : ", ", entry.name);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown category \"", name, "\"; categories are: ", known));
}

bool IsCommunication(v1::Category category) {
  return category == v1::CATEGORY_MPI || category == v1::CATEGORY_NCCL ||
         category == v1::CATEGORY_C10D;
}

bool IsStepMarker(v1::Category category, absl::string_view name) {
  return category == v1::CATEGORY_USER && name == "step";
}

absl::string_view TimeClassName(v1::TimeClass time_class) {
  switch (time_class) {
    case v1::TIME_CLASS_COMPUTE:
      return "compute";
    case v1::TIME_CLASS_COMMUNICATION:
      return "communication";
    case v1::TIME_CLASS_WAITING:
      return "waiting";
    case v1::TIME_CLASS_SETUP:
      return "set-up";
    default:
      return "untraced";
  }
}

}  // namespace meridian
