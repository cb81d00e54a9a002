// InFlightCall: what one thread of a traced process is in right now, in the
// process's shared ProcessRegion (one per ring slot: the thread that owns
// ring i writes in_flight[i]), so that the node agent can say, while a job
// hangs, which call each rank is stuck in and since when (docs/health.md).
//
// The probe writes it at each traced call's entry (EnterCall: the
// operation, communicator, sequence number, bytes, root or peer, and when)
// and exit (LeaveCall: none, and when the thread left it), and at each user
// phase's begin and end (SetPhase: the innermost phase open). It is a
// sequence lock with one writer, the owning thread: `generation` is odd
// while a write is under way, and every write ends by making it even again.
// A write is a handful of stores into one cache line the thread alone
// writes: no system call, no lock, no atomic read-modify-write.
//
// The agent copies a slot with ReadInFlight, which retries while a write
// is under way or happened during the copy, and gives up (false) after a
// bounded number of tries: a process may rewrite its memory at will, so
// what comes back is checked like any other input (string ids through
// StringAt, times against the agent's own clock).
//
// Depends on nothing but the C++ standard library: it is compiled into
// libmeridian_probe.so.
#ifndef MERIDIAN_ABI_IN_FLIGHT_H_
#define MERIDIAN_ABI_IN_FLIGHT_H_

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace meridian {

// The fields, as the agent copies them out. Times are the probe's event
// clock: time-stamp-counter ticks when kTicks is set, else CLOCK_MONOTONIC
// ns (ProbeRecord's convention).
struct InFlightState {
  enum Flags : uint16_t {
    kHasPeer = 1 << 0,  // peer: the call's root or peer, a world rank
    kHasTag = 1 << 1,
    kHasSeq = 1 << 2,  // seq: the communicator's collective count
    kTicks = 1 << 3,
  };

  uint32_t name;     // string id of the call in progress; 0: none
  uint8_t category;  // v1::Category of the call
  uint8_t reserved0;
  uint16_t flags;
  int64_t since;  // when the call began
  uint64_t comm;  // the communicator's id (as in ProbeRecord)
  uint64_t seq;
  int64_t bytes;
  int32_t peer;
  int32_t tag;
  uint32_t comm_size;
  uint32_t phase;  // string id of the innermost user phase open; 0: none
  int64_t phase_since;
  int64_t last_exit;  // when the thread last left a traced call; 0: never
  uint64_t calls;     // traced calls the thread has left
};
static_assert(std::is_trivially_copyable_v<InFlightState>);

struct alignas(64) InFlightCall {
  std::atomic<uint32_t> generation;  // odd while the owner writes
  uint32_t reserved;
  InFlightState state;
};
static_assert(sizeof(InFlightCall) == 128, "the shared-memory layout is ABI");

// The owning thread's writes. Each leaves `generation` even.
inline InFlightState* BeginWrite(InFlightCall* slot) {
  const uint32_t g = slot->generation.load(std::memory_order_relaxed);
  slot->generation.store(g + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  return &slot->state;
}
inline void EndWrite(InFlightCall* slot) {
  const uint32_t g = slot->generation.load(std::memory_order_relaxed);
  slot->generation.store(g + 1, std::memory_order_release);
}

// A thread takes the slot (with its ring): nothing in progress, its times
// in ticks if `ticks`. Whatever the slot's previous thread left is gone.
inline void ClaimInFlight(InFlightCall* slot, bool ticks) {
  InFlightState* s = BeginWrite(slot);
  *s = InFlightState{};
  s->flags = ticks ? InFlightState::kTicks : 0;
  EndWrite(slot);
}

// A call begins: `call` holds its name, category, since and what of comm,
// seq, bytes, peer, tag and comm_size is known (flags: kHasPeer, kHasTag,
// kHasSeq); the phase, exit and clock fields are left as they are.
inline void EnterCall(InFlightCall* slot, const InFlightState& call) {
  InFlightState* s = BeginWrite(slot);
  s->name = call.name;
  s->category = call.category;
  s->flags = static_cast<uint16_t>((s->flags & InFlightState::kTicks) |
                                   (call.flags & ~InFlightState::kTicks));
  s->since = call.since;
  s->comm = call.comm;
  s->seq = call.seq;
  s->bytes = call.bytes;
  s->peer = call.peer;
  s->tag = call.tag;
  s->comm_size = call.comm_size;
  EndWrite(slot);
}

// The call entered last returned at `end`.
inline void LeaveCall(InFlightCall* slot, int64_t end) {
  InFlightState* s = BeginWrite(slot);
  s->name = 0;
  s->last_exit = end;
  ++s->calls;
  EndWrite(slot);
}

// The innermost open user phase is now `phase` (0: none), open since
// `since`.
inline void SetPhase(InFlightCall* slot, uint32_t phase, int64_t since) {
  InFlightState* s = BeginWrite(slot);
  s->phase = phase;
  s->phase_since = since;
  EndWrite(slot);
}

// Copies `slot` (in memory another process writes) into `*out`: true once
// a copy was made with no write under way or in between; false after
// `tries` attempts without one.
bool ReadInFlight(const InFlightCall* slot, InFlightState* out, int tries = 64);

}  // namespace meridian

#endif  // MERIDIAN_ABI_IN_FLIGHT_H_
