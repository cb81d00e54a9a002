// NcclProfiler: what Meridian's NCCL profiler plugin does with NCCL's
// events (nccl_profiler_abi.h); nccl_plugin.cc exports it to NCCL as
// `ncclProfiler_v5` and `ncclProfiler_v4`.
//
// For every collective and point-to-point operation it records two spans:
//   - on the calling thread, the enqueue (category CUDA_RUNTIME, named
//     after the API: "ncclAllReduce"), from StartEvent to StopEvent;
//   - on the communicator's GPU track ("GPU NCCL <comm hash>", kind
//     GPU_STREAM), the execution (category NCCL, named as NCCL names the
//     function: "AllReduce"), from the earliest channel's start timer to the
//     latest channel's end timer, mapped onto the host clock (GpuClockMap).
// Both carry the same correlation id, so the Chrome export draws a flow
// arrow and the analyses see the launch. The execution span carries
// comm = the communicator hash, comm_size = its ranks, seq = NCCL's
// sequence number (collectives), bytes = count x type size, peer (the
// peer of a p2p operation, the root of Broadcast and Reduce: a rank in the
// communicator), and args algo, proto, channels, count,
// datatype, root, rank. Equal comm hash, function and seq on every rank
// identify one collective instance, as with MPI.
//
// An operation's execution is complete when it was enqueued and as many
// kernel channels as its descriptor announced have stopped. Operations
// whose kernels never report (NCCL without kernel timers, a channel count
// that does not match) are recorded with their enqueue time on the GPU
// track and args timing=enqueue when Finalize runs or when their slot is
// needed again, 4096 operations later.
//
// Allocation: none per event. Operations live in a fixed pool of slots;
// handles given to NCCL are (slot, generation) numbers, not pointers, so a
// late event for a slot that was reused is recognised and ignored.
// Thread-safe: NCCL calls from its users' threads and its proxy threads.
#ifndef MERIDIAN_CAPTURE_NCCL_NCCL_PROFILER_H_
#define MERIDIAN_CAPTURE_NCCL_NCCL_PROFILER_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "capture/nccl/gpu_clock_map.h"
#include "capture/nccl/nccl_profiler_abi.h"
#include "capture/probe/capture_sink.h"

namespace meridian {

class NcclProfiler {
 public:
  static constexpr uint32_t kSlots = 4096;
  static constexpr int kMaxComms = 1024;

  // `sink` may be null: the profiler then asks NCCL for no events.
  explicit NcclProfiler(CaptureSink* sink);
  ~NcclProfiler();

  // The v5 entry points (v4 is adapted to them in nccl_plugin.cc).
  nccl::Result Init(void** context, uint64_t comm_hash, int* activation_mask,
                    const char* comm_name, int nodes, int ranks, int rank);
  nccl::Result StartEvent(void* context, void** handle,
                          const nccl::EventDescrV5* descr);
  nccl::Result StopEvent(void* handle);
  nccl::Result RecordEventState(void* handle, int state,
                                const nccl::EventStateArgs* args);
  nccl::Result Finalize(void* context);

  // Counters, cumulative: operations recorded with GPU time, and with
  // enqueue time only.
  uint64_t gpu_timed() const { return gpu_timed_.load(); }
  uint64_t enqueue_timed() const { return enqueue_timed_.load(); }

  const GpuClockMap& clock() const { return clock_; }

 private:
  struct Comm;
  struct Op;

  Op* Resolve(void* handle, bool* channel) const;
  // Records `op`'s execution once, if it is still busy.
  void Complete(Op* op);
  // Ends `op`'s slot: its pending events are ignored, it is recorded.
  void Retire(Op* op);
  void EmitExecution(Op* op, bool gpu_timed);

  CaptureSink* const sink_;
  std::unique_ptr<Op[]> ops_;
  std::atomic<uint64_t> next_op_{0};
  std::unique_ptr<Comm[]> comms_;
  std::atomic<int> comm_count_{0};
  std::atomic<uint64_t> next_correlation_{1};
  GpuClockMap clock_;
  std::atomic<uint64_t> gpu_timed_{0};
  std::atomic<uint64_t> enqueue_timed_{0};
};

}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_NCCL_NCCL_PROFILER_H_
