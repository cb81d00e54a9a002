// SampleActivity: what each thread of a traced process is in now, read from
// the in-flight slots of its shared region (abi/in_flight.h), for the
// collector's live health view (docs/health.md).
//
// One ThreadActivity per ring slot a live thread owns (kSlotOwned). The
// region is another process's memory: a slot being written throughout the
// read is left out; a name that is not in the string area is read as "";
// a time later than now reads as 0 ns ago. Times go through the node's one
// NodeTimeMap, as the records' do, against `node_now_ns` (the node clock
// now, ClockSync's).
#ifndef MERIDIAN_AGENT_PROCESS_ACTIVITY_H_
#define MERIDIAN_AGENT_PROCESS_ACTIVITY_H_

#include <cstdint>

#include "abi/process_region.h"
#include "agent/node_time_map.h"
#include "meridian/v1/control.pb.h"

namespace meridian {

// What the sampler remembers of a ring slot between samples: the probe
// stores no time for a call's exit, so when a thread last left a call is
// when a sample first saw its `calls` at their value (idle_ns has the
// sampling period's resolution).
struct SlotSeen {
  int32_t tid = 0;
  uint64_t calls = 0;
  int64_t first_seen_ns = 0;  // node clock
};

// Appends the threads of the region at `memory` (its checked `layout`) to
// `out->threads`; the caller sets job, rank and pid. `seen` (kMaxRings
// entries, zeroed at first) is the process's, kept from sample to sample.
void SampleActivity(const void* memory, const ProcessRegionLayout& layout,
                    const NodeTimeMap& time, int64_t node_now_ns,
                    SlotSeen* seen, v1::ProcessActivity* out);

}  // namespace meridian

#endif  // MERIDIAN_AGENT_PROCESS_ACTIVITY_H_
