// InFlightCall: what one thread of a traced process is in right now, in the
// process's shared ProcessRegion (one per ring slot: the thread that owns
// ring i writes in_flight[i]), so that the node agent can say, while a job
// hangs, which call each rank is stuck in and since when (docs/health.md).
//
// The probe writes it at each traced call's entry (EnterCall: the
// operation, communicator, sequence number, bytes, root or peer, tag and
// start, from the call's ProbeRecord; for a completion call, MPI_Wait,
// those of the request it waits for and that request's operation) and exit
// (LeaveCall), and at each user phase's begin and end (SetPhase). One writer,
// the owning thread; what a call writes lies in one cache line that thread
// alone writes: entering is six plain stores and a release store of `head`
// (name and communicator size), leaving two (head 0, calls + 1); no system
// call, lock or atomic read-modify-write. The phase (rare) is written under a
// sequence number that is odd while it writes.
//
// The agent copies a slot with ReadInFlight: calls and head (acquire),
// the fields, then both again; the copy holds if neither changed (a call
// left and another entered in between would have moved calls). It retries
// a bounded number of times, then gives up (false): a process may rewrite
// its memory at will, so what comes back is checked like any other input
// (string ids through StringAt, times against the agent's clock). When a
// thread last left a call is the agent's to tell, from when it saw `calls`
// move (agent/process_activity.h): the probe stores no time for it.
//
// Depends on nothing but the C++ standard library: it is compiled into
// libmeridian_probe.so.
#ifndef MERIDIAN_ABI_IN_FLIGHT_H_
#define MERIDIAN_ABI_IN_FLIGHT_H_

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "abi/probe_record.h"

namespace meridian {

// The fields, as the agent copies them out. Times are time-stamp-counter
// ticks when their kTicks is set, else CLOCK_MONOTONIC ns (ProbeRecord's
// convention; the flags are ProbeRecord's bits). The call's and the
// phase's each say their own: a probe's phases are on its event clock, a
// capture library's operations (c10d's) on CLOCK_MONOTONIC.
struct InFlightState {
  static constexpr uint16_t kFlags = ProbeRecord::kHasPeer |
                                     ProbeRecord::kHasTag |
                                     ProbeRecord::kHasSeq | ProbeRecord::kTicks;
  uint32_t name = 0;  // string id of the call in progress; 0: none
  uint32_t comm_size = 0;
  uint16_t flags = 0;    // of kFlags
  uint8_t category = 0;  // v1::Category of the call
  int64_t since = 0;     // when the call began
  uint64_t comm = 0;     // the communicator's id (as in ProbeRecord)
  uint64_t seq = 0;
  int64_t bytes = 0;
  int32_t peer = -1;
  int32_t tag = -1;
  // The operation of the request a completion call waits for (string id of
  // e.g. MPI_Irecv, when MPI_Wait waits for one); 0: none.
  uint32_t waits_for = 0;
  uint64_t calls = 0;  // traced calls the thread has left
  uint32_t phase = 0;  // string id of the innermost user phase open; 0: none
  uint16_t phase_flags = 0;  // kTicks or 0
  int64_t phase_since = 0;
};

struct alignas(64) InFlightCall {
  // kWaitsFor in flags_category: waits_for holds the call's request's
  // operation (EnterCall's waits_for); else it is stale and not read.
  static constexpr uint32_t kWaitsFor = 1u << 31;
  // Line 1, written at every traced call: seven stores to enter (eight
  // with a waits_for), two to leave.
  std::atomic<uint64_t> head;  // name | comm_size << 32; 0: in no call
  int64_t since;
  uint64_t comm;
  uint64_t seq;
  int64_t bytes;
  uint64_t peer_tag;        // peer (low 32 bits) | tag << 32
  uint32_t flags_category;  // flags | category << 16 | kWaitsFor
  uint32_t waits_for;       // a string id, where kWaitsFor says so
  std::atomic<uint64_t> calls;
  // Line 2, written at phase begins and ends.
  alignas(64) std::atomic<uint32_t> phase_generation;  // odd while written
  uint32_t phase;
  int64_t phase_since;
  uint16_t phase_flags;  // ProbeRecord::kTicks or 0
};
static_assert(sizeof(InFlightCall) == 128, "the shared-memory layout is ABI");
static_assert(std::atomic<uint64_t>::is_always_lock_free);

// A thread takes the slot (with its ring): nothing in progress, no phase,
// no calls. Whatever the slot's previous thread left is gone.
inline void ClaimInFlight(InFlightCall* slot) {
  slot->head.store(0, std::memory_order_release);
  slot->calls.store(0, std::memory_order_release);
  slot->flags_category = 0;
  const uint32_t g = slot->phase_generation.load(std::memory_order_relaxed);
  slot->phase_generation.store(g + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  slot->phase = 0;
  slot->phase_since = 0;
  slot->phase_flags = 0;
  slot->phase_generation.store(g + 2, std::memory_order_release);
}

// The call `record` describes begins (its name, category, flags, start,
// comm, seq, bytes, peer, tag and comm size; a name of 0 is no call).
// `waits_for`: 0, or for a completion call (MPI_Wait, `record` then holding
// the comm, seq, bytes, peer, tag and comm size of the request it waits
// for) the string id of that request's operation, stored and marked.
inline void EnterCall(InFlightCall* slot, const ProbeRecord& record,
                      uint32_t waits_for = 0) {
  // The last LeaveCall's stores before these (free on x86): a reader that
  // sees a field of this call sees `calls` moved.
  std::atomic_thread_fence(std::memory_order_release);
  if (waits_for != 0) slot->waits_for = waits_for;
  slot->since = record.start_ns;
  slot->comm = record.comm;
  slot->seq = record.seq;
  slot->bytes = record.bytes;
  slot->peer_tag = static_cast<uint32_t>(record.peer) |
                   static_cast<uint64_t>(static_cast<uint32_t>(record.tag))
                       << 32;
  slot->flags_category = (record.flags & InFlightState::kFlags) |
                         static_cast<uint32_t>(record.category) << 16 |
                         (waits_for != 0 ? InFlightCall::kWaitsFor : 0);
  slot->head.store(record.name | static_cast<uint64_t>(record.comm_size) << 32,
                   std::memory_order_release);
}

// The call entered last has returned.
inline void LeaveCall(InFlightCall* slot) {
  slot->head.store(0, std::memory_order_release);
  slot->calls.store(slot->calls.load(std::memory_order_relaxed) + 1,
                    std::memory_order_release);
}

// The innermost open user phase is now `phase` (0: none), open since
// `since` (in ticks if `ticks`).
inline void SetPhase(InFlightCall* slot, uint32_t phase, int64_t since,
                     bool ticks) {
  const uint32_t g = slot->phase_generation.load(std::memory_order_relaxed);
  slot->phase_generation.store(g + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  slot->phase = phase;
  slot->phase_since = since;
  slot->phase_flags = ticks ? ProbeRecord::kTicks : 0;
  slot->phase_generation.store(g + 2, std::memory_order_release);
}

// Copies `slot` (in memory another process writes) into `*out`: true once
// a consistent copy was made; false after `tries` attempts without one.
bool ReadInFlight(const InFlightCall* slot, InFlightState* out, int tries = 64);

}  // namespace meridian

#endif  // MERIDIAN_ABI_IN_FLIGHT_H_
