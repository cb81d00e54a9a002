// CaptureSink: where Meridian's GPU capture libraries (CUPTI, NVTX, NCCL
// profiler plugin: capture/cupti, capture/nvtx, capture/nccl) put what they
// see.
//
// In a traced process the sink is the probe (ProbeCaptureSink): records go
// into the calling thread's shared-memory ring of libmeridian_probe.so,
// which `meridian run` preloads, through the small C ABI below. The capture
// libraries do not link the probe: they find it in the process (weak
// symbols), so a library loaded without it (say, NCCL_PROFILER_PLUGIN set
// by hand) records nothing and harms nothing. Tests use a sink of their own.
//
// Contract for implementations: Emit and Name may be called from any
// thread, concurrently; neither allocates nor locks per event (Name locks
// only the first time a string is seen).
#ifndef MERIDIAN_CAPTURE_PROBE_CAPTURE_SINK_H_
#define MERIDIAN_CAPTURE_PROBE_CAPTURE_SINK_H_

#include <cstdint>

#include "abi/probe_record.h"

extern "C" {
// Exported by libmeridian_probe.so for Meridian's own capture libraries;
// not a public API. 1 if an event happening now is recorded.
int meridian_capture_recording(void);
// The process's string id of `name` (0 if none could be made).
uint32_t meridian_capture_name(const char* name);
// Pushes `record` into the calling thread's ring; if `stamp_step`, sets its
// step to the current training step (when one is current).
void meridian_capture_emit(const meridian::ProbeRecord* record, int stamp_step);
// 1 once the calling thread's ring has room for `records` more (at most
// its capacity), 0 after `timeout_ms` without (or with no ring).
int meridian_capture_await_room(uint32_t records, int timeout_ms);
// CLOCK_MONOTONIC in ns: the clock records without kTicks are in.
int64_t meridian_capture_now_ns(void);
// 1 and the current training step in `*step` if one is current, else 0.
int meridian_capture_step(int64_t* step);
// The calling thread is now in the blocking operation `record` describes
// (its name, category, start, comm, seq, bytes, peer, tag, comm size), and
// has left it: published in its in-flight slot for the agent
// (abi/in_flight.h, docs/health.md).
void meridian_capture_enter_call(const meridian::ProbeRecord* record);
void meridian_capture_leave_call(void);
}

namespace meridian {

class CaptureSink {
 public:
  virtual ~CaptureSink() = default;
  // Whether an event happening now is recorded (tracing on, in the window).
  virtual bool Recording() = 0;
  // The string id of `name` for ProbeRecord::name, queue and args.
  virtual uint32_t Name(const char* name) = 0;
  // Records `record`; `stamp_step` as in meridian_capture_emit. Records
  // of work done on the CPU thread calling are stamped; GPU activity, which
  // is delivered later, is not.
  virtual void Emit(const ProbeRecord& record, bool stamp_step) = 0;
  // For capture threads that are not the application's (CUPTI's buffer
  // completion): waits up to `timeout_ms` for room for `records` more in
  // the calling thread's ring, so that a burst waits for the agent rather
  // than being dropped. True if there is room. The application's own
  // threads never wait: their events are dropped and counted instead.
  virtual bool AwaitRoom(uint32_t records, int timeout_ms) {
    (void)records;
    (void)timeout_ms;
    return true;
  }
  // The calling thread is in the blocking operation `record` describes, and
  // has left it (meridian_capture_enter_call). Default: not published.
  virtual void EnterCall(const ProbeRecord& record) { (void)record; }
  virtual void LeaveCall() {}
  // The probe's clock (CLOCK_MONOTONIC ns).
  virtual int64_t NowNs() = 0;
  // The current training step, if one is current (for GPU work delivered
  // later: capture it when the work is launched).
  virtual bool Step(int64_t* step) = 0;
};

// The probe of this process, or nullptr when libmeridian_probe.so is not
// loaded.
CaptureSink* ProbeCaptureSink();

}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_PROBE_CAPTURE_SINK_H_
