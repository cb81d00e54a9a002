// ScenarioJob: small jobs built so that the answers of the analyses
// (critical path, stragglers, steps) are known exactly; tests, the
// quickstart and `meridian-synth --scenario` send them. Four ranks on two
// nodes (ranks 0-1 on node-0, 2-3 on node-1), one thread "main" per rank,
// at t0 + s * 10 ms for step s; docs/analysis.md works out every answer.
//
//   slow-rank       4 steps. Each rank: "step" [0, 5.1 ms) enclosing
//                   "forward" [0, 3 ms) (rank 2: [0, 5 ms)), then
//                   MPI_Allreduce (comm 1) to 5.1 ms; a thread "comm" runs
//                   MPI_Allreduce (comm 2) [1, 2 ms) beside it.
//   slow-link       2 steps. Each rank r: "compute" [0, 1 ms); MPI_Irecv from
//                   r-1 and MPI_Send to r+1 (ring, tag 7) at 1 ms, the send
//                   for 10 us; MPI_Wait from 1.01 ms until the receive
//                   completes: 100 us after the send, but 2 ms on the link
//                   1 -> 2; MPI_Barrier from then to 3.01 ms.
//   late-every-other-step
//                   4 steps. Each rank: "forward" [0, 2 ms), rank 1's
//                   [0, 4 ms) in odd steps; MPI_Allreduce from then to
//                   100 us after the last arrival.
//   p2p-chain       1 step. Rank 0: "compute" [0, 1 ms), MPI_Send to 1 for
//                   50 us. Rank k = 1..3: MPI_Recv from k-1 from 0 until
//                   50 us after that send starts, "compute" for 1 ms, then
//                   (k < 3) MPI_Send to k+1 for 50 us.
//   setup-in-step   1 step, as a Python program importing mpi4py in its
//                   first step. Each rank: "step" [0, 6 ms) enclosing
//                   MPI_Init [0, 3 ms) (rank 2's [0, 4 ms)), "compute" to
//                   5 ms and MPI_Allreduce to 6 ms; then "eval" [6, 6.3
//                   ms) tagged with step 1, which never ends (no "step"
//                   span: as auto_steps() leaves the step after the last
//                   optimizer.step()); then, in no step, MPI_Finalize
//                   [6.3, 6.8 ms).
//   waits           1 step, one wait of each pattern (wait_states.h), each
//                   caused by a "compute" of 1 ms or more: rank 0 receives
//                   from rank 1 from 0, which computes 2 ms before sending
//                   (late sender, 2 ms); rank 2 Ssends to rank 3 from 0,
//                   which computes 1.5 ms before receiving (late receiver,
//                   1.5 ms); from 2.05 ms, four collectives of 1.05 ms
//                   each, one rank computing 1 ms before it: Allreduce
//                   (rank 2), Bcast rooted at rank 1 (rank 1), Reduce
//                   rooted at rank 0 (rank 3; ranks 1 and 2 leave it at
//                   once and compute), Barrier (rank 0).
#ifndef MERIDIAN_AGENT_SCENARIO_JOB_H_
#define MERIDIAN_AGENT_SCENARIO_JOB_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "meridian/v1/span.pb.h"

namespace meridian {

inline constexpr int64_t kScenarioT0 = 1700000000000000000;
inline constexpr int kScenarioRanks = 4;
inline constexpr int kScenarioNodes = 2;

// The scenario names above; INVALID_ARGUMENT listing them otherwise.
absl::Status CheckScenario(const std::string& scenario);
std::vector<std::string> ScenarioNames();

// The batches of each node's agent (one per node), for job id `job`. With
// `node1_offset_ns`, node-1's clock reads that much ahead of node-0's: its
// raw timestamps are shifted, and each node's batch carries the clock
// model (uncertainty 1 us) that undoes it.
std::vector<std::vector<v1::Batch>> ScenarioBatches(
    const std::string& scenario, const std::string& job,
    int64_t node1_offset_ns = 0);

}  // namespace meridian

#endif  // MERIDIAN_AGENT_SCENARIO_JOB_H_
