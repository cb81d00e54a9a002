// GpuClockMap: maps GPU %globaltimer nanoseconds onto the host's
// CLOCK_MONOTONIC, from observations made as NCCL reports kernel timers.
//
// NCCL's proxy thread reads a channel's start and end timers from the GPU
// some time after the GPU wrote them, and calls the plugin, which notes
// the host clock then. Each such pair (host_ns, gpu_ns) bounds the offset
// from above: host_ns - gpu_ns >= true offset (the event happened before
// it was seen). The smallest difference seen is the best estimate, as in
// one-way-delay clock estimation: its error is the shortest delay between
// the GPU writing a timer and the proxy seeing it (a polling interval).
//
// To follow drift between the two clocks, the minimum is kept over a
// sliding window of two buckets of `window_ns`: the estimate is the min of
// the current and the previous bucket.
//
// Example: pairs (1000, 400), (1100, 520), (1300, 690) give differences
// 600, 580, 610: the offset is 580, and GPU time 700 maps to host 1280.
//
// Thread-safe, lock-free: observations come from NCCL's proxy threads.
#ifndef MERIDIAN_CAPTURE_NCCL_GPU_CLOCK_MAP_H_
#define MERIDIAN_CAPTURE_NCCL_GPU_CLOCK_MAP_H_

#include <atomic>
#include <cstdint>

namespace meridian {

class GpuClockMap {
 public:
  explicit GpuClockMap(int64_t window_ns = 1000000000)
      : window_ns_(window_ns) {}

  // The GPU showed `gpu_ns` no later than the host clock read `host_ns`.
  void Observe(int64_t host_ns, uint64_t gpu_ns);

  // Whether any observation was made.
  bool ready() const;
  // Host time of GPU time `gpu_ns` (meaningful only once ready()).
  int64_t ToHost(uint64_t gpu_ns) const;
  // The current offset estimate, host minus GPU.
  int64_t offset() const;

 private:
  static constexpr int64_t kNone = INT64_MAX;
  static void StoreMin(std::atomic<int64_t>* slot, int64_t value);

  const int64_t window_ns_;
  std::atomic<int64_t> bucket_start_{
      kNone};  // host ns the current bucket began
  std::atomic<int64_t> current_{kNone};
  std::atomic<int64_t> previous_{kNone};
};

}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_NCCL_GPU_CLOCK_MAP_H_
