// MPI semantics: how an operation takes part in the order that MPI (and
// NCCL, whose collectives follow the same rules) imposes across ranks, which
// spans are one collective instance, and which send a receive matched. The
// dependency graph, the clock refinement and the stragglers report all read
// these rules here, so they cannot drift apart.
//
// Roles (RoleOf, from an operation's category and name):
//   kAllToAll  every result depends on every rank's input: Barrier,
//              Allreduce, Allgather(v), Alltoall(v/w), Reduce_scatter(_block)
//              and their I- forms, Win_fence (an epoch-ending fence: one
//              that only opens an epoch has no seq); NCCL AllReduce,
//              AllGather, ReduceScatter, AllToAll
//   kRootIn    the root's result depends on every input: Reduce, Gather(v)
//   kRootOut   every result depends on the root's input: Bcast, Scatter(v)
//   kPrefix    rank r's result depends on the inputs of ranks <= r: Scan,
//              Iscan
//   kExclusivePrefix  ... of ranks < r: Exscan, Iexscan
//   kNeighbor  a rank's result depends on its in-neighbors' inputs:
//              Neighbor_* and Ineighbor_*, whose spans list them
//              (MpiOp::sources; the probe's "sources" arg, mpi_args.h)
//   kSend, kRecv  point-to-point (every MPI send mode, MPI_Recv, MPI_Irecv,
//              Mrecv, Imrecv, and the starts of persistent requests, named
//              after their init call: MPI_Send_init..., MPI_Recv_init)
//   kWait      MPI_Wait, Waitall, Waitany, Waitsome: completes earlier
//              nonblocking operations of its thread
//   kLock, kUnlock  MPI_Win_lock, MPI_Win_unlock: a passive-target epoch.
//              RoleOf gives kLock to every Win_lock; only an exclusive one
//              orders anything, so a span whose args do not say exclusive
//              is kNone (RoleOfSpan, mpi_args.h)
//   kSync      a CUDA synchronisation: waits for the GPU
// An MPI-4 persistent collective's starts, recorded under its init call's
// name (MPI_Allreduce_init, MPI_Neighbor_alltoall_init...), take the role and
// data flow of the collective; partitioned ones (MPI_Psend_init,
// MPI_Precv_init) are kSend and kRecv, as the persistent sends are.
//
// Data flow (DataFlowOf, MPI operations only): which way an operation moves
// data between ranks, as the communication matrix counts it
// (query/analysis/comm_matrix.h says how many bytes each carries):
//   kToPeer       rank -> peer: every send mode, the starts of persistent
//                 sends (recorded under their init call's name), one-sided
//                 Put, Rput, Accumulate, Raccumulate, Get_accumulate,
//                 Rget_accumulate, Fetch_and_op, Compare_and_swap
//   kExchange     rank -> peer, part of the bytes: Sendrecv(_replace)
//   kFromPeer     peer -> rank: one-sided Get, Rget (the target's data)
//   kFromRoot     root -> members: Bcast, Scatter(v)
//   kToRoot       members -> root: Gather(v), Reduce
//   kAllToAll     each member -> every other, its own bytes: Allreduce,
//                 Allgather, Alltoall, Reduce_scatter_block
//   kAllToAllTotal  each member -> every other, a total over members
//                 recorded: Allgatherv, Alltoallv, Alltoallw, Reduce_scatter
//   kPrefix       each member -> every higher one: Scan, Exscan
//   kSynchronize  no data: Barrier
// I- forms as their blocking ones. Receives (counted at their sends),
// waits, neighbor collectives and NCCL operations (whose peers and roots
// are communicator ranks) have none.
//
// Matching (MpiMatching):
//   instance   the spans of a collective role with equal (comm, seq), seq
//              set and comm nonzero; members in ascending rank; the root is
//              the member whose rank equals its peer (a rooted collective
//              records its root as its peer)
//   message    sends and receives with a rank and a peer, paired in order of
//              start per (comm, source, destination, tag), as MPI's
//              non-overtaking rule pairs them
//   lock epoch an exclusive Win_lock and the next Win_unlock of the same
//              rank, window (comm) and target (peer)
//
// Groups: what each instance, message and lock hand-off implies about time.
// Every span in a group's `ends` ends no earlier than every span in its
// `starts` starts:
//   kAllToAll  one group: starts = ends = every member
//   kRootIn    one group: starts = every member, ends = the root
//   kRootOut   one group: starts = the root, ends = every member
//   kPrefix    one group per member r: starts = the members of rank <= r,
//              ends = {r} (world ranks: the communicator's own are not
//              recorded, so a communicator must keep the world's order)
//   kExclusivePrefix  the same with rank < r (the lowest rank: none)
//   kNeighbor  one group per member r: starts = the members whose ranks r's
//              sources list, ends = {r} (ranks listed but not members are
//              left out; none left: no group)
//   message    starts = the send, ends = the receive
//   lock hand-off  exclusive epochs of one (window, target) hold the lock
//              one after the other. Ordered by the start of their
//              Win_unlock, where one (A) is followed by one of another rank
//              (B): starts = A's Win_unlock, ends = B's call that waited for
//              the lock. A lock is released only once its Win_unlock began.
//              Open MPI 4.1 (osc/sm, osc/rdma) and MPICH 4 (ch4) take the
//              lock in Win_lock, which returns only once the holder let go
//              (tests/mpi_edges.cc: rank 2's Win_lock returns after rank 0's
//              Win_unlock began, under both), and MPICH's Win_unlock may go
//              on well after it released the lock: so Win_unlock's start,
//              not its end, orders the epochs, and the end is B's Win_lock
//              if it returned after A's Win_unlock began. Otherwise (a
//              library that takes the lock lazily, at B's first operation or
//              Win_unlock: MPICH's ch3, Open MPI's osc/pt2pt) the end is B's
//              Win_unlock, which always ends after A's Win_unlock began.
//              There, though, an epoch whose Win_unlock waited for the
//              holder's to begin is ordered first, and that wait is no edge:
//              it shows as the waiting rank's own communication.
// A rooted instance whose root span is absent (not captured, or outside the
// read) has no group.
//
// Example: ranks 0, 1, 2 enter MPI_Bcast (root 1, comm 7, seq 4) at 10, 30
// and 20 ms. They are one instance, members {0, 1, 2}; its group is starts =
// {rank 1}, ends = {ranks 0, 1, 2}: ranks 0 and 2 cannot leave before 30 ms.
// Had they entered MPI_Neighbor_alltoall on a directed ring (rank 0's
// sources {2}, rank 1's {0}, rank 2's {1}), the groups would be per rank:
// rank 0 waits for rank 2 (20 ms), rank 1 for rank 0 (10 ms: no wait),
// rank 2 for rank 1 (30 ms).
//
// More: docs/analysis.md, "The dependency graph".
#ifndef MERIDIAN_QUERY_MPI_SEMANTICS_H_
#define MERIDIAN_QUERY_MPI_SEMANTICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "meridian/v1/span.pb.h"

