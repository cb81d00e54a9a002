// The capture ABI of capture_sink.h, over the probe runtime: what
// libmeridian_probe.so offers Meridian's GPU capture libraries.
#include "capture/probe/capture_sink.h"
#include "capture/probe/probe_runtime.h"

namespace probe = meridian::probe;

extern "C" {

__attribute__((visibility("default"))) int meridian_capture_recording(void) {
  return probe::Recording() ? 1 : 0;
}

__attribute__((visibility("default"))) uint32_t meridian_capture_name(
    const char* name) {
  return probe::Intern(name);
}

__attribute__((visibility("default"))) void meridian_capture_emit(
    const meridian::ProbeRecord* record, int stamp_step) {
  if (!probe::g_event.enabled || record == nullptr) return;
  if (stamp_step == 0) {
    probe::Emit(*record);
    return;
  }
  meridian::ProbeRecord stamped = *record;
  probe::StampStep(&stamped);
  probe::Emit(stamped);
}

__attribute__((visibility("default"))) int meridian_capture_await_room(
    uint32_t records, int timeout_ms) {
  if (!probe::g_event.enabled || timeout_ms < 0) return 0;
  const int64_t deadline =
      probe::NowNs() + static_cast<int64_t>(timeout_ms) * 1000000;
  return probe::AwaitRoom(records, deadline) ? 1 : 0;
}

__attribute__((visibility("default"))) int64_t meridian_capture_now_ns(void) {
  return probe::NowNs();
}

__attribute__((visibility("default"))) int meridian_capture_step(
    int64_t* step) {
  if (!probe::InStep() || step == nullptr) return 0;
  *step = probe::CurrentStep();
  return 1;
}

__attribute__((visibility("default"))) void meridian_capture_enter_call(
    const meridian::ProbeRecord* record) {
  if (!probe::g_event.enabled || record == nullptr) return;
  probe::EnterCall(*record);
}

__attribute__((visibility("default"))) void meridian_capture_leave_call(void) {
  probe::LeaveCall();
}

}  // extern "C"
