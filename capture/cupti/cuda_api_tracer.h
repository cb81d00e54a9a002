// CudaApiTracer: the CPU side of CUDA capture. CUPTI calls it on entry to
// and exit from the CUDA runtime (and driver launch) calls Meridian traces,
// on the calling thread; it records each call there as a span (category
// CUDA_RUNTIME, or CUDA_SYNC for the *Synchronize calls) carrying CUPTI's
// correlation id, which the GPU activity the call started carries too
// (ActivityDecoder). It also remembers, per correlation id, the training
// step current at the call, for the GPU activity delivered later.
//
// Which calls: kernel and graph launches, copies, memsets and the
// synchronize calls (Traced()); CUDA's many cheap queries (cudaGetDevice...)
// are not subscribed, so they cost nothing. A driver launch made inside a
// traced runtime call (cudaLaunchKernel calls cuLaunchKernel) is not
// recorded twice.
//
// No CUDA or CUPTI headers: callers pass the callback's id, name and
// correlation. Thread-safe; Enter/Exit allocate nothing and take no lock
// (a call's name is interned once per callback id).
#ifndef MERIDIAN_CAPTURE_CUPTI_CUDA_API_TRACER_H_
#define MERIDIAN_CAPTURE_CUPTI_CUDA_API_TRACER_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "capture/probe/capture_sink.h"

namespace meridian {

class CudaApiTracer {
 public:
  enum class Domain { kRuntime, kDriver };
  static constexpr uint32_t kMaxCallbackIds = 2048;
  static constexpr uint32_t kStepSlots = 1 << 14;

  explicit CudaApiTracer(CaptureSink* sink);

  // Whether Meridian subscribes to the call named `name` in `domain`.
  static bool Traced(Domain domain, const char* name);

  // CUPTI's API_ENTER and API_EXIT for callback `id` named `name`.
  void Enter(Domain domain, uint32_t id);
  void Exit(Domain domain, uint32_t id, const char* name, uint32_t correlation);

  // The step current when the call with `correlation` was made, if one was
  // and it is among the last kStepSlots calls.
  bool StepOf(uint32_t correlation, int64_t* step) const;

 private:
  CaptureSink* const sink_;
  std::unique_ptr<std::atomic<uint32_t>[]> names_;  // by domain and id
  // (correlation << 32 | step + 1) per correlation % kStepSlots; 0: none.
  std::unique_ptr<std::atomic<uint64_t>[]> steps_;
};

}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_CUPTI_CUDA_API_TRACER_H_
