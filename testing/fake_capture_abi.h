// A stand-in for libmeridian_probe.so's capture ABI (capture_sink.h), for
// tests of the capture libraries as their loaders load them (NCCL's
// dlopen, NVTX's injection loader): a test program linking this (with
// -rdynamic) defines meridian_capture_*, which the dlopened library finds
// in the process as it would find the preloaded probe. Records and names
// are kept in memory; the clock advances by a set tick on every read.
#ifndef MERIDIAN_AGENT_PROBE_FAKE_CAPTURE_ABI_H_
#define MERIDIAN_AGENT_PROBE_FAKE_CAPTURE_ABI_H_

#include <cstdint>
#include <string>
#include <vector>

#include "abi/probe_record.h"

namespace meridian {
namespace fake_capture {

// What was emitted since the last Clear(), in order.
std::vector<ProbeRecord> Records();
void Clear();
// The string of id `id` ("" for 0 or an unknown id).
std::string NameOf(uint32_t id);
// The next clock read returns `now_ns` + `tick_ns`, the one after that
// `now_ns` + 2 `tick_ns`, ...
void SetClock(int64_t now_ns, int64_t tick_ns = 0);

}  // namespace fake_capture
}  // namespace meridian

#endif  // MERIDIAN_AGENT_PROBE_FAKE_CAPTURE_ABI_H_
