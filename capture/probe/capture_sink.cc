#include "capture/probe/capture_sink.h"

// Weak: resolved to libmeridian_probe.so's definitions when it is loaded
// (preloaded, so in the global scope even for libraries dlopened with
// RTLD_LOCAL), null otherwise.
extern "C" {
__attribute__((weak)) int meridian_capture_recording(void);
__attribute__((weak)) uint32_t meridian_capture_name(const char* name);
__attribute__((weak)) void meridian_capture_emit(
    const meridian::ProbeRecord* record, int stamp_step);
__attribute__((weak)) int meridian_capture_await_room(uint32_t records,
                                                      int timeout_ms);
__attribute__((weak)) int64_t meridian_capture_now_ns(void);
__attribute__((weak)) int meridian_capture_step(int64_t* step);
__attribute__((weak)) void meridian_capture_enter_call(
    const meridian::ProbeRecord* record);
__attribute__((weak)) void meridian_capture_leave_call(void);
}

namespace meridian {
namespace {

class ProbeSink final : public CaptureSink {
 public:
  bool Recording() override { return meridian_capture_recording() != 0; }
  uint32_t Name(const char* name) override {
    return meridian_capture_name(name);
  }
  void Emit(const ProbeRecord& record, bool stamp_step) override {
    meridian_capture_emit(&record, stamp_step ? 1 : 0);
  }
  bool AwaitRoom(uint32_t records, int timeout_ms) override {
    // A probe older than this library has no such call: never wait.
    return meridian_capture_await_room == nullptr ||
           meridian_capture_await_room(records, timeout_ms) != 0;
  }
  // A probe older than this library publishes nothing in flight.
  void EnterCall(const ProbeRecord& record) override {
    if (meridian_capture_enter_call != nullptr) {
      meridian_capture_enter_call(&record);
    }
  }
  void LeaveCall() override {
    if (meridian_capture_leave_call != nullptr) meridian_capture_leave_call();
  }
  int64_t NowNs() override { return meridian_capture_now_ns(); }
  bool Step(int64_t* step) override { return meridian_capture_step(step) != 0; }
};

}  // namespace

CaptureSink* ProbeCaptureSink() {
  if (meridian_capture_recording == nullptr ||
      meridian_capture_name == nullptr || meridian_capture_emit == nullptr ||
      meridian_capture_now_ns == nullptr || meridian_capture_step == nullptr) {
    return nullptr;
  }
  // Never destroyed: capture callbacks may run during exit.
  static ProbeSink* sink = new ProbeSink();
  return sink;
}

}  // namespace meridian
