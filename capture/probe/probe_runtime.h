// The probe's process-wide state inside a traced program: the shared
// ProcessRegion, each thread's ring, the names table, the registration with
// the node agent, the current training step and the tracing window.
//
// Recording an event (Emit) is a thread-local load, a few stores into this
// thread's ring and one release store: no system call, lock or allocation.
// Only the first event of a thread (it claims a ring) and the first use of a
// name (it is interned) take a lock.
//
// The probe is enabled when MERIDIAN_AGENT_SOCKET is set as the program
// starts (`meridian run` sets it); otherwise every entry point returns at
// once. The region and the agent connection are made at the first event, so
// processes that record nothing (mpirun itself, shells) never register.
// A background thread watches the agent connection and, if the agent goes
// away, reconnects and hands the same region to the next agent: records
// wait in the rings meanwhile (a full ring counts drops, never blocks).
//
// Tracing window: MERIDIAN_START_STEP / MERIDIAN_END_STEP (inclusive)
// record only those steps; MERIDIAN_TRACE=on-demand records nothing until
// `meridian trace` asks for steps or seconds. Without either, everything is
// recorded.
#ifndef MERIDIAN_CAPTURE_PROBE_PROBE_RUNTIME_H_
#define MERIDIAN_CAPTURE_PROBE_PROBE_RUNTIME_H_

#include <time.h>

#include <atomic>
#include <cstdint>

#include "abi/in_flight.h"
#include "abi/probe_record.h"
#include "abi/span_ring.h"

// MERIDIAN_PROBE_SHARED: exported by libmeridian_probe.so for the MPI
// family libraries (mpi_family_abi.h), which record through this runtime
// rather than a copy of it. An internal ABI between libraries of one build
// (probe.lds exports meridian::probe::*; only what is marked is visible),
// not an API: nothing else may link against it.
#define MERIDIAN_PROBE_SHARED __attribute__((visibility("default")))

