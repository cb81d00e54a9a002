// libFuzzer entry point: any bytes, taken as a traced process's shared
// region, must be refused or read within bounds: its layout, every string
// id a record could name, every thread's call in flight, and every ring's
// records. (The agent's other
// defences, the sealed memfd and the copied layout, are tested in
// agent/probe_session_test.)
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "abi/in_flight.h"
#include "abi/process_region.h"
#include "abi/span_ring.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint64_t> aligned((size + 7) / 8 + 1);
  memcpy(aligned.data(), data, size);
  void* memory = aligned.data();
  meridian::ProcessRegionLayout layout;
  if (!meridian::ReadProcessRegionLayout(memory, size, &layout)) return 0;
  const char* text;
  uint32_t length;
  volatile uint32_t sum = 0;
  for (uint32_t id = 0; id < 4096; id += (id < 64 ? 1 : 61)) {
    if (meridian::StringAt(memory, layout, id, &text, &length)) {
      for (uint32_t i = 0; i < length; ++i) sum += text[i];
    }
  }
  const auto* header =
      static_cast<const meridian::ProcessRegionHeader*>(memory);
  for (const meridian::InFlightCall& slot : header->in_flight) {
    meridian::InFlightState state;
    if (meridian::ReadInFlight(&slot, &state, 4)) sum += state.name;
  }
  for (uint32_t ring = 0; ring < meridian::ProcessRegionHeader::kMaxRings;
       ++ring) {
    meridian::SpanRingReader reader(
        meridian::RingMemory(memory, layout, ring),
        meridian::SpanRingBytes(layout.ring_capacity));
    if (!reader.valid()) continue;
    meridian::ProbeRecord records[16];
    reader.Read(records, 16);
  }
  return 0;
}
