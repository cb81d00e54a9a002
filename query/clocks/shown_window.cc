#include "query/clocks/shown_window.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "common/saturating.h"

namespace meridian {

ShownWindow::ShownWindow(const v1::SpanFilter& filter,
                         const JobCatalog& catalog, const JobClocks& clocks)
    : catalog_(&catalog), clocks_(&clocks), origin_ns_(clocks.epoch_ns()) {
  if (filter.has_from_ns()) from_ns_ = filter.from_ns();
  if (filter.has_to_ns()) to_ns_ = filter.to_ns();
}

ScanRange ShownWindow::Widen(ScanRange range) const {
  range.from_ns.reset();
  range.to_ns.reset();
  if (!from_ns_ && !to_ns_) return range;
  const JobInfo& job = catalog_->job;
  // One track of each node: every track of a node is placed alike.
  absl::flat_hash_map<int64_t, std::string> node_of_process;
  for (const ProcessInfo& p : catalog_->processes) {
    node_of_process[p.id] = p.node;
  }
  std::map<std::string, int64_t> track_of_node;
  for (const TrackInfo& t : catalog_->tracks) {
    track_of_node.try_emplace(node_of_process[t.process_id], t.id);
  }
  if (track_of_node.empty()) return range;
  const int64_t shift = clocks_->max_end_shift_ns();
  // Every span is shown within [lowest, highest], so a window end beyond
  // them cuts the same spans as one at them; clamped there, the searches
  // stay within the job's times (no overflow for --to 1e9s).
  int64_t lowest = std::numeric_limits<int64_t>::max();
  int64_t highest = std::numeric_limits<int64_t>::min();
  for (const auto& [node, track] : track_of_node) {
    StoredSpan first, last;
    first.track_id = last.track_id = track;
    first.start_ns = job.min_start_ns;
    last.start_ns = job.max_end_ns;
    lowest = std::min(lowest, clocks_->Place(first).start_ns);
    highest = std::max(highest, clocks_->Place(last).start_ns);
  }
  lowest = SaturatingAdd(lowest, -SaturatingAdd(shift, 1));
  highest = SaturatingAdd(highest, SaturatingAdd(shift, 1));
  auto at = [&](int64_t offset) {
    return std::clamp(SaturatingAdd(origin_ns_, offset), lowest, highest);
  };
  int64_t raw_from = std::numeric_limits<int64_t>::max();
  int64_t raw_to = std::numeric_limits<int64_t>::min();
  for (const auto& [node, track] : track_of_node) {
    // A span shown ending at or after `from` ends, raw, no earlier than
    // where its node shows `from` less the largest end shift; one shown
    // starting before `to` starts, raw, before where its node shows `to`.
    if (from_ns_) {
      raw_from =
          std::min(raw_from, clocks_->FirstRawAtOrAfter(
                                 track, at(SaturatingAdd(*from_ns_, -shift))));
    }
    if (to_ns_) {
      raw_to = std::max(raw_to, clocks_->FirstRawAtOrAfter(track, at(*to_ns_)));
    }
  }
  // ScanRange times count from the job's first raw start.
  if (from_ns_) range.from_ns = raw_from - job.min_start_ns;
  if (to_ns_) range.to_ns = raw_to - job.min_start_ns;
  return range;
}

}  // namespace meridian