namespace meridian {

// How a span takes part in cross-rank dependencies (see above).
enum class SpanRole : uint8_t {
  kNone,
  kAllToAll,
  kRootIn,
  kRootOut,
  kPrefix,
  kExclusivePrefix,
  kNeighbor,
  kSend,
  kRecv,
  kWait,
  kLock,
  kUnlock,
  kSync,
};

// How an operation moves data between ranks (see above).
enum class DataFlow : uint8_t {
  kNone,
  kToPeer,
  kExchange,
  kFromPeer,
  kFromRoot,
  kToRoot,
  kAllToAll,
  kAllToAllTotal,
  kPrefix,
  kSynchronize,
};

// The role of an operation, from its category and name.
SpanRole RoleOf(v1::Category category, const std::string& name);
// The data flow of an operation, from its category and name.
DataFlow DataFlowOf(v1::Category category, const std::string& name);
// Whether a flow is a collective's (its instances are expanded together).
bool IsCollective(DataFlow flow);
// Whether an MPI operation is nonblocking (recorded from issue to
// completion): MPI_I* operations and persistent starts (MPI_*_init) with a
// role.
bool IsAsynchronous(v1::Category category, const std::string& name);
// Whether spans of the role form instances (kAllToAll, kRootIn, kRootOut,
// kPrefix, kExclusivePrefix, kNeighbor).
bool IsCollective(SpanRole role);
bool IsMessage(SpanRole role);

// One operation as matching sees it.
struct MpiOp {
  SpanRole role = SpanRole::kNone;
  int32_t rank = -1;
  int32_t peer = -1;  // root, destination or source; -1: none
  int32_t tag = 0;
  uint64_t comm = 0;
  uint64_t seq = 0;  // valid if has_seq
  bool has_seq = false;
  int64_t start = 0;  // orders a channel's messages
  int64_t end = 0;    // a Win_lock's: whether it waited (lock hand-offs)
  // kNeighbor: the world ranks of the rank's in-neighbors, ascending
  // (SourceLists keeps them); read only while MpiMatching is made.
  absl::Span<const int32_t> sources;
};

// SourceLists: neighbor collectives' lists of in-neighbors, each kept once
// (every call of a rank on one communicator lists the same ranks), so that
// a span holds an index, not a list.
class SourceLists {
 public:
  // The index of `sources` once sorted and made unique, added if new; -1
  // for an empty list.
  int32_t Add(std::vector<int32_t> sources);
  // List `index` (empty for -1).
  absl::Span<const int32_t> Get(int32_t index) const {
    return index < 0 ? absl::Span<const int32_t>() : lists_[index];
  }
  int64_t MemoryBytes() const;

 private:
  std::vector<std::vector<int32_t>> lists_;
  absl::flat_hash_map<std::vector<int32_t>, int32_t> index_;
};

class MpiMatching {
 public:
  // Matches operations 0 .. count-1, where op(i) describes operation i;
  // operations that match nothing are left out. op is called once each.
  MpiMatching(int32_t count, absl::FunctionRef<MpiOp(int32_t)> op);

