// StatsBuilder: mpitrace-style statistics of a job's communication, built
// from a stream of spans in one pass with memory bounded by ranks x ops.
//
// What is counted (see docs/cli.md, "meridian stats"):
//   - per operation (category MPI or NCCL, by name), summed over the selected
//     ranks: calls, bytes, time; and the same per message-size bucket, where
//     bucket k holds calls of [2^k, 2^(k+1)) bytes and bucket -1 calls of
//     0 bytes;
//   - per rank: communication calls and time, and elapsed time (first span
//     start to last span end, any category); with `per_rank`, also the
//     rank's own operations, as above;
//   - the ranks with the minimum, median (the lower middle) and maximum
//     communication time, ties broken by the lower rank;
//   - the job's elapsed time over all selected spans;
//   - with `by_callsite`, per operation and call site: the calls, bytes and
//     time of the communication calls (below) whose span has a non-empty
//     string arg "callsite", where the program made the call as the node's
//     agent symbolized it (jobs run with MERIDIAN_CALLSITES=1). Calls
//     without one count only per operation.
// Every selected rank of the catalog is listed, with zeros if it had none.
//
// A communication call is a COMPLETE span (counters and instants never
// are) of category MPI or NCCL. Its time is the time inside the call, as
// mpitrace counts it: the span's integer "call_ns" arg when it has one,
// else its duration. The probe records a non-blocking call (MPI_Isend,
// MPI_Iallreduce, MPI_Start, MPI_File_iwrite...) from issue to completion
// and gives the issuing call's own time as "call_ns"; the time until
// completion is counted in the MPI_Wait* that completes it (MPI_Test*
// calls are not recorded). MPI_Init(_thread) and MPI_Finalize bound the
// profile and are no calls, as in mpitrace.
//
// Per-rank process figures, taken from spans whatever the filter's
// categories and name (Add, and AddUnselected for the spans they leave out;
// only the rank filter applies):
//   - user_ns, system_ns, max_rss_bytes, context_switches: the MPI counters
//     "rusage.user_ns", "rusage.system_ns", "rusage.max_rss_bytes",
//     "rusage.context_switches", the earliest sample of each per rank (the
//     probe sends them at MPI_Finalize, and again at exit);
//   - mpi_elapsed_ns: the start of the rank's MPI_Finalize span minus the
//     end of its MPI_Init (or MPI_Init_thread) span (what mpitrace calls
//     its elapsed time); else an imported profile's elapsed time (the same
//     interval); else 0;
//   - pcontrol_windows: whether the rank has an MPI_Pcontrol span (its
//     calls were recorded in Pcontrol windows).
//
// Imported totals (Store::LoadTotals: a profile another tool wrote, e.g.
// mpitrace's) are added for the selected ranks and operations: their calls,
// bytes, times and size buckets to the operations' (and, with `per_rank`,
// to their rank's operations), their communication
// time to the rank's (its source named; with a category or name filter,
// the selected operations' time instead), their elapsed time as the
// rank's mpi_elapsed_ns where its spans give none. elapsed_ns, the rank's
// and the job's, is only ever the spans' first start to last end. They cover
// the whole run, so a query with a time or step range leaves them out. A rank
// that has both is counted twice: import a profile only for ranks Meridian did
// not capture. They have no call sites.
//
// Call sites are held in memory until Finish: at most max_callsites
// distinct (operation, call site) pairs and max_callsite_bytes of call-site
// text (StatsOptions). A call from a new pair past either limit is counted
// in its operation's row "(other call sites)" instead, so that an
// operation's rows always sum to its calls that have a call site. E.g. with
// max_callsites 1, MPI_Send from "main at a.cc:5" (20 ns) then from
// "main at a.cc:9" (10 ns) and MPI_Recv from "main at a.cc:7" (5 ns):
//   MPI_Send  main at a.cc:5          20 ns
//   MPI_Send  (other call sites)      10 ns
//   MPI_Recv  (other call sites)       5 ns
#ifndef MERIDIAN_QUERY_ANALYSIS_STATS_H_
#define MERIDIAN_QUERY_ANALYSIS_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "common/saturating.h"
#include "meridian/v1/query.pb.h"
#include "query/ops/span_selection.h"
#include "store/store.h"

