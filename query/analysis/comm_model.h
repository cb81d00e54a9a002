// CommModel: the time an alpha-beta model of the network gives a collective
// or a message (`meridian replay --comm-model ring|tree --bandwidth B
// --latency L`), from its bytes and the number of ranks in its instance,
// instead of the time it was measured to take.
//
// alpha = the latency, beta = 1 / the bandwidth, p = the instance's ranks,
// L = ceil(log2 p), n = the span's bytes as the probe records them
// (docs/agent.md: count x type size; the v- forms a total over members):
//
//   operation                      ring                     tree
//   message (send, receive)        a + n b                  a + n b
//   Sendrecv(_replace) (n: both    a + n b / 2              a + n b / 2
//     directions, which move at once)
//   Allreduce                      2(p-1)(a + n b / p)      2L(a + n b)
//   Allgather, Alltoall,           (p-1)(a + n b)           L a + (p-1) n b
//     Reduce_scatter_block (n: one member's block)
//   Allgatherv, Alltoallv/w,       (p-1)(a + n b / p)       L a + (p-1) n b / p
//     Reduce_scatter (n: a total over members)
//   Bcast, Scatter(v), Reduce,     (p-1) a + n b            L(a + n b)
//     Gather(v) (pipelined ring; binomial tree)
//   Scan, Exscan                   (p-1)(a + n b)           L(a + n b)
//   Barrier                        2(p-1) a                 2L a
//   neighbor collectives (k: its   k(a + n b)               k(a + n b)
//     listed in-neighbors, >= 1)
// I- forms and persistent starts as their blocking ones; NCCL's AllReduce,
// AllGather, ReduceScatter (n: one member's block), Broadcast, Reduce,
// AllToAll, Send and Recv as MPI's. An instance of one rank takes 0 (a
// message still a + n b). Other operations (waits, one-sided, I/O) have no
// model time.
//
// Example: an 8 MiB Allreduce over 4 ranks, ring, 10 GB/s, 5 us:
// 2 * 3 * (5 us + 8388608 B / 4 / 10 GB/s) = 30 us + 5033 us = 5063 us.
#ifndef MERIDIAN_QUERY_ANALYSIS_COMM_MODEL_H_
#define MERIDIAN_QUERY_ANALYSIS_COMM_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "meridian/v1/span.pb.h"
#include "query/ops/mpi_semantics.h"

namespace meridian {

struct CommModel {
  enum class Algorithm { kRing, kTree };
  Algorithm algorithm = Algorithm::kRing;
  double bytes_per_s = 0;  // > 0
  int64_t latency_ns = 0;  // >= 0
};

// The model's time for one span of operation `name` (category, role as
// mpi_semantics.h gives them) with `bytes`, in an instance of `ranks` ranks
// (`neighbors`: a neighbor collective's in-neighbors); nullopt if the model
// has no rule for the operation.
std::optional<int64_t> ModelTimeNs(const CommModel& model,
                                   v1::Category category,
                                   const std::string& name, SpanRole role,
                                   int64_t bytes, int32_t ranks,
                                   int32_t neighbors);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_COMM_MODEL_H_
