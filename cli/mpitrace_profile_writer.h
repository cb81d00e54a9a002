// `meridian stats --mpitrace DIR`: a v1::StatsReply asked with per_rank,
// written as IBM mpitrace's text profiles, one file DIR/mpi_profile.RANK
// per rank (RANK the world rank, unpadded), so that tools and habits built
// on mpitrace's output read Meridian's statistics. import/
// mpitrace_profile_reader.h reads every file back to the same figures (its
// test proves it).
//
// Each file, in mpitrace's layout (docs/cli.md; reference/formats.md 6):
//
//   Data for MPI rank 3 of 4:
//   Times and statistics from MPI_Init() to MPI_Finalize().
//   -----------------------------------------------------------------------
//   MPI Routine                        #calls  avg. bytes    time(sec)
//   -----------------------------------------------------------------------
//   MPI_Allreduce                         120         8.0        0.031
//   -----------------------------------------------------------------------
//   MPI task 3 of 4 had the maximum communication time.
//   total communication time = 0.031 seconds.
//   total elapsed time = 12.500 seconds.
//   user cpu time = 11.900 seconds.
//   system time = 0.400 seconds.
//   max resident set size = 100.000 MBytes.
//
//   -----------------------------------------------------------------------
//   Message size distributions:
//
//   MPI_Allreduce                      #calls  avg. bytes    time(sec)
//                                         120         8.0        0.031
//
// - Routines: the rank's operations of category MPI, in RankStats.ops'
//   order (descending time, then name; mpitrace uses its own table order,
//   which Meridian does not know), one row `%-28s %12ld %11.1f %12.3f`.
// - Communication time: the sum of those routines' times (a rank with no
//   operations at all, one only an imported summary table gave: its
//   comm_ns). Elapsed time: MPI_Init to MPI_Finalize (mpi_elapsed_ns),
//   else the rank's first span to its last. MBytes are mpitrace's:
//   ru_maxrss / 1024, i.e. MiB (2^20 bytes).
// - Size distributions: each routine with bytes, one row per size bucket
//   of Meridian's (a bucket of [2^k, 2^(k+1)) bytes averages in it, so a
//   reader that bins by the average, as mpitrace's readers must, puts it
//   back in its bucket); a routine whose buckets do not count all its
//   calls (imported without a distribution) has none.
// - The lowest rank's file ("rank 0") also has, as mpitrace's rank 0 does:
//     Communication summary for all tasks:
//       Rank R reported the largest memory utilization : X MBytes
//       Rank R reported the largest elapsed time : X sec
//       minimum|median|maximum communication time = X sec for task T
//     MPI timing summary for all ranks:
//     taskid hostname comm(s) elapsed(s) user(s) system(s) size(MB) switches
//   (the minimum, median and maximum as StatsBuilder picks them, over the
//   communication times above).
// Ranks below 0 (processes without a rank) get no file. Names and hosts
// have whitespace and control characters replaced by '_', so that every
// row splits into its columns.
#ifndef MERIDIAN_CLI_MPITRACE_PROFILE_WRITER_H_
#define MERIDIAN_CLI_MPITRACE_PROFILE_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "meridian/v1/query.pb.h"

namespace meridian {

struct MpitraceProfileText {
  int32_t rank = 0;
  std::string file_name;  // "mpi_profile.RANK"
  std::string text;
};

// The profiles of `stats` (ascending rank). `world_size`: the job's (the
// "of N"); raised to the highest rank + 1 when smaller (0: unknown).
std::vector<MpitraceProfileText> MpitraceProfiles(const v1::StatsReply& stats,
                                                  int32_t world_size);

// Writes MpitraceProfiles(stats, world_size) into `dir`, creating it (mode
// 0700) if it does not exist; returns how many files it wrote. Never
// overwrites and never follows a symbolic link: if any of the files'
// names exists in `dir` (a file, a link, anything), it writes nothing and
// says which (FAILED_PRECONDITION). Errors: `dir` exists and is not a
// directory (FAILED_PRECONDITION), cannot be created or written
// (UNAVAILABLE); after a failed write the files this call created are
// removed.
absl::StatusOr<int> WriteMpitraceProfiles(const v1::StatsReply& stats,
                                          int32_t world_size,
                                          const std::string& dir);

}  // namespace meridian

#endif  // MERIDIAN_CLI_MPITRACE_PROFILE_WRITER_H_
