// ShownWindow: a time window (--from/--to) on the timeline a trace shows,
// and how a scan of the store's raw times reads it.
//
// The window's times are offsets from the trace's origin, JobClocks::
// epoch_ns() (the earliest corrected start: the Chrome trace's
// otherData.epoch_ns, time 0 of every export), on the collector's clock
// (JobClocks::Place). A span is in the window if its shown interval meets
// it as a raw window's spans meet theirs (Store::Scan): it ends at or after
// `from` and starts before `to`,
//   shown_end - origin >= from  and  shown_start - origin < to,
// so a span ending exactly at `from` is in, one starting exactly at `to` is
// out, and a window with neither end is the whole job.
//
// The store reads raw node times, and every node's clock maps them
// differently, so the scan reads a raw range that holds the window on
// every node (Widen) and each span it returns is tested on its shown times
// (Contains).
//
// Example: node-1's clock reads 3 ms ahead, and its model says so. A span
// of node-1 shown at [12.5, 13) ms is stored at raw [15.5, 16) ms; the
// window [12, 14) ms reads raw [12, 17) ms (node-0 needs [12, 14), node-1
// [15, 17)) and keeps the span, which a raw cut at [12, 14) would miss.
#ifndef MERIDIAN_QUERY_CLOCKS_SHOWN_WINDOW_H_
#define MERIDIAN_QUERY_CLOCKS_SHOWN_WINDOW_H_

#include <cstdint>
#include <optional>

#include "meridian/v1/query.pb.h"
#include "query/clocks/job_clocks.h"
#include "store/store.h"

namespace meridian {

class ShownWindow {
 public:
  // The window of `filter` (from_ns, to_ns; either may be absent) over
  // `catalog`'s job as `clocks` place it. `clocks` must outlive this.
  ShownWindow(const v1::SpanFilter& filter, const JobCatalog& catalog,
              const JobClocks& clocks);

  // `range` (ScanRangeOf the filter) with its times replaced by raw ones
  // that hold every span Contains would keep, on every node: for node n,
  // the earliest raw time at which a span that ends in the window may end
  // (its end moved later by at most JobClocks::max_end_shift_ns), and the
  // raw time before which a span that starts in the window starts (JobClocks
  // ::FirstRawAtOrAfter); the union over the nodes.
  ScanRange Widen(ScanRange range) const;

  // Whether a span placed at `shown` (JobClocks::Place) is in the window.
  bool Contains(const JobClocks::Interval& shown) const {
    const int64_t start = shown.start_ns - origin_ns_;
    return (!from_ns_ || start + shown.dur_ns >= *from_ns_) &&
           (!to_ns_ || start < *to_ns_);
  }

 private:
  const JobCatalog* catalog_;
  const JobClocks* clocks_;
  int64_t origin_ns_;
  std::optional<int64_t> from_ns_;
  std::optional<int64_t> to_ns_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_CLOCKS_SHOWN_WINDOW_H_
