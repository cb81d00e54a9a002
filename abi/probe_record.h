// ProbeRecord: one event as the in-process probe records it, a fixed-size
// plain struct written into shared memory (SpanRing) and turned into a
// v1::Span by the node agent. Names are ids (interned once per process, never
// per event, see ProcessRegion); everything else is a number. Times are
// CLOCK_MONOTONIC nanoseconds, or time-stamp-counter ticks when kTicks is
// set: the agent, on the same host, maps them to the wall clock.
//
// Depends on nothing but the C++ standard library: it is compiled into
// libmeridian_probe.so.
#ifndef MERIDIAN_ABI_PROBE_RECORD_H_
#define MERIDIAN_ABI_PROBE_RECORD_H_

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
    // start_ns and dur_ns are in time-stamp-counter ticks, not ns (the
    // agent converts them; see agent/node_time_map.h).
    kTicks = 1 << 5,
    // `queue` names a GPU stream's track (TRACK_KIND_GPU_STREAM: "GPU 0
    // stream 7", "GPU NCCL 3f2a...") instead of a queue.
    kGpuTrack = 1 << 6,
    // `extra` holds the time spent inside the call that issued a
    // non-blocking operation recorded from issue to completion (the agent
    // sends it as the span's "call_ns" arg; time units as start_ns).
    kExtraCallTime = 1 << 7,
    // `extra` holds the bytes sent by a call that also receives
    // (MPI_Sendrecv): the "send_bytes" arg.
    kExtraSendBytes = 1 << 8,
    // `callsite` is set (an MPI call's; never with kHasPartition, whose
    // field it shares).
    kHasCallsite = 1 << 9,
    // Not an event: the ring changed hands (process_region.h). `peer` is
    // the thread id of the ring's new owner, whose records follow.
    kOwner = 1 << 10,
    // A call that also receives (MPI_Sendrecv): `seq` holds the receive's
    // source (a world rank, the low 32 bits) and its tag (the high 32
    // bits), both >= 0, as received; `peer` and `tag` are the send's.
    // Never with kHasSeq.
    kRecvPeer = 1 << 11,
  };

  int64_t start_ns;
  int64_t dur_ns;
  int64_t bytes;  // for SPAN_KIND_COUNTER: the value's double bits
  uint64_t comm;
  uint64_t seq;
  int64_t step;
  uint64_t correlation;
  uint32_t name;  // the process's string id
  // String id naming a queue's or (kGpuTrack) a GPU stream's track; 0: the
  // recording thread's track.
  uint32_t queue;
  int32_t peer;  // world rank
  int32_t tag;
  uint32_t comm_size;
  // One or the other (records of NCCL operations have partitions, MPI
  // calls have call sites), which keeps the record at 96 bytes: at 104, a
  // record spans one more cache line every other push, and each recorded
  // MPI call cost 13 ns more (docs/PERFORMANCE.md).
  union {
    int32_t partition;  // kHasPartition
    // kHasCallsite: string id of the call site ("<object path>+0x<file
    // address>" of the return address of the program's call:
    // capture/probe/callsite.h).
    uint32_t callsite;
  };
  uint8_t category;  // v1::Category
  uint8_t kind;      // v1::SpanKind
  uint16_t flags;
  // String id of the span's arguments, "key=value" pairs joined by ';'
  // ("algo=RING;proto=SIMPLE;channels=2"): values that are integers become
  // integer args. 0: none.
  uint32_t args;
  int64_t extra;  // see kExtraCallTime, kExtraSendBytes
};

static_assert(std::is_trivially_copyable_v<ProbeRecord>);
static_assert(sizeof(ProbeRecord) == 96, "the shared-memory layout is ABI");

}  // namespace meridian

#endif  // MERIDIAN_ABI_PROBE_RECORD_H_
