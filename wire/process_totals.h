// ProcessTotals: what another tool measured of one process as a whole (its
// time in communication and elapsed, and its resource use where the tool
// gave it), as an import sends it (v1::ImportedProcessTotals) and the store
// keeps it. The importer's and the store's records add whose it is.
#ifndef MERIDIAN_WIRE_PROCESS_TOTALS_H_
#define MERIDIAN_WIRE_PROCESS_TOTALS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "meridian/v1/span.pb.h"

namespace meridian {

struct ProcessTotals {
  int64_t comm_ns = 0;
  int64_t elapsed_ns = 0;
  std::string source;  // the tool, e.g. "mpitrace"
  // Resource use, where the tool gave it.
  std::optional<int64_t> user_ns;
  std::optional<int64_t> system_ns;
  std::optional<int64_t> max_rss_bytes;
  std::optional<int64_t> context_switches;
};

// Sets `out`'s times and resource use from `t` (the optional fields where
// given; `source` is the caller's, as BatchBuilder::AddProcessTotals takes
// it).
inline void CopyProcessTotals(const ProcessTotals& t,
                              v1::ImportedProcessTotals* out) {
  out->set_comm_ns(t.comm_ns);
  out->set_elapsed_ns(t.elapsed_ns);
  if (t.user_ns) out->set_user_ns(*t.user_ns);
  if (t.system_ns) out->set_system_ns(*t.system_ns);
  if (t.max_rss_bytes) out->set_max_rss_bytes(*t.max_rss_bytes);
  if (t.context_switches) out->set_context_switches(*t.context_switches);
}

}  // namespace meridian

#endif  // MERIDIAN_WIRE_PROCESS_TOTALS_H_
