#include "capture/nccl/gpu_clock_map.h"

#include <algorithm>

namespace meridian {

void GpuClockMap::StoreMin(std::atomic<int64_t>* slot, int64_t value) {
  int64_t seen = slot->load(std::memory_order_relaxed);
  while (value < seen &&
         !slot->compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

void GpuClockMap::Observe(int64_t host_ns, uint64_t gpu_ns) {
  const int64_t difference = host_ns - static_cast<int64_t>(gpu_ns);
  int64_t start = bucket_start_.load(std::memory_order_relaxed);
  if (start == kNone || host_ns - start >= window_ns_) {
    // One observer rotates the buckets; the others' observations land in
    // either, which only widens the window a little.
    if (bucket_start_.compare_exchange_strong(start, host_ns,
                                              std::memory_order_relaxed)) {
      const int64_t last = current_.exchange(kNone, std::memory_order_relaxed);
      // A bucket older than two windows says nothing about now.
      previous_.store(
          start != kNone && host_ns - start < 2 * window_ns_ ? last : kNone,
          std::memory_order_relaxed);
    }
  }
  StoreMin(&current_, difference);
}

bool GpuClockMap::ready() const { return offset() != kNone; }

int64_t GpuClockMap::offset() const {
  return std::min(current_.load(std::memory_order_relaxed),
                  previous_.load(std::memory_order_relaxed));
}

int64_t GpuClockMap::ToHost(uint64_t gpu_ns) const {
  return static_cast<int64_t>(gpu_ns) + offset();
}

}  // namespace meridian
