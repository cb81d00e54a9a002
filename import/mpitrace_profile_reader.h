// Reads one IBM mpitrace text profile (mpi_profile.<jobid>.<rank>, which
// libmpitrace writes at MPI_Finalize: IBM/mpitrace's write_profile_data in
// src/mpitrace_common.c) into an MpitraceProfile: what the file states, per
// routine and per rank, and no spans (mpitrace records none). `meridian import`
// stores these figures as imported statistics (v1::ImportedOpTotals,
// ImportedProcessTotals).
//
// Parsing keys on sentinel text ("Data for MPI rank", "MPI Routine",
// "total communication time =", "Message size distributions:", "MPI
// timing summary for all ranks:", ...), never on line numbers or column
// widths; rows are split on whitespace. Only the "Data for MPI rank R of
// N:" line and the routine table are required; sections this reader does
// not know (by communicator size, call stacks, hardware counters, the
// histogram of times) are skipped up to the next known sentinel. Numbers
// are read exactly from their decimal text ("317.922" seconds is
// 317922000000 ns), not through a double.
//
// Message sizes. mpitrace prints each routine's calls in unlabelled
// power-of-two bins (0 B; 1-4 B; then (2^k, 2^(k+1)]), only the non-empty
// ones, so a bin is known by its average. Meridian's stats count a call
// of b bytes in bucket log2 = floor(log2(b)) (bytes in [2^log2,
// 2^(log2+1))), or -1 for exactly 0 bytes (query.proto SizeBucket). Each
// row goes to the bucket of its average: -1 for 0.0, floor(log2(avg))
// from 1 byte up, 0 below. That is exact when a bin holds one size (the
// usual power-of-two messages land where Meridian puts them: 16384.0 ->
// 14) and an approximation when a bin mixes sizes. Rows that land in one
// bucket are summed. Example, MPI_Bcast's rows
//       calls  avg. bytes  time(sec)
//           8         4.0      0.001   -> bucket 2
//           2       256.0      0.002   -> bucket 8  (bin (128, 256])
//           6       300.5      0.010   -> bucket 8  (bin (256, 512])
// give buckets {2: 8 calls, 32 B, 1 ms}, {8: 8 calls, 2315 B, 12 ms}.
// Bytes are calls x average, rounded to a byte (the file gives averages
// to 0.1 B). A distribution must count the routine's calls exactly.
//
// Errors (INVALID_ARGUMENT) read "FILE:LINE: what", naming the routine
// and the field: a cut or garbled row, a negative count, an absurd value
// (more than 10^15 calls, averages over 1 PiB, times over a year, ranks
// outside 0..N-1), a second profile in one file.
#ifndef MERIDIAN_IMPORT_MPITRACE_PROFILE_READER_H_
#define MERIDIAN_IMPORT_MPITRACE_PROFILE_READER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace meridian {

// A routine's calls of one message-size bucket: bytes in [2^log2,
// 2^(log2+1)), or exactly 0 bytes when log2 is -1 (v1::SizeBucket).
struct MpitraceSizeBucket {
  int32_t log2 = -1;
  int64_t calls = 0;
  int64_t bytes = 0;    // total
  int64_t time_ns = 0;  // total
};

// One row of the routine table, with its size distribution.
struct MpitraceRoutine {
  std::string name;  // e.g. "MPI_Allreduce"
  int64_t calls = 0;
  double avg_bytes = 0;  // as printed (0.1 B)
  int64_t bytes = 0;     // total: calls x avg_bytes, rounded
  int64_t time_ns = 0;   // total
  // Ascending log2; empty when the file gives no distribution (routines
  // without bytes, or files that print none).
  std::vector<MpitraceSizeBucket> buckets;
};

// One row of rank 0's "MPI timing summary for all ranks" table.
struct MpitraceRankTotals {
  int32_t rank = 0;
  std::string host;
  int64_t comm_ns = 0;
  int64_t elapsed_ns = 0;
  std::optional<int64_t> user_ns;
  std::optional<int64_t> system_ns;
  std::optional<int64_t> max_rss_bytes;     // size(MiB) x 2^20
  std::optional<int64_t> context_switches;  // "switches"
};

struct MpitraceProfile {
  int32_t rank = 0;                // "Data for MPI rank R of N:"
  int32_t world_size = 0;          // N
  bool all_communicators = false;  // "(all communicators)" after it
  // What the times cover: "MPI_Init() to MPI_Finalize()", or the
  // MPI_Pcontrol variant's text.
  std::string interval;
  std::vector<MpitraceRoutine> routines;  // in the file's order
  // What this rank was among all ranks ("minimum", "median", "maximum"
  // communication time), from "MPI task R of N had the ... time." lines.
  std::vector<std::string> comm_time_roles;
  // The summary lines, when present.
  std::optional<int64_t> comm_ns;        // total communication time
  std::optional<int64_t> elapsed_ns;     // total elapsed time
  std::optional<int64_t> user_ns;        // user cpu time
  std::optional<int64_t> system_ns;      // system time
  std::optional<int64_t> max_rss_bytes;  // max resident set size (MiB)
  std::optional<int64_t> sync_ns;        // synchronization time
  std::optional<int64_t> mpi_io_ns;      // total MPI-IO time

  // Rank 0's file only (else empty): its summary of all ranks.
  std::optional<int32_t> min_comm_rank;
  std::optional<int32_t> median_comm_rank;
  std::optional<int32_t> max_comm_rank;
  std::vector<MpitraceRankTotals> ranks;  // in the file's order
  std::string host;  // this rank's, from `ranks`; "" if it is not there
};

// Whether `head` (a file's first bytes) has a line starting with
// "Data for MPI rank ".
bool LooksLikeMpitraceProfile(std::string_view head);

// `file` names the file in errors.
absl::StatusOr<MpitraceProfile> ReadMpitraceProfile(std::string_view text,
                                                    const std::string& file);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_MPITRACE_PROFILE_READER_H_
