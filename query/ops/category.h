// Category names as users type them (`--category mpi,nccl`) and as they
// appear in Chrome traces ("cat") and statistics.
#ifndef MERIDIAN_QUERY_OPS_CATEGORY_H_
#define MERIDIAN_QUERY_OPS_CATEGORY_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "meridian/v1/query.pb.h"
#include "meridian/v1/span.pb.h"

namespace meridian {

// "mpi", "nccl", "cuda_kernel", "cuda_memcpy", "cuda_memset", "cuda_sync",
// "cuda_runtime", "nvtx", "user", "c10d"; "unknown" for anything else.
absl::string_view CategoryName(v1::Category category);

// The inverse; INVALID_ARGUMENT listing the known names otherwise.
absl::StatusOr<v1::Category> ParseCategory(absl::string_view name);

// MPI, NCCL and c10d (torch.distributed): what statistics count as
// communication.
bool IsCommunication(v1::Category category);

// The probe's marker of a step's end: the user span "step" that
// meridian_step_end records (docs/analysis.md, "Steps").
bool IsStepMarker(v1::Category category, absl::string_view name);

// "compute", "communication", "waiting", "set-up", "untraced" (critical
// path).
absl::string_view TimeClassName(v1::TimeClass time_class);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_OPS_CATEGORY_H_