  int64_t instances() const {
    return static_cast<int64_t>(instance_first_.size()) - 1;
  }
  // The operations of instance k, in ascending rank.
  absl::Span<const int32_t> members(int64_t k) const {
    return absl::MakeConstSpan(members_.data() + instance_first_[k],
                               instance_first_[k + 1] - instance_first_[k]);
  }
  // Matched messages: (send, receive), by ascending channel, then start.
  const std::vector<std::pair<int32_t, int32_t>>& messages() const {
    return messages_;
  }
  // Lock hand-offs: (the earlier epoch's Win_unlock, the later epoch's call
  // that waited for it), by ascending (window, target), then time.
  const std::vector<std::pair<int32_t, int32_t>>& lock_handoffs() const {
    return handoffs_;
  }

  // Every operation of `ends` ends no earlier than every one of `starts`
  // starts; `last` is the one of `starts` that started last (the lowest rank
  // of those tied): what the ends waited for.
  struct Group {
    absl::Span<const int32_t> starts;
    absl::Span<const int32_t> ends;
    int32_t last = -1;
  };
  // The groups of instance k (one, or one per member; see above), leaving
  // out those without a start (a rooted instance without its root, an
  // Exscan's lowest rank, a neighbor none of whose sources is a member).
  void ForEachInstanceGroup(int64_t k,
                            absl::FunctionRef<void(const Group&)> visit) const;
  Group MessageGroup(size_t m) const;
  Group LockHandoffGroup(size_t h) const;
  // Every group: the instances', the messages', then the lock hand-offs'.
  void ForEachGroup(absl::FunctionRef<void(const Group&)> visit) const;

  int64_t MemoryBytes() const;

 private:
  // The group of member i (an index into members_) of a per-member
  // instance: its starts are members_[first, first + count) for a prefix,
  // neighbor_starts_[first, first + count) for a neighbor collective.
  struct MemberGroup {
    int64_t first = 0;
    int32_t count = 0;
    int32_t last = -1;  // the operation
  };
  // What matching keeps of an operation of each kind while it runs.
  struct Collective;
  // (comm, source, destination, tag, start, operation)
  using ChannelEnd =
      std::tuple<uint64_t, int32_t, int32_t, int32_t, int64_t, int32_t>;
  struct LockCall;
  void MatchInstances(std::vector<Collective>* collective);
  void BuildMemberGroups(int64_t k, const std::vector<Collective>& collective);
  void MatchMessages(std::vector<ChannelEnd>* sends,
                     std::vector<ChannelEnd>* recvs);
  void MatchLockEpochs(std::vector<LockCall>* calls);

  std::vector<int32_t> members_;
  std::vector<int64_t> instance_first_;  // per instance, and one past
  std::vector<SpanRole> instance_role_;  // the lowest rank's role
  std::vector<int64_t> root_;            // index into members_, or -1
  std::vector<int64_t> last_;            // index into members_
  // Per-member instances only: per member (parallel to members_ from
  // member_group_first_[k] on), its group.
  std::vector<int64_t> member_group_first_;  // per instance, or -1
  std::vector<MemberGroup> member_groups_;
  std::vector<int32_t> neighbor_starts_;
  std::vector<std::pair<int32_t, int32_t>> messages_;
  std::vector<std::pair<int32_t, int32_t>> handoffs_;
};

// MessageOrdinals: MpiMatching's message rule as spans stream in (an
// export): the n-th send and the n-th receive seen of a channel (comm,
// source, destination, tag) are one message. Exact when every rank's spans
// come in start order (Store::Scan) and whole: the whole job or whole
// steps. A time window can cut two ranks' streams at different points and
// misnumber them. Memory: two counters per channel, nothing per message.
//
// Example: rank 0 sends twice to rank 1 (tag 5, comm 7): sends (7, 0, 1,
// 5) ordinals 0 and 1; rank 1's two receives from 0, tag 5, get ordinals
// 0 and 1 of the same channel: two messages.
struct MessageEnd {
  uint64_t comm = 0;
  int32_t source = -1;
  int32_t destination = -1;
  int32_t tag = 0;
  uint64_t ordinal = 0;  // within the channel, counted per direction
  bool send = false;
};

class MessageOrdinals {
 public:
  // The message end a span of `role` on `rank` with `peer` is; nullopt if
  // it is none (not a send or receive, or without a rank or peer).
  std::optional<MessageEnd> Next(SpanRole role, int32_t rank,
                                 std::optional<int32_t> peer,
                                 std::optional<int32_t> tag, uint64_t comm);

 private:
  using Channel = std::tuple<uint64_t, int32_t, int32_t, int32_t>;
  absl::flat_hash_map<Channel, std::pair<uint64_t, uint64_t>> channels_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_MPI_SEMANTICS_H_
