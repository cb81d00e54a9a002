#include "abi/in_flight.h"

#include <cstring>

namespace meridian {

bool ReadInFlight(const InFlightCall* slot, InFlightState* out, int tries) {
  for (int i = 0; i < tries; ++i) {
    const uint32_t before = slot->generation.load(std::memory_order_acquire);
    if (before & 1) continue;  // a write is under way
    // Byte by byte through volatile: the other process may be writing.
    const volatile unsigned char* from =
        reinterpret_cast<const volatile unsigned char*>(&slot->state);
    unsigned char copy[sizeof(InFlightState)];
    for (size_t b = 0; b < sizeof(copy); ++b) copy[b] = from[b];
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot->generation.load(std::memory_order_relaxed) == before) {
      std::memcpy(out, copy, sizeof(copy));
      return true;
    }
  }
  return false;
}

}  // namespace meridian
