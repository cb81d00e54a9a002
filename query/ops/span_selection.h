// SpanSelection: the parts of a v1::SpanFilter that are decided per span
// (ranks, categories, name glob), resolved once against a job's catalog into
// sets of track and operation ids, so testing a span is two lookups.
// Time and step ranges, and the tracks of the selected ranks, are pushed
// down into Store::Scan (ScanRangeOf), which skips whole chunks by them.
#ifndef MERIDIAN_QUERY_OPS_SPAN_SELECTION_H_
#define MERIDIAN_QUERY_OPS_SPAN_SELECTION_H_

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "meridian/v1/query.pb.h"
#include "store/store.h"

namespace meridian {

class SpanSelection {
 public:
  // INVALID_ARGUMENT for a bad filter (a step range with first > last, a
  // time range with from > to, an unknown category value); NOT_FOUND for a
  // rank the job does not have (CheckRanksInJob).
  static absl::StatusOr<SpanSelection> Make(const JobCatalog& catalog,
                                            const v1::SpanFilter& filter);

  bool Selects(const StoredSpan& span) const {
    return tracks_.contains(span.track_id) && ops_.contains(span.op_id);
  }
  // Whether any span of this process can be selected (its rank is wanted).
  bool SelectsProcess(int64_t process_id) const {
    return processes_.contains(process_id);
  }
  // Whether spans of this operation can be selected (category and name).
  bool SelectsOp(int64_t op_id) const { return ops_.contains(op_id); }
  // Whether the filter leaves out some ranks (then only tracks() are read).
  bool narrows_tracks() const { return narrows_tracks_; }
  const absl::flat_hash_set<int64_t>& tracks() const { return tracks_; }
  // Whether the filter leaves out some operations (categories, a name).
  bool narrows_ops() const { return narrows_ops_; }

 private:
  absl::flat_hash_set<int64_t> processes_;
  absl::flat_hash_set<int64_t> tracks_;
  absl::flat_hash_set<int64_t> ops_;
  bool narrows_tracks_ = false;
  bool narrows_ops_ = false;
};

// NOT_FOUND naming the first of `ranks` that no process of the job has, and
// the ranks it has: "job j has no rank 9 (its ranks: 0-3)". OK otherwise.
absl::Status CheckRanksInJob(const JobCatalog& catalog,
                             absl::Span<const int32_t> ranks);

// The store scan for `filter`: its time and step ranges, and the selected
// tracks when it names ranks, so that no other chunk is read.
ScanRange ScanRangeOf(const v1::SpanFilter& filter,
                      const SpanSelection& selection);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_OPS_SPAN_SELECTION_H_
