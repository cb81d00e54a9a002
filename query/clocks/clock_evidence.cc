#include "query/clocks/clock_evidence.h"

#include <algorithm>

namespace meridian {

void ClockEvidence::SawStart(int64_t track_id, int64_t start_ns) {
  auto [it, added] = first_start.try_emplace(track_id, start_ns);
  if (!added) it->second = std::min(it->second, start_ns);
}

}  // namespace meridian
