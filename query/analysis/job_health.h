// DiagnoseHealth: whether a running job is stalled, on what and on whom,
// from what each of its processes is in as their agents last sampled it
// (v1::ProcessActivity: abi/in_flight.h, docs/health.md).
//
// Per rank, the thread shown is the one in a traced call longest, else the
// one in a user phase longest, else its first. Times are as of now: what a
// sample said plus how long ago it was taken.
//
// The job is "stalled" when no rank has left a traced call for
// `stall_after_ns` (its stalled_for_ns) and some rank has been in a call
// that long; "running" otherwise (a job whose ranks only compute, in
// phases or in no traced call, is running however long it does). With no
// process reporting, the caller answers "finished" or not found.
//
// A stalled job's stalls, each with the ranks waiting and those they wait
// for (suspects):
//   - "mismatch": ranks in collectives at one communicator's same sequence
//     number in different operations (or sizes, or roots): `op` is the one
//     most of them are in; the others are suspects.
//   - "missing": fewer ranks in a collective at (comm, seq) than the
//     communicator holds, all in the same operation: the suspects are the
//     members not in it (for a communicator as large as the job, every rank
//     not in it and not at a later sequence number of it, which issued
//     this one; for a smaller one, the ranks known to be on it at an
//     earlier sequence number).
//   - "p2p": a rank in a blocking send (receive), or in MPI_Wait for a
//     non-blocking one, whose peer is not in a receive (send) naming it or
//     any source (one-sided operations, MPI_Rput's..., are not: their
//     target takes no part); two such ranks waiting on each other are one
//     stall, both waiting and both suspect.
// A rank in MPI_Wait stands for the operation of the request it waits for
// (its waits_for: MPI_Irecv, MPI_Iallreduce...) throughout, and that is
// the stall's `op`; its `in` stays MPI_Wait.
// Ranks listed in a stall: every waiting rank and every suspect, by rank.
#ifndef MERIDIAN_QUERY_ANALYSIS_JOB_HEALTH_H_
#define MERIDIAN_QUERY_ANALYSIS_JOB_HEALTH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "meridian/v1/control.pb.h"
#include "meridian/v1/query.pb.h"

namespace meridian {

// One process of the job as its agent last reported it.
struct LiveProcess {
  std::string node;
  int64_t sampled_ago_ns = 0;  // how long ago its agent's report came
  v1::ProcessActivity activity;
};

constexpr int64_t kDefaultStallAfterNs = int64_t{60} * 1000000000;

// `processes` must be non-empty; stall_after_ns > 0.
v1::HealthReply DiagnoseHealth(const std::string& job,
                               const std::vector<LiveProcess>& processes,
                               int64_t stall_after_ns);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_JOB_HEALTH_H_
