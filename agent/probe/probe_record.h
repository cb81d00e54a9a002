// ProbeRecord: one event as the in-process probe records it, a fixed-size
// plain struct written into shared memory (SpanRing) and turned into a
// v1::Span by the node agent. Names are ids (interned once per process, never
// per event); everything else is a number.
//
// Depends on nothing but the C++ standard library: it is compiled into
// libmeridian_probe.so.
#ifndef MERIDIAN_AGENT_PROBE_PROBE_RECORD_H_
#define MERIDIAN_AGENT_PROBE_PROBE_RECORD_H_

#include <cstdint>
#include <type_traits>

namespace meridian {

struct ProbeRecord {
  // Which optional fields are set.
  enum Flags : uint16_t {
    kHasPeer = 1 << 0,
    kHasTag = 1 << 1,
    kHasSeq = 1 << 2,
    kHasStep = 1 << 3,
    kHasPartition = 1 << 4,
  };

  int64_t start_ns;
  int64_t dur_ns;
  int64_t bytes;
  uint64_t comm;
  uint64_t seq;
  int64_t step;
  uint64_t correlation;
  uint32_t name;  // the process's string id
  int32_t peer;   // world rank
  int32_t tag;
  uint32_t comm_size;
  int32_t partition;
  uint8_t category;  // v1::Category
  uint8_t kind;      // v1::SpanKind
  uint16_t flags;
};

static_assert(std::is_trivially_copyable_v<ProbeRecord>);
static_assert(sizeof(ProbeRecord) == 80, "the shared-memory layout is ABI");

}  // namespace meridian

#endif  // MERIDIAN_AGENT_PROBE_PROBE_RECORD_H_