namespace meridian {

// The bucket of a message size: -1 for 0 bytes, else floor(log2(bytes)).
int SizeBucketOf(int64_t bytes);
// mpitrace's bin of a message size: -1 for 0 bytes, 1 for 1 to 4 bytes,
// else k for (2^k, 2^(k+1)] bytes.
int MpitraceSizeBucketOf(int64_t bytes);

// The time a communication span counts: its "call_ns" arg (at most dur_ns),
// else dur_ns.
int64_t InCallNs(const StoredSpan& span);

// The call site row of calls past StatsOptions' limits.
inline constexpr char kOtherCallsites[] = "(other call sites)";

struct StatsOptions {
  // Also each rank's operations (RankStats.ops).
  bool per_rank = false;
  // Also the operations per call site (StatsReply.callsites).
  bool by_callsite = false;
  // Message-size buckets in mpitrace's bins (MpitraceSizeBucketOf), not
  // SizeBucketOf's.
  bool mpitrace_bins = false;
  // The most distinct (operation, call site) pairs held, and the most bytes
  // of their call-site text (above): 100000 and 64 MiB by default.
  int64_t max_callsites = 100000;
  int64_t max_callsite_bytes = int64_t{64} << 20;
};

class StatsBuilder {
 public:
  StatsBuilder(const JobCatalog& catalog, const SpanSelection& selection,
               StatsOptions options = {});
  StatsBuilder(const StatsBuilder&) = delete;
  StatsBuilder& operator=(const StatsBuilder&) = delete;

  // A span the selection selects.
  void Add(const StoredSpan& span);
  // A span the selection does not select: only the process figures above
  // are taken from it, and only if its rank is selected.
  void AddUnselected(const StoredSpan& span);
  void AddTotals(const JobTotals& totals);
  v1::StatsReply Finish() const;

 private:
  struct Sums {
    int64_t calls = 0;
    int64_t bytes = 0;
    int64_t dur_ns = 0;
    void Add(int64_t b, int64_t d, int64_t n = 1) {
      calls += n;
      bytes = SaturatingAdd(bytes, b);
      dur_ns = SaturatingAdd(dur_ns, d);
    }
  };
  // Operations' sums and their size buckets: the job's, or one rank's.
  struct OpSums {
    absl::flat_hash_map<int64_t, Sums> ops;
    std::map<std::pair<int64_t, int>, Sums> buckets;  // (op, bucket)
    void Add(int64_t op, int bucket, int64_t bytes, int64_t dur_ns,
             int64_t calls = 1) {
      ops[op].Add(bytes, dur_ns, calls);
      buckets[{op, bucket}].Add(bytes, dur_ns, calls);
    }
  };
  // What a span of an operation tells of its process (AddProcessFigures).
  enum class Figure {
    kInit,
    kFinalize,
    kUserNs,
    kSystemNs,
    kMaxRssBytes,
    kContextSwitches,
    kPcontrol
  };
  // The earliest sample of a rusage counter. A value that is no count
  // (negative, NaN, past int64) is no sample.
  struct Sample {
    int64_t at_ns = INT64_MAX;
    int64_t value = 0;
    void Take(int64_t at, double v) {
      if (at >= at_ns || !(v >= 0 && v < 9.2e18)) return;
      at_ns = at;
      value = static_cast<int64_t>(v);
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
    Sample user_ns, system_ns, max_rss_bytes, context_switches;
    int64_t init_end = INT64_MAX;        // of MPI_Init, the earliest
    int64_t finalize_start = INT64_MIN;  // of MPI_Finalize, the latest
    bool pcontrol = false;               // an MPI_Pcontrol span was seen
    OpSums ops;                          // with per_rank_ only
  };

  void AddProcessFigures(const StoredSpan& span, RankSums& rank);
  void AddCallsite(const StoredSpan& span, int64_t in_call_ns);
  void AppendOps(const OpSums& sums,
                 google::protobuf::RepeatedPtrField<v1::OpStats>* out) const;
  void AppendCallsites(
      google::protobuf::RepeatedPtrField<v1::CallsiteStats>* out) const;

  const JobCatalog& catalog_;
  const SpanSelection& selection_;
  const StatsOptions options_;
  absl::flat_hash_map<int64_t, int32_t> rank_of_process_;
  absl::flat_hash_map<int64_t, const OpInfo*> op_;
  absl::flat_hash_map<int64_t, Figure> figure_of_op_;
  absl::flat_hash_map<int64_t, int32_t> rank_of_track_;
  std::map<int32_t, RankSums> ranks_;
  OpSums op_sums_;
  int64_t first_start_ = INT64_MAX;
  int64_t last_end_ = INT64_MIN;
  // With by_callsite: op -> call site -> sums, and op -> the sums of call
  // sites past the limits; the pairs and text bytes held.
  absl::flat_hash_map<int64_t, absl::flat_hash_map<std::string, Sums>>
      callsites_;
  absl::flat_hash_map<int64_t, Sums> other_callsites_;
  int64_t callsites_held_ = 0;
  int64_t callsite_bytes_held_ = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_STATS_H_
