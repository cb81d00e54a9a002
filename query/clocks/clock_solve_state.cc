#include "query/clocks/clock_solve_state.h"

namespace meridian {

void ClockSolveState::Clear() {
  job_id = -1;
  nodes.clear();
  models.clear();
  horizon.clear();
  latest_start.clear();
  channels.clear();
  settled = SettledGroups();
  settled_spans = 0;
  open.clear();
  open.shrink_to_fit();
  first_start.clear();
  mark = 0;
  chunks = 0;
  solution.reset();
}

int64_t ClockSolveState::MemoryBytes() const {
  int64_t bytes = settled.MemoryBytes();
  bytes += static_cast<int64_t>(open.capacity() * sizeof(EvidenceSpan));
  for (const EvidenceSpan& span : open) {
    bytes += static_cast<int64_t>(span.sources.capacity() * sizeof(int32_t));
  }
  for (const auto& m : models) {
    bytes += static_cast<int64_t>(m.capacity() * sizeof(NodeClockModel));
  }
  bytes += static_cast<int64_t>(
      (first_start.capacity() + horizon.capacity() + latest_start.capacity()) *
      17);
  bytes += static_cast<int64_t>(channels.capacity() * 41);
  if (solution) bytes += static_cast<int64_t>(solution->data.size());
  return bytes;
}

}  // namespace meridian
