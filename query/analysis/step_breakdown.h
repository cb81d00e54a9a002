// StepBreakdown: iteration time per step and rank (byteprofile's iter_time)
// and how each rank spent it: compute, communication and their overlap
// (what Bluefog's timeline shows side by side and HTA computes).
//
// A rank's step is the first start to the last end of its spans tagged
// with that step. In a job that marks its steps' ends (JobSpans::
// marks_steps), only steps some rank ended are steps. Within a step,
// across all the rank's tracks:
//   compute        time some track's innermost span is not MPI/NCCL (nor a
//                  CUDA synchronisation): framework phases, kernels, copies;
//   communication  time in MPI/NCCL: blocking calls, and nonblocking
//                  operations from issue to completion;
//   overlap        time in both at once (communication hidden by compute).
// Each is the measure of a union: two tracks busy at once count once.
//
// Example: a rank computes [0, 3) ms on its main thread while its
// background thread runs MPI_Allreduce [1, 2), then the main thread calls
// MPI_Allreduce [3, 5.1): step 5.1 ms, compute 3, communication 3.1,
// overlap 1.
//
// More: docs/analysis.md, "Steps".
#ifndef MERIDIAN_QUERY_ANALYSIS_STEP_BREAKDOWN_H_
#define MERIDIAN_QUERY_ANALYSIS_STEP_BREAKDOWN_H_

#include <optional>

#include "meridian/v1/query.pb.h"
#include "query/analysis/dependency_graph.h"

namespace meridian {

// Every step of the job, ascending; fills everything but job.
v1::StepsReply StepBreakdown(const DependencyGraph& graph);

// Leaves in each step of `reply` only `rank`'s own figures (none without
// a rank); the means stay those of every rank.
void KeepRankSteps(std::optional<int32_t> rank, v1::StepsReply* reply);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_STEP_BREAKDOWN_H_
