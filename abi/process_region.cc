#include "abi/process_region.h"

#include <cstring>
#include <new>

namespace meridian {
namespace {

constexpr uint64_t RoundUp64(uint64_t n) { return (n + 63) / 64 * 64; }

bool PowerOfTwo(uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

uint64_t ProcessRegionBytes(const ProcessRegionGeometry& geometry) {
  return RoundUp64(sizeof(ProcessRegionHeader)) +
         RoundUp64(geometry.strings_capacity) +
         ProcessRegionHeader::kMaxRings *
             RoundUp64(SpanRingBytes(geometry.ring_capacity));
}

bool InitProcessRegion(void* memory, const ProcessRegionGeometry& geometry,
                       uint64_t incarnation) {
  if (!PowerOfTwo(geometry.ring_capacity) || geometry.strings_capacity < 64 ||
      geometry.strings_capacity > (1ULL << 31)) {
    return false;
  }
  auto* header = new (memory) ProcessRegionHeader();
  header->magic = ProcessRegionHeader::kMagic;
  header->version = ProcessRegionHeader::kVersion;
  header->max_rings = ProcessRegionHeader::kMaxRings;
  header->ring_capacity = geometry.ring_capacity;
  header->ring_stride = RoundUp64(SpanRingBytes(geometry.ring_capacity));
  header->strings_offset = RoundUp64(sizeof(ProcessRegionHeader));
  header->strings_capacity = RoundUp64(geometry.strings_capacity);
  header->rings_offset = header->strings_offset + header->strings_capacity;
  header->total_bytes = ProcessRegionBytes(geometry);
  header->incarnation = incarnation;
  header->strings_end.store(0, std::memory_order_relaxed);
  header->claimed_rings.store(0, std::memory_order_relaxed);
  header->events_without_ring.store(0, std::memory_order_relaxed);
  header->trace_generation.store(0, std::memory_order_relaxed);
  header->trace_steps.store(0, std::memory_order_relaxed);
  header->record_until_ns.store(0, std::memory_order_relaxed);
  for (RingSlot& slot : header->slots) {
    slot.state.store(kSlotUnused, std::memory_order_relaxed);
    slot.tid = 0;
    slot.tail_owner.store(0, std::memory_order_relaxed);
    slot.reserved = 0;
  }
  std::atomic_thread_fence(std::memory_order_release);
  return true;
}

bool ReadProcessRegionLayout(const void* memory, uint64_t bytes,
                             ProcessRegionLayout* layout) {
  if (memory == nullptr || bytes < sizeof(ProcessRegionHeader)) return false;
  // One copy of the fields, then checks on the copy only: the values come
  // from another process, which may change them at any moment.
  const auto* shared = static_cast<const volatile ProcessRegionHeader*>(memory);
  const uint64_t magic = shared->magic;
  const uint32_t version = shared->version;
  const uint32_t max_rings = shared->max_rings;
  ProcessRegionLayout l;
  l.bytes = bytes;
  l.ring_capacity = shared->ring_capacity;
  l.ring_stride = shared->ring_stride;
  l.rings_offset = shared->rings_offset;
  l.strings_offset = shared->strings_offset;
  l.strings_capacity = shared->strings_capacity;
  l.incarnation = shared->incarnation;
  if (magic != ProcessRegionHeader::kMagic ||
      version != ProcessRegionHeader::kVersion ||
      max_rings != ProcessRegionHeader::kMaxRings ||
      // The rings' atomics must be aligned as the probe lays them out
      // (found by the process_region fuzz target: a misaligned ring).
      l.rings_offset % 64 != 0 || l.ring_stride % 64 != 0 ||
      l.strings_offset % 64 != 0 || !PowerOfTwo(l.ring_capacity) ||
      l.ring_capacity > (1ULL << 30) ||
      l.ring_stride < SpanRingBytes(l.ring_capacity) ||
      l.strings_offset < sizeof(ProcessRegionHeader) ||
      l.strings_offset > bytes || l.strings_capacity > (1ULL << 31) ||
      l.strings_capacity > bytes - l.strings_offset ||
      l.rings_offset < l.strings_offset + l.strings_capacity ||
      l.rings_offset > bytes ||
      l.ring_stride >
          (bytes - l.rings_offset) / ProcessRegionHeader::kMaxRings) {
    return false;
  }
  *layout = l;
  return true;
}

ProcessRegionLayout LayoutOf(const ProcessRegionHeader& header) {
  ProcessRegionLayout l;
  l.bytes = header.total_bytes;
  l.ring_capacity = header.ring_capacity;
  l.ring_stride = header.ring_stride;
  l.rings_offset = header.rings_offset;
  l.strings_offset = header.strings_offset;
  l.strings_capacity = header.strings_capacity;
  l.incarnation = header.incarnation;
  return l;
}

uint32_t AppendString(ProcessRegionHeader* header, const char* name,
                      uint32_t length) {
  const uint64_t end = header->strings_end.load(std::memory_order_relaxed);
  const uint64_t need = (4 + static_cast<uint64_t>(length) + 3) / 4 * 4;
  if (end + need > header->strings_capacity) return 0;
  char* area = reinterpret_cast<char*>(header) + header->strings_offset;
  std::memcpy(area + end, &length, 4);
  std::memcpy(area + end + 4, name, length);
  header->strings_end.store(end + need, std::memory_order_release);
  return static_cast<uint32_t>(end + 1);
}

bool StringAt(const void* memory, const ProcessRegionLayout& layout,
              uint32_t id, const char** data, uint32_t* length) {
  if (id == 0) {
    *data = "";
    *length = 0;
    return true;
  }
  const auto* header = static_cast<const ProcessRegionHeader*>(memory);
  const uint64_t end = header->strings_end.load(std::memory_order_acquire);
  const uint64_t offset = static_cast<uint64_t>(id) - 1;
  if (end > layout.strings_capacity || offset % 4 != 0 || offset + 4 > end) {
    return false;
  }
  const char* area = static_cast<const char*>(memory) + layout.strings_offset;
  uint32_t n;
  std::memcpy(&n, area + offset, 4);
  if (n > end - offset - 4) return false;
  *data = area + offset + 4;
  *length = n;
  return true;
}

}  // namespace meridian
