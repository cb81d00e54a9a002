// SyntheticJob: a deterministic multi-rank training job, as agents would
// send it, for the quickstart, tests and benchmarks before real capture.
//
// Every rank r (of `ranks`, spread over `nodes` in contiguous blocks) does:
//   before step 0: MPI_Bcast of 1000 bytes from rank 0, 100 us, at t0 - 1 ms
//   step s (s = 0..steps-1) at T = t0 + s * 10 ms, all on thread "main":
//     user "step"          [T,          T + 9 ms)
//     user "forward"       [T,          T + 3 ms)
//     user "backward"      [T + 3 ms,   T + 7 ms)
//     MPI_Allreduce 8 B    [T + 7 ms,   + 20 us + r * 1 us)     seq 2s + 1
//     MPI_Allreduce 4 MiB  [T + 7.1 ms, + 1 ms + r * 10 us)     seq 2s + 2
//     user "optimizer"     [T + 8.2 ms, T + 8.7 ms)
// With `layers` L > 0, forward and backward each also hold L user spans
// "layer" (step s), slices of the phase end to end, 1 us apart (with
// jitter, each shortened by up to half a slice): a step
// then has 6 + 2L spans a rank, as a training step's many kernels give it.
// so rank r spends steps * (1020 us + r * 11 us) + 100 us in MPI, and every
// rank's elapsed time is exactly steps * 10 ms. Collectives are on the
// world communicator (comm 1, size `ranks`); the Bcast has seq 0.
#ifndef MERIDIAN_AGENT_SYNTHETIC_JOB_H_
#define MERIDIAN_AGENT_SYNTHETIC_JOB_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "meridian/v1/span.pb.h"

namespace meridian {

struct SyntheticJob {
  std::string job = "synthetic";
  int ranks = 4;
  int nodes = 2;
  int steps = 10;
  int64_t t0_ns = 1700000000000000000;  // 2023-11-14T22:13:20Z
  int spans_per_batch = 4096;
  // Up to this much added to every start and duration (0: none), from a
  // fixed pseudo-random sequence: measured times are not round numbers,
  // and how well a store compresses them depends on it.
  int64_t jitter_ns = 0;
  int layers = 0;  // "layer" spans in forward, and in backward, each step
  // Node n's clock reads n * node_skew_ns ahead (0: the nodes agree), with
  // no clock model sent: what the causal refinement corrects.
  int64_t node_skew_ns = 0;
  // How a node's batches go: a rank's whole job, then the next rank's
  // (false); or a step of every rank at a time, as an agent draining its
  // ranks as they run sends them (true).
  bool time_ordered = false;
  // As agents send a job whose processes have exited: each process with
  // world size `ranks`, and declared ended (v1::Process.ended) in its
  // node's last batch (false: neither, as a sender other than an agent).
  bool declare_ended = false;
};

inline constexpr int kSyntheticSpansPerStep = 6;

// The node a rank runs on, and that node's agent id.
int SyntheticNodeOf(const SyntheticJob& job, int rank);
std::string SyntheticAgentId(const SyntheticJob& job, int node);

// The batches node `node`'s agent sends: batch_seq 1, 2, ...
std::vector<v1::Batch> SyntheticBatches(const SyntheticJob& job, int node);
// The same, each given to `sink` as it is made: memory for one batch, for
// jobs too large to hold (benchmarks of 100M spans).
void ForEachSyntheticBatch(const SyntheticJob& job, int node,
                           const std::function<void(v1::Batch)>& sink);

}  // namespace meridian

#endif  // MERIDIAN_AGENT_SYNTHETIC_JOB_H_
