#include "abi/in_flight.h"

namespace meridian {

bool ReadInFlight(const InFlightCall* slot, InFlightState* out, int tries) {
  // Through volatile: another process writes these at any moment.
  const volatile InFlightCall* v = slot;
  for (int i = 0; i < tries; ++i) {
    InFlightState s;
    s.calls = slot->calls.load(std::memory_order_acquire);
    const uint64_t head = slot->head.load(std::memory_order_acquire);
    const uint32_t g = slot->phase_generation.load(std::memory_order_acquire);
    if (g & 1) continue;  // a phase being written
    s.name = static_cast<uint32_t>(head);
    s.comm_size = static_cast<uint32_t>(head >> 32);
    s.since = v->since;
    s.comm = v->comm;
    s.seq = v->seq;
    s.bytes = v->bytes;
    const uint64_t peer_tag = v->peer_tag;
    s.peer = static_cast<int32_t>(static_cast<uint32_t>(peer_tag));
    s.tag = static_cast<int32_t>(static_cast<uint32_t>(peer_tag >> 32));
    const uint32_t flags_category = v->flags_category;
    s.flags = static_cast<uint16_t>(flags_category & InFlightState::kFlags);
    s.category = static_cast<uint8_t>(flags_category >> 16);
    if (flags_category & InFlightCall::kWaitsFor) s.waits_for = v->waits_for;
    s.phase = v->phase;
    s.phase_since = v->phase_since;
    s.phase_flags = v->phase_flags & ProbeRecord::kTicks;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot->head.load(std::memory_order_relaxed) != head ||
        slot->calls.load(std::memory_order_relaxed) != s.calls ||
        slot->phase_generation.load(std::memory_order_relaxed) != g) {
      continue;  // it left (and maybe entered another), or a phase moved
    }
    *out = s;
    return true;
  }
  return false;
}

}  // namespace meridian
