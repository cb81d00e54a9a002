// MPI span args: what the probe records on an MPI span besides its name and
// fields, as MPI semantics (mpi_semantics.h) reads it. The probe writes
// them (capture/probe/mpi_wrappers.cc); the agent stores a value that is a
// whole number as an integer arg, any other as a string (agent/probe_args.h):
//
//   sources=A,B,C  a neighbor collective's (MPI_Neighbor_*, MPI_Ineighbor_*):
//                  the world ranks of the calling rank's in-neighbors in the
//                  communicator's topology, in MPI's order (one source: an
//                  integer arg). Absent without a topology, with no
//                  in-neighbor, or beyond kMaxNeighborSources of them.
//   lock_type=exclusive, lock_type=shared
//                  an MPI_Win_lock's; with MPI_MODE_NOCHECK also nocheck=1
//                  (the program asserts no conflict: no lock is taken).
//
// The args come from the traced process, or from any client that writes a
// job, so anything may be in them. A malformed "sources" (a part that is not
// a decimal rank, a negative rank, more than kMaxNeighborSources parts)
// counts as absent; a rank that no member of the instance has is left out
// when instances are matched (MpiMatching).
//
// Example: a 1-D periodic Cartesian ring of 4: rank 0's neighbor collectives
// carry "sources=3,1" (per dimension the -1, then the +1 neighbor), and
// NeighborSources gives {3, 1}.
#ifndef MERIDIAN_QUERY_MPI_ARGS_H_
#define MERIDIAN_QUERY_MPI_ARGS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "query/ops/mpi_semantics.h"
#include "store/store.h"

namespace meridian {

// The probe records no more sources than this (the query reads no more).
inline constexpr size_t kMaxNeighborSources = 256;

// The world ranks in `span`'s "sources" arg, as listed; empty if it has
// none or it is malformed.
std::vector<int32_t> NeighborSources(const StoredSpan& span);
// The world ranks in a "sources" value ("3,5,8"); empty if malformed.
std::vector<int32_t> ParseNeighborSources(absl::string_view text);

// `op_role` (RoleOf the span's operation) as the span's args narrow it: a
// Win_lock that is not an exclusive lock actually taken (shared, nocheck,
// or without a lock_type) is kNone.
SpanRole RoleOfSpan(SpanRole op_role, const StoredSpan& span);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_MPI_ARGS_H_
