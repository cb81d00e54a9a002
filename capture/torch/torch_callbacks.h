// TorchCallbacks: torch's global RecordFunction callbacks that feed a
// C10dRecorder (c10d_recorder.h), the way torch's own profiler receives
// the same events:
//   - FUNCTION scope, with inputs: the dispatcher's c10d ops
//     (c10d::allreduce_, c10d::broadcast_, ... c10d::send, c10d::recv_),
//     which every caller goes through, DDP's reducer included. Their
//     inputs give the process group, the tensors (bytes), the root or peer
//     and the tag. Other ops return at a name compare.
//   - USER_SCOPE, with ids and inputs: the backend's work
//     ("gloo:all_reduce", "nccl:all_reduce", "mpi:..."), which torch begins
//     when the work begins (gloo: on its worker thread, maybe after the
//     c10d op returned; nccl, mpi: within the op) and ends when it
//     completes, on whichever thread completes it. Its inputs (the op's
//     tensors) tell which op it is (C10dRecorder's key). Other ranges
//     (record_function's) cost a table lookup that misses.
//   - optionally (`ops`), FUNCTION and BACKWARD_FUNCTION scopes without
//     inputs: every operator ("aten::addmm") and autograd node as a phase of
//     the thread that runs it (meridian_phase_begin/end of the probe's C
//     API), sampled with probability `ops` (1: all).
// Built with torch's cpp_extension against the torch in use
// (build_extension.py), not by Bazel.
#ifndef MERIDIAN_CAPTURE_TORCH_TORCH_CALLBACKS_H_
#define MERIDIAN_CAPTURE_TORCH_TORCH_CALLBACKS_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

#include "capture/torch/c10d_recorder.h"

namespace meridian {

// Registers the callbacks, feeding `recorder` (which outlives them).
// Returns "" once started, or why nothing is recorded (no c10d op has the
// schema this capture reads). `*skipped` lists the ops it knows whose
// schema differs in this torch (they are not recorded), "" if none.
// `ops`: the probability an operator is recorded as a phase; 0: none.
std::string StartTorchCallbacks(C10dRecorder* recorder, double ops,
                                std::string* skipped);

// Removes them (a later Start registers them again).
void StopTorchCallbacks();

// A tensor's identity as C10dRecorder's key (Call::key) names it.
inline uint64_t TensorKey(const at::Tensor& tensor) {
  return reinterpret_cast<uint64_t>(tensor.unsafeGetTensorImpl());
}

}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_TORCH_TORCH_CALLBACKS_H_
