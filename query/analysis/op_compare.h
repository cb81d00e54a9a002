// OpCompare: per operation, the difference in count, time and bytes
// between two sets of spans: two jobs, or two ranks of one job
// (byteprofile's compare, HTA's trace diff).
//
// Operations are matched by (category, name). Time is the sum of the
// spans' durations, each measured on its own node's clock: clock offsets
// do not change a duration. Sorted by the absolute difference of the sort
// key, largest first (ties: category, then name); "name" sorts by name.
//
// Example: job A ran MPI_Allreduce 40 times for 4 ms, job B 40 times for
// 9 ms: diff count 0, dur_ns +5 ms, listed above an op whose time changed
// less.
#ifndef MERIDIAN_QUERY_ANALYSIS_OP_COMPARE_H_
#define MERIDIAN_QUERY_ANALYSIS_OP_COMPARE_H_

#include <map>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "meridian/v1/query.pb.h"
#include "store/store.h"

namespace meridian {

// The totals per operation of one side, from a stream of spans.
class OpTotalsBuilder {
 public:
  explicit OpTotalsBuilder(const JobCatalog& catalog);
  void Add(const StoredSpan& span);

  using Key = std::pair<v1::Category, std::string>;
  const std::map<Key, v1::OpTotals>& totals() const { return totals_; }

 private:
  absl::flat_hash_map<int64_t, v1::OpTotals*> by_op_;
  std::map<Key, v1::OpTotals> totals_;
};

// Adds the spans of rank `rank_a` of `catalog`'s job to `a` and those of
// `rank_b` to `b` (both, if the ranks are the same), from one scan of the
// two ranks' tracks. NOT_FOUND, naming the job and rank, if the job has no
// such rank (nothing read); the store's error if the scan fails.
absl::Status AddRankTotals(Store& store, const JobCatalog& catalog,
                           int32_t rank_a, int32_t rank_b, OpTotalsBuilder* a,
                           OpTotalsBuilder* b);

// INVALID_ARGUMENT for an unknown sort key. Fills ops, ops_total and the
// totals; the caller names the sides (a, b).
absl::StatusOr<v1::CompareReply> CompareOps(const OpTotalsBuilder& a,
                                            const OpTotalsBuilder& b,
                                            const std::string& sort, int head);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_OP_COMPARE_H_
