// CommMatrixBuilder: the communication matrix of a job (`meridian stats
// --matrix`): how many messages and bytes each world rank sent to each
// other, built from the same stream of selected spans as StatsBuilder, in
// one pass. Only MPI operations count (query/ops/mpi_semantics.h,
// DataFlowOf, classifies them); NCCL's peers and roots are communicator
// ranks, not world ranks, so NCCL operations are left out.
//
// Point-to-point and one-sided (always), one message per span from the
// span's rank (its track's process) to its peer (a world rank):
//   - sends (every mode, blocking or not; the start of a persistent send,
//     recorded under its init call's name) and one-sided writes (Put, Rput,
//     Accumulate, Raccumulate, Get_accumulate, Rget_accumulate,
//     Fetch_and_op, Compare_and_swap; origin -> target): the span's bytes;
//   - Sendrecv and Sendrecv_replace: the span's integer arg "send_bytes"
//     where it has one, else half its bytes (the probe records the send
//     and receive buffers together: exact for Sendrecv_replace, whose two
//     are equal);
//   - one-sided Get and Rget: from the peer (the target) to the span's rank
//     (the origin), the span's bytes.
// Receives are not counted: their sends are. A span without a rank or a
// peer is left out; a send to itself is on the diagonal.
//
// Collectives, with expand_collectives: each instance, (comm, seq) over the
// ranks that recorded it, is expanded into the logical, algorithm-
// independent data movement between those members (world ranks; root = a
// record's peer), one message per (from, to) pair and instance, never from a
// member to itself. Bytes are each member's recorded bytes (docs/agent.md
// says what the probe records):
//   Bcast, Scatter(v)      root -> each other member: that member's bytes
//                          (what it received)
//   Gather(v), Reduce      each other member -> root: that member's bytes
//                          (what it sent; the root's record, its whole
//                          receive buffer for Gather, is not used)
//   Allreduce, Allgather, Alltoall, Reduce_scatter_block
//                          each member -> every other: its own bytes (its
//                          contribution; per destination for Alltoall)
//   Allgatherv, Alltoallv, Alltoallw, Reduce_scatter
//                          each member -> every other: its bytes / comm_size,
//                          rounded down. The probe records a total over all
//                          members (the receive counts, or the send counts
//                          over all destinations): an even spread, exact
//                          only when the counts are equal
//   Scan, Exscan           each member -> every member of a higher world
//                          rank: its own bytes (communicator ranks taken in
//                          the order of world ranks, as in MPI_COMM_WORLD
//                          and its duplicates)
//   Barrier                nothing
// I- forms as their blocking ones. Neighbor collectives are left out (the
// topology is not recorded). Only members that recorded the instance take
// part, so a rank filter keeps the pairs between selected ranks; a rooted
// instance whose root did not record it adds nothing.
//
// Example: ranks 0, 1, 2 record MPI_Bcast (comm 7, seq 3, root 1), 8 bytes
// each, and rank 0 records MPI_Isend to 2 of 100 bytes. The matrix: 0 -> 2
// one message, 100 bytes; with expand_collectives also 1 -> 0 and 1 -> 2,
// one message and 8 bytes each.
//
// Memory: the matrix holds one entry per (from, to) pair with traffic. An
// instance is held from its first record until it is complete: comm_size
// records, or as many as the selected ranks can give (fewer where a filter
// leaves ranks out). The store's scan delivers spans in time order, so the
// instances held are those in flight at the scan's position, plus those some
// member never recorded. At most options.max_pending_records records are
// held: beyond, the instance begun first is expanded with the members it has
// (a member recording it later makes a new, partial one, and its pairs with
// the earlier members are lost). What is left at Finish is expanded as it
// is. An expanded instance of n members costs up to n x (n - 1) updates.
//
// Thread safety: none; one builder per query.
#ifndef MERIDIAN_QUERY_ANALYSIS_COMM_MATRIX_H_
#define MERIDIAN_QUERY_ANALYSIS_COMM_MATRIX_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "google/protobuf/repeated_field.h"
#include "meridian/v1/query.pb.h"
#include "query/ops/mpi_semantics.h"
#include "query/ops/span_selection.h"
#include "store/store.h"

namespace meridian {

struct CommMatrixOptions {
  // Collectives too, each instance as its data movement (above).
  bool expand_collectives = false;
  // The most collective records held at once (16 bytes each, plus each
  // instance's own): 2^20 by default, 16 MiB.
  int64_t max_pending_records = int64_t{1} << 20;
};

class CommMatrixBuilder {
 public:
  CommMatrixBuilder(const JobCatalog& catalog, const SpanSelection& selection,
                    CommMatrixOptions options = {});
  CommMatrixBuilder(const CommMatrixBuilder&) = delete;
  CommMatrixBuilder& operator=(const CommMatrixBuilder&) = delete;

  void Add(const StoredSpan& span);
  // Expands the instances still held, then writes the matrix: ascending
  // (from_rank, to_rank), only pairs with traffic. Call once, last.
  void Finish(google::protobuf::RepeatedPtrField<v1::RankTraffic>* matrix);

  // Collective records held now.
  int64_t pending_records() const { return pending_records_; }

 private:
  struct Traffic {
    int64_t messages = 0;
    int64_t bytes = 0;
  };
  // One member's record of a collective instance.
  struct Record {
    int32_t rank;
    int32_t root;  // world rank; -1: none
    int64_t bytes;
  };
  using InstanceKey = std::pair<uint64_t, uint64_t>;  // (comm, seq)
  struct Instance {
    InstanceKey key;
    DataFlow flow = DataFlow::kNone;
    uint32_t comm_size = 0;
    uint32_t expected = 0;  // records that complete it
    std::vector<Record> records;
  };

  void AddTransfer(int32_t from, int32_t to, int64_t bytes);
  void AddPointToPoint(DataFlow flow, int32_t rank, const StoredSpan& span);
  void AddCollective(DataFlow flow, int32_t rank, const StoredSpan& span);
  // Expands the held instance at `it` and forgets it.
  void Retire(std::map<uint64_t, Instance>::iterator it);
  void Expand(Instance& instance);

  CommMatrixOptions options_;
  absl::flat_hash_map<int64_t, int32_t> rank_of_track_;
  absl::flat_hash_map<int64_t, DataFlow> flow_of_op_;
  uint32_t selected_ranks_ = 0;  // distinct ranks >= 0 the filter selects
  // ((from << 32) | to) -> traffic.
  absl::flat_hash_map<uint64_t, Traffic> matrix_;
  // Instances held, by the order they began in: the oldest first.
  std::map<uint64_t, Instance> pending_;
  absl::flat_hash_map<InstanceKey, uint64_t> ordinal_of_;
  uint64_t next_ordinal_ = 0;
  int64_t pending_records_ = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_COMM_MATRIX_H_
