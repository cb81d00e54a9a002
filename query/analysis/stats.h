// StatsBuilder: mpitrace-style statistics of a job's communication, built
// from a stream of spans in one pass with memory bounded by ranks x ops.
//
// What is counted (see docs/cli.md, "meridian stats"):
//   - per operation (category MPI or NCCL, by name), summed over the selected
//     ranks: calls, bytes, time; and the same per message-size bucket, where
//     bucket k holds calls of [2^k, 2^(k+1)) bytes and bucket -1 calls of
//     0 bytes;
//   - per rank: communication calls and time, and elapsed time (first span
//     start to last span end, any category);
//   - the ranks with the minimum, median (the lower middle) and maximum
//     communication time, ties broken by the lower rank;
//   - the job's elapsed time over all selected spans.
// Every selected rank of the catalog is listed, with zeros if it had none.
//
// Imported totals (Store::LoadTotals: a profile another tool wrote, e.g.
// mpitrace's) are added for the selected ranks and operations: their calls,
// bytes, times and size buckets to the operations', their communication
// time to the rank's (its source named; with a category or name filter,
// the selected operations' time instead), their elapsed time as the
// rank's if longer. They cover the whole run, so a query with a time or step
// range leaves them out. A rank that has both is counted twice: import a
// profile only for ranks Meridian did not capture.
#ifndef MERIDIAN_QUERY_STATS_H_
#define MERIDIAN_QUERY_STATS_H_

#include <cstdint>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "meridian/v1/query.pb.h"
#include "query/ops/span_selection.h"
#include "store/store.h"

namespace meridian {

// The bucket of a message size: -1 for 0 bytes, else floor(log2(bytes)).
int SizeBucketOf(int64_t bytes);

class StatsBuilder {
 public:
  StatsBuilder(const JobCatalog& catalog, const SpanSelection& selection);
  StatsBuilder(const StatsBuilder&) = delete;
  StatsBuilder& operator=(const StatsBuilder&) = delete;

  void Add(const StoredSpan& span);
  void AddTotals(const JobTotals& totals);
  v1::StatsReply Finish() const;

 private:
  struct Sums {
    int64_t calls = 0;
    int64_t bytes = 0;
    int64_t dur_ns = 0;
    void Add(int64_t b, int64_t d, int64_t n = 1) {
      calls += n;
      bytes += b;
      dur_ns += d;
    }
  };
  struct RankSums {
    std::string host;
    int64_t calls = 0;
    int64_t comm_ns = 0;
    int64_t first_start = INT64_MAX;
    int64_t last_end = INT64_MIN;
    int64_t imported_comm_ns = 0;
    int64_t imported_elapsed_ns = 0;
    std::string source;  // of imported totals
  };

  const JobCatalog& catalog_;
  const SpanSelection& selection_;
  absl::flat_hash_map<int64_t, int32_t> rank_of_process_;
  int64_t imported_elapsed_ns_ = 0;
  absl::flat_hash_map<int64_t, const OpInfo*> op_;
  absl::flat_hash_map<int64_t, int32_t> rank_of_track_;
  std::map<int32_t, RankSums> ranks_;
  absl::flat_hash_map<int64_t, Sums> op_sums_;
  std::map<std::pair<int64_t, int>, Sums> bucket_sums_;  // (op, bucket)
  int64_t first_start_ = INT64_MAX;
  int64_t last_end_ = INT64_MIN;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_STATS_H_
