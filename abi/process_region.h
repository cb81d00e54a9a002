// ProcessRegion: everything one traced process shares with its node agent,
// laid out in one block of shared memory (a memfd the probe creates and
// hands to the agent over the agent's Unix socket).
//
//   ProcessRegionHeader   magic, version, geometry, incarnation, counters,
//                         one RingSlot and one InFlightCall per possible
//                         thread ring
//   string area           names, appended and never changed:
//                         [uint32 length][bytes], 4-byte aligned
//   rings                 max_rings SpanRings of ring_capacity records each
//
// Strings: a record names its operation by string id = offset in the string
// area + 1 (0 is ""). The probe appends a string and then publishes the new
// end of the area (release); it pushes records naming the string only after
// that, so an agent that has read a record (acquire on the ring's head) and
// then loads strings_end (acquire) always finds the string.
//
// Rings: a thread takes a ring the first time it records: a ring whose
// thread has exited (kSlotRetired) if one is at least half empty, else the
// next unused one (claimed_rings), which it lays out, else the retired ring
// with the most room. It stores its thread id in the
// slot and then sets `state` to kSlotOwned (release). When the thread exits,
// the probe sets the slot back to kSlotRetired; the ring is never laid out
// again, so its record indexes keep growing and (incarnation, ring, index)
// names one record for the process's life.
//
// A reused ring may still hold the exited thread's undrained records: the
// new owner first pushes an owner record (ProbeRecord::kOwner, `peer` = its
// thread id), and the agent gives the records after it to that thread.
// Which thread owns the record at the ring's committed tail is in
// `tail_owner`: the probe sets it when it lays the ring out, the agent
// whenever it commits, so a reader that starts at the tail (a restarted
// agent) knows it. The agent drains every ring whose state is not
// kSlotUnused. At most kMaxRings threads record at once; events of a further
// thread are counted in `events_without_ring` and not recorded until a ring
// is free.
//
// Both sides check what they read: the agent treats the memory as input
// from another process (any offset or length may be wrong).
#ifndef MERIDIAN_ABI_PROCESS_REGION_H_
#define MERIDIAN_ABI_PROCESS_REGION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "abi/in_flight.h"
#include "abi/span_ring.h"

namespace meridian {

enum RingSlotState : uint32_t {
  kSlotUnused = 0,   // never laid out
  kSlotOwned = 1,    // a live thread records into it
  kSlotRetired = 2,  // its thread exited: the next thread may take it
};

struct RingSlot {
  std::atomic<uint32_t> state;  // RingSlotState
  int32_t tid;  // OS thread id of the thread that took the ring last
  // Owner of the record at the ring's committed tail (see above).
  std::atomic<int32_t> tail_owner;
  uint32_t reserved;
};

struct ProcessRegionHeader {
  static constexpr uint64_t kMagic = 0x5052434449524d45ULL;  // "EMRIDCRP"
  static constexpr uint32_t kVersion = 3;
  static constexpr uint32_t kMaxRings = 64;

  uint64_t magic;
  uint32_t version;
  uint32_t max_rings;
  uint64_t ring_capacity;  // records per ring, a power of two
  uint64_t ring_stride;    // bytes from one ring to the next
  uint64_t rings_offset;   // from the start of the region
  uint64_t strings_offset;
  uint64_t strings_capacity;
  uint64_t total_bytes;
  uint64_t incarnation;  // random per process: tells a reused pid apart
  alignas(64) std::atomic<uint64_t> strings_end;  // bytes published
  std::atomic<uint32_t> claimed_rings;
  std::atomic<uint64_t> events_without_ring;
  // On-demand tracing (`meridian trace`), written by the agent: a new
  // trace_generation asks the probe to record the next trace_steps steps
  // from its next step_begin; record_until_ns (CLOCK_MONOTONIC) records
  // every event until then.
  alignas(64) std::atomic<uint64_t> trace_generation;
  std::atomic<uint32_t> trace_steps;
  std::atomic<int64_t> record_until_ns;
  RingSlot slots[kMaxRings];
  // What the thread owning ring i is in now (in_flight.h): written by that
  // thread only, read by the agent while a job may hang (docs/health.md).
  InFlightCall in_flight[kMaxRings];
};

struct ProcessRegionGeometry {
  uint64_t ring_capacity = 1 << 15;     // 3 MiB of records per thread
  uint64_t strings_capacity = 1 << 20;  // names
};

// Bytes a region of `geometry` needs.
uint64_t ProcessRegionBytes(const ProcessRegionGeometry& geometry);

// Lays out an empty region in `memory` (ProcessRegionBytes bytes, zeroed,
// 64-byte aligned). False if the geometry is invalid (capacity not a power
// of two, or zero).
bool InitProcessRegion(void* memory, const ProcessRegionGeometry& geometry,
                       uint64_t incarnation);

// The region's geometry as the agent uses it. The agent copies it out of the
// shared header once and checks the copy (ReadProcessRegionLayout); every
// later access goes through the copy, so a process that rewrites its header
// after the check moves nothing the agent reads.
struct ProcessRegionLayout {
  uint64_t bytes = 0;  // mapped
  uint64_t ring_capacity = 0;
  uint64_t ring_stride = 0;
  uint64_t rings_offset = 0;
  uint64_t strings_offset = 0;
  uint64_t strings_capacity = 0;
  uint64_t incarnation = 0;
};

// Copies the header of `memory` (`bytes` long) and checks the copy: true,
// filling `*layout`, if it describes a region of this version whose string
// area and kMaxRings rings, 64-byte aligned, all lie within `bytes` (every
// bound computed without overflow).
bool ReadProcessRegionLayout(const void* memory, uint64_t bytes,
                             ProcessRegionLayout* layout);

// The layout of a region this process laid out itself (no check needed).
ProcessRegionLayout LayoutOf(const ProcessRegionHeader& header);

// Where ring `index` (< kMaxRings) lives.
inline void* RingMemory(void* memory, const ProcessRegionLayout& layout,
                        uint32_t index) {
  return static_cast<char*>(memory) + layout.rings_offset +
         layout.ring_stride * index;
}
inline void* RingMemory(ProcessRegionHeader* header, uint32_t index) {
  return RingMemory(header, LayoutOf(*header), index);
}

// Appends `name` (`length` bytes) to the string area and publishes it.
// Returns its id, or 0 if the area is full. Callers serialize appends (the
// probe holds a lock: it appends once per distinct name, never per event).
uint32_t AppendString(ProcessRegionHeader* header, const char* name,
                      uint32_t length);

// The string with `id`, if it is published and lies within the string
// area: sets `*data` and `*length` and returns true. Id 0 is "". The bytes
// stay in shared memory (the probe never changes them; a hostile process
// may, but cannot move them out of bounds).
bool StringAt(const void* memory, const ProcessRegionLayout& layout,
              uint32_t id, const char** data, uint32_t* length);
inline bool StringAt(const ProcessRegionHeader* header, uint32_t id,
                     const char** data, uint32_t* length) {
  return StringAt(header, LayoutOf(*header), id, data, length);
}

}  // namespace meridian

#endif  // MERIDIAN_ABI_PROCESS_REGION_H_