namespace meridian {
namespace probe {

// What every recorded event reads, on one cache line: in a loop of short MPI
// calls on a busy node, each line the probe touches may have been evicted
// since the previous call and costs a miss (docs/PERFORMANCE.md).
struct alignas(64) EventState {
  // Set once, before main, from the environment.
  bool enabled = false;
  // Set once, before main: events are timed with the invariant time-stamp
  // counter (about 10 ns a read instead of clock_gettime's 23 on our
  // machines); MERIDIAN_CLOCK=monotonic turns it off.
  bool ticks = false;
  // True when no window limits recording: Recording() is then one load.
  // Cleared while MPI_Pcontrol(0) pauses recording (SetPcontrol).
  std::atomic<bool> record_always{true};
  // The current training step (-1 before any), and whether one is open.
  std::atomic<bool> in_step{false};
  std::atomic<int64_t> step{-1};
  // Set once, before main: MERIDIAN_CALLSITES=1 records each MPI call's
  // call site (callsite.h).
  bool callsites = false;
};
extern MERIDIAN_PROBE_SHARED EventState g_event;

// This thread's ring (the library is built with initial-exec TLS: see
// BUILD.bazel). Initial-exec for the family libraries too, which reach it
// in libmeridian_probe.so's TLS block.
extern MERIDIAN_PROBE_SHARED __thread SpanRingWriter* tls_writer
    __attribute__((tls_model("initial-exec")));

// This thread's in-flight slot in the region (in_flight.h), set with its
// ring.
extern MERIDIAN_PROBE_SHARED __thread InFlightCall* tls_in_flight
    __attribute__((tls_model("initial-exec")));

inline int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// An event's time: ticks if g_event.ticks, else CLOCK_MONOTONIC ns. Records
// holding it carry TimeFlags().
inline int64_t Now() {
#if defined(__x86_64__)
  if (__builtin_expect(g_event.ticks, 1)) {
    return static_cast<int64_t>(__builtin_ia32_rdtsc());
  }
#endif
  return NowNs();
}
inline uint16_t TimeFlags() { return g_event.ticks ? ProbeRecord::kTicks : 0; }

MERIDIAN_PROBE_SHARED bool RecordingInWindow();
// Whether an event happening now is recorded.
inline bool Recording() {
  return g_event.enabled &&
         (__builtin_expect(
              g_event.record_always.load(std::memory_order_relaxed), 1) ||
          RecordingInWindow());
}

// MPI_Pcontrol(level), as the MPI standard asks of profilers: level 0 stops
// recording, any other level starts it again. Recording is on from the
// start (the standard's default) unless MERIDIAN_PCONTROL=windows, which
// records only between MPI_Pcontrol(1) and MPI_Pcontrol(0). The step and
// on-demand windows still apply inside.
MERIDIAN_PROBE_SHARED void SetPcontrol(int level);

// Records this process's resource use so far (getrusage(RUSAGE_SELF)) as
// four counters of category MPI on this thread's track, whatever the
// tracing window: "rusage.user_ns", "rusage.system_ns",
// "rusage.max_rss_bytes", "rusage.context_switches" (voluntary and
// involuntary). MPI_Finalize calls it, and the probe at exit.
MERIDIAN_PROBE_SHARED void EmitResourceUse();

// This thread's writer, claiming a ring (and creating the region) first if
// needed; nullptr if none is left or the region could not be made.
MERIDIAN_PROBE_SHARED SpanRingWriter* ClaimRing();

// Tells the agent that a ring is half full (AgentMessage::kDrainSoon), if
// the registration lock is free and the socket would not block; rare: at
// most once per half lap of a ring.
MERIDIAN_PROBE_SHARED void WakeAgent();

// Pushes `record` into this thread's ring, waking the agent when the ring
// reaches half full, and at the first of its drops and every 4096th after
// (a wake may be lost: sent before the process registered, say).
inline void Emit(const ProbeRecord& record) {
  SpanRingWriter* writer = tls_writer;
  if (__builtin_expect(writer == nullptr, 0)) {
    writer = ClaimRing();
    if (writer == nullptr) return;
  }
  if (__builtin_expect(writer->Push(record), 1)) {
    if (__builtin_expect(writer->ReachedHalf(), 0)) WakeAgent();
  } else if ((writer->drops() & 4095) == 1) {
    WakeAgent();
  }
}

// The calling thread enters the traced call `record` describes (its name,
// category, start, comm, seq, bytes, peer, tag, comm size), and leaves it:
// published in the thread's in-flight slot for the agent, which
// reports calls that do not return (docs/health.md). A few stores into one
// cache line of this thread's; the first call of a thread claims its ring.
inline InFlightCall* InFlightSlot() {
  InFlightCall* slot = tls_in_flight;
  if (__builtin_expect(slot == nullptr, 0)) {
    if (ClaimRing() == nullptr) return nullptr;
    slot = tls_in_flight;
  }
  return slot;
}
inline void EnterCall(const ProbeRecord& record) {
  if (InFlightCall* slot = InFlightSlot()) meridian::EnterCall(slot, record);
}
// A completion call (MPI_Wait): `record` with the request's comm, seq,
// bytes, peer, tag and comm size, `waits_for` its operation (abi/in_flight.h).
// Apart from EnterCall so that every other call's entry stays as it was.
inline void EnterWait(const ProbeRecord& record, uint32_t waits_for) {
  if (InFlightCall* slot = InFlightSlot()) {
    meridian::EnterCall(slot, record, waits_for);
  }
}
// A call known by its name alone (MPI_Wait's family).
inline void EnterCall(uint32_t name, uint8_t category, int64_t start) {
  ProbeRecord record{};
  record.name = name;
  record.category = category;
  record.flags = TimeFlags();
  record.start_ns = start;
  EnterCall(record);
}
inline void LeaveCall() {
  if (InFlightCall* slot = tls_in_flight) meridian::LeaveCall(slot);
}
// The thread's innermost open user phase is now `name` (0: none), open
// since `since` (a Now() time).
inline void SetPhase(uint32_t name, int64_t since) {
  InFlightCall* slot = tls_in_flight;
  if (slot == nullptr && (name == 0 || ClaimRing() == nullptr)) return;
  meridian::SetPhase(tls_in_flight, name, since, g_event.ticks);
}

// Waits, sleeping 1 ms at a time, until this thread's ring has room for
// `records` more (at most its capacity) or CLOCK_MONOTONIC reaches
// `deadline_ns`, waking the agent every 50 ms meanwhile. For threads that are
// not the application's (CUPTI's buffer completion), which may wait for the
// agent rather than drop. False on timeout, or if this thread has no ring.
bool AwaitRoom(uint64_t records, int64_t deadline_ns);

// The id of `name` in this process's string area (0 if it is full or the
// region could not be made). Takes a lock only the first time a name is
// seen.
MERIDIAN_PROBE_SHARED uint32_t Intern(const char* name);

// Interned ids of fixed names (MPI functions), cached in `slot`
// (0 <= slot < kNameSlots): after the first call, one load.
constexpr int kNameSlots = 256;
extern MERIDIAN_PROBE_SHARED uint32_t g_name_cache[kNameSlots];
MERIDIAN_PROBE_SHARED uint32_t InternSlow(int slot, const char* name);
inline uint32_t CachedName(int slot, const char* name) {
  uint32_t id = __atomic_load_n(&g_name_cache[slot], __ATOMIC_RELAXED);
  return id != 0 ? id : InternSlow(slot, name);
}

// The current training step: set by meridian_step_begin, -1 before any.
// InStep() is false between step_end and the next step_begin.
inline int64_t CurrentStep() {
  return g_event.step.load(std::memory_order_relaxed);
}
inline bool InStep() { return g_event.in_step.load(std::memory_order_relaxed); }
// Fills step/kHasStep of `record` if a step is current.
inline void StampStep(ProbeRecord* record) {
  if (InStep()) {
    record->step = CurrentStep();
    record->flags |= ProbeRecord::kHasStep;
  }
}

// MPI_Init learned this process's world rank and MPI_COMM_WORLD's size:
// each is used where the launcher's environment did not say
// (launch_env.h).
MERIDIAN_PROBE_SHARED void SetWorldRank(int rank, int world_size = 0);

// Step API (meridian_step_begin/end); see include/meridian/probe.h.
// StepEnd sends the step's "step" span only for a step recorded from its
// beginning to its end: one a recording window opened or closed in is
// partial (its other spans are sent, tagged with it), and has no marker.
void StepBegin(int64_t step);
void StepEnd();

}  // namespace probe
}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_PROBE_PROBE_RUNTIME_H_
