// ClockEvidence: what a job's clock solution is solved from: the spans the
// causal refinement reads (the MPI spans that order ranks: collectives,
// messages, epoch calls), with raw node-clock times, and each track's
// earliest start (the job's epoch). Raw times keep it valid whatever the
// clock models become: a solution places them by the models of the job as
// it is then.
//
// It lives in memory only: a whole solve gathers it from the job's chunks
// (JobClocks::Update), and an incremental update keeps what is still open
// of it (clock_solve_state.h). It is not stored: a second copy of every MPI
// span took three times the spans' own bytes (docs/PERFORMANCE.md).
//
// Example: a read holding an MPI_Allreduce of track 7 at raw 1000 ns for
// 50 ns and a kernel of track 9 at 900 ns gathers one span (track 7, start
// 1000, duration 50) and the first starts {7: 1000, 9: 900}.
#ifndef MERIDIAN_QUERY_CLOCKS_CLOCK_EVIDENCE_H_
#define MERIDIAN_QUERY_CLOCKS_CLOCK_EVIDENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "meridian/v1/span.pb.h"
#include "query/ops/mpi_semantics.h"
#include "store/store.h"

namespace meridian {

// One span the refinement reads (StoredSpan's fields that it uses;
// `sources`: mpi_args.h ListedRanks).
// Fields ordered so that no padding lies between them (96 bytes).
struct EvidenceSpan {
  int64_t track_id = 0;
  int64_t op_id = 0;
  int64_t start_ns = 0;  // raw, the node's clock
  int64_t dur_ns = 0;
  uint64_t comm = 0;
  uint64_t seq = 0;
  uint32_t comm_size = 0;  // 0: unknown
  int32_t peer = -1;       // -1: none
  int32_t tag = 0;
  // A Sendrecv's receive (mpi_args.h SendrecvReceive): its source (-1:
  // none known) and tag.
  int32_t recv_peer = -1;
  int32_t recv_tag = 0;
  bool has_seq = false;
  std::vector<int32_t> sources;
};
static_assert(sizeof(EvidenceSpan) <= 96, "an EvidenceSpan grew");

// The role of an operation's spans in the evidence, if they are evidence
// (MPI spans of a role the refinement orders); nullopt otherwise.
std::optional<SpanRole> EvidenceRole(v1::Category category,
                                     const std::string& name);
// Whether a span of `role` (EvidenceRole's) reads its args: a Sendrecv's
// receive, a neighbor collective's sources, an epoch's group.
bool EvidenceReadsArgs(SpanRole role);
// Span `span`, of an operation of `role`, as evidence. It reads the span's
// args only where EvidenceReadsArgs(role).
EvidenceSpan EvidenceOf(SpanRole role, const StoredSpan& span);

struct ClockEvidence {
  std::vector<EvidenceSpan> spans;
  absl::flat_hash_map<int64_t, int64_t> first_start;  // track -> raw ns

  // Adds a track's span start to the first starts.
  void SawStart(int64_t track_id, int64_t start_ns);
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_CLOCKS_CLOCK_EVIDENCE_H_
