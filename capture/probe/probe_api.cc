// The C API of include/meridian/probe.h over the probe runtime.
#include <cstring>

#include "capture/probe/probe_runtime.h"
#include "meridian/probe.h"

namespace {

using meridian::ProbeRecord;
namespace probe = meridian::probe;

constexpr uint8_t kCategoryUser = 9;  // v1::CATEGORY_USER
constexpr uint8_t kKindInstant = 1;   // v1::SPAN_KIND_INSTANT
constexpr uint8_t kKindCounter = 2;   // v1::SPAN_KIND_COUNTER
constexpr int kMaxDepth = 32;

struct OpenPhase {
  int64_t start_ns;
  uint32_t name;
};
thread_local OpenPhase tls_phases[kMaxDepth];
thread_local int tls_depth = 0;

// `start` and `dur` in probe::Now() units, or in ns if `in_ns`.
ProbeRecord UserRecord(uint32_t name, int64_t start, int64_t dur,
                       bool in_ns = false) {
  ProbeRecord record{};
  record.start_ns = start;
  record.dur_ns = dur;
  record.name = name;
  record.category = kCategoryUser;
  record.flags = in_ns ? 0 : probe::TimeFlags();
  probe::StampStep(&record);
  return record;
}

}  // namespace

extern "C" {

int meridian_enabled(void) { return probe::g_event.enabled ? 1 : 0; }

uint64_t meridian_now_ns(void) { return static_cast<uint64_t>(probe::NowNs()); }

void meridian_step_begin(int64_t step) { probe::StepBegin(step); }

void meridian_step_end(void) { probe::StepEnd(); }

void meridian_phase_begin(const char* name) {
  if (!probe::g_event.enabled) return;
  // Beyond kMaxDepth the begin is counted so that its end pairs up, but
  // not recorded.
  if (tls_depth < kMaxDepth) {
    tls_phases[tls_depth] = {probe::Now(), probe::Intern(name)};
    probe::SetPhase(tls_phases[tls_depth].name, tls_phases[tls_depth].start_ns);
  }
  ++tls_depth;
}

void meridian_phase_end(void) {
  if (!probe::g_event.enabled || tls_depth == 0) return;
  --tls_depth;
  if (tls_depth >= kMaxDepth) return;
  // The thread is in the enclosing phase again (or in none).
  if (tls_depth == 0) {
    probe::SetPhase(0, 0);
  } else {
    probe::SetPhase(tls_phases[tls_depth - 1].name,
                    tls_phases[tls_depth - 1].start_ns);
  }
  if (!probe::Recording()) return;
  const OpenPhase& phase = tls_phases[tls_depth];
  probe::Emit(
      UserRecord(phase.name, phase.start_ns, probe::Now() - phase.start_ns));
}

void meridian_queue_phase(const char* queue, const char* phase,
                          uint64_t start_ns, uint64_t end_ns, int64_t bytes,
                          int32_t partition) {
  if (!probe::Recording() || end_ns < start_ns) return;
  ProbeRecord record =
      UserRecord(probe::Intern(phase), static_cast<int64_t>(start_ns),
                 static_cast<int64_t>(end_ns - start_ns), /*in_ns=*/true);
  record.queue = queue == nullptr ? 0 : probe::Intern(queue);
  record.bytes = bytes;
  if (partition >= 0) {
    record.partition = partition;
    record.flags |= ProbeRecord::kHasPartition;
  }
  probe::Emit(record);
}

void meridian_instant(const char* name) {
  if (!probe::Recording()) return;
  ProbeRecord record = UserRecord(probe::Intern(name), probe::Now(), 0);
  record.kind = kKindInstant;
  probe::Emit(record);
}

void meridian_counter(const char* name, double value) {
  if (!probe::Recording()) return;
  ProbeRecord record = UserRecord(probe::Intern(name), probe::Now(), 0);
  record.kind = kKindCounter;
  static_assert(sizeof(value) == sizeof(record.bytes));
  std::memcpy(&record.bytes, &value, sizeof(value));
  probe::Emit(record);
}

}  // extern "C"
