// ActivityDecoder: turns CUPTI activity records (cupti_activity.h, CUDA 13)
// into probe records on GPU stream tracks.
//
//   CONCURRENT_KERNEL / KERNEL  (CUpti_ActivityKernel10) -> CUDA_KERNEL,
//       named by the demangled kernel name; args grid, block, registers,
//       smem (static + dynamic shared memory bytes)
//   MEMCPY  (CUpti_ActivityMemcpy6)   -> CUDA_MEMCPY "Memcpy HtoD" (DtoH,
//       DtoD, HtoH, ...); bytes; args src and dst memory kinds
//   MEMCPY2 (CUpti_ActivityMemcpyPtoP4) -> CUDA_MEMCPY "Memcpy PtoP"; args
//       src_device, dst_device
//   MEMSET  (CUpti_ActivityMemset4)   -> CUDA_MEMSET "Memset"; bytes
// Each goes on the track "GPU <device> stream <stream>" (kind GPU_STREAM)
// and carries CUPTI's correlation id, which the CPU call that launched it
// carries too (CudaApiTracer), and that call's step. Times are CUPTI's,
// which the injection makes the probe's clock (CLOCK_MONOTONIC ns) with
// cuptiActivityRegisterTimestampCallback. Other kinds are counted and
// skipped.
//
// Not thread-safe: the injection decodes one buffer at a time. Decoding
// allocates only the first time a kernel name is seen (to demangle it).
#ifndef MERIDIAN_CAPTURE_CUPTI_ACTIVITY_DECODER_H_
#define MERIDIAN_CAPTURE_CUPTI_ACTIVITY_DECODER_H_

#include <cupti_activity.h>

#include <cstdint>
#include <memory>

#include "capture/cupti/cuda_api_tracer.h"
#include "capture/probe/capture_sink.h"

namespace meridian {

class ActivityDecoder {
 public:
  // `steps` may be null (no steps on GPU records).
  ActivityDecoder(CaptureSink* sink, const CudaApiTracer* steps);
  ~ActivityDecoder();

  void Decode(const CUpti_Activity* record);

  uint64_t decoded() const { return decoded_; }
  uint64_t skipped() const { return skipped_; }

 private:
  struct Cache;
  uint32_t StreamTrack(uint32_t device, uint32_t stream);
  uint32_t KernelName(const char* mangled);
  void Emit(ProbeRecord* r, uint32_t device, uint32_t stream,
            uint32_t correlation, uint64_t start, uint64_t end);

  CaptureSink* const sink_;
  const CudaApiTracer* const steps_;
  std::unique_ptr<Cache> cache_;
  uint64_t decoded_ = 0;
  uint64_t skipped_ = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_CUPTI_ACTIVITY_DECODER_H_
