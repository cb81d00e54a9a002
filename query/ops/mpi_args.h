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
//   recv_peer=R;recv_tag=T
//                  an MPI_Sendrecv's or MPI_Sendrecv_replace's receive: the
//                  world rank it received from and the tag, as received
//                  (MPI_ANY_SOURCE and MPI_ANY_TAG resolved from the
//                  status); absent if it received from MPI_PROC_NULL. Its
//                  peer and tag fields are the send's.
//   group=A,B,C    an MPI_Win_post's (the origins that may access the
//                  exposure) or MPI_Win_start's (the targets it accesses):
//                  the world ranks of the group's members, in group order
//                  (one: an integer arg). Absent for an empty group, beyond
//                  kMaxNeighborSources members, or with a member outside
//                  MPI_COMM_WORLD.
//
// The args come from the traced process, or from any client that writes a
// job, so anything may be in them. A malformed "sources" or "group" (a part
// that is not a decimal rank, a negative rank, more than
// kMaxNeighborSources parts) counts as absent; a rank that no member of the
// instance has is left out when instances are matched (MpiMatching).
//
// Example: a 1-D periodic Cartesian ring of 4: rank 0's neighbor collectives
// carry "sources=3,1" (per dimension the -1, then the +1 neighbor), and
// NeighborSources gives {3, 1}. Rank 3 exposing its window to ranks 0 to 2
// posts "group=0,1,2"; each of them starts with "group=3".
#ifndef MERIDIAN_QUERY_OPS_MPI_ARGS_H_
#define MERIDIAN_QUERY_OPS_MPI_ARGS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "query/ops/mpi_semantics.h"
#include "store/store.h"

namespace meridian {

// The probe records no more sources (or group members) than this (the
// query reads no more).
inline constexpr size_t kMaxNeighborSources = 256;

// The world ranks in `span`'s "sources" arg, as listed; empty if it has
// none or it is malformed.
std::vector<int32_t> NeighborSources(const StoredSpan& span);
// The world ranks in `span`'s "group" arg, as listed; empty if it has none
// or it is malformed.
std::vector<int32_t> EpochGroup(const StoredSpan& span);
// The world ranks in a "sources" or "group" value ("3,5,8"); empty if
// malformed.
std::vector<int32_t> ParseNeighborSources(absl::string_view text);

// Whether spans of `role` list ranks (MpiOp::sources): kNeighbor (its
// "sources"), kPost and kStart (their "group").
bool ListsRanks(SpanRole role);
// The ranks a span of `role` lists (above); empty for other roles.
std::vector<int32_t> ListedRanks(SpanRole role, const StoredSpan& span);

// A Sendrecv's receive from its "recv_peer" and "recv_tag" args; nullopt
// unless both are integers from 0 to INT32_MAX.
std::optional<ReceiveHalf> SendrecvReceive(const StoredSpan& span);

// `op_role` (RoleOf the span's operation) as the span's args narrow it: a
// Win_lock is kLock if it is an exclusive lock actually taken, kSharedLock
// if a shared one, kNone if it takes none (nocheck) or says no lock_type.
SpanRole RoleOfSpan(SpanRole op_role, const StoredSpan& span);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_OPS_MPI_ARGS_H_
