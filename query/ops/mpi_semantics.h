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
//              AllGather, ReduceScatter, AllToAll; c10d (torch.distributed)
//              allreduce, allgather, reduce_scatter, alltoall, barrier
//   kRootIn    the root's result depends on every input: Reduce, Gather(v);
//              c10d reduce, gather
//   kRootOut   every result depends on the root's input: Bcast, Scatter(v);
//              c10d broadcast, scatter
//   kPrefix    rank r's result depends on the inputs of ranks <= r: Scan,
//              Iscan
//   kExclusivePrefix  ... of ranks < r: Exscan, Iexscan
//   kNeighbor  a rank's result depends on its in-neighbors' inputs:
//              Neighbor_* and Ineighbor_*, whose spans list them
//              (MpiOp::sources; the probe's "sources" arg, mpi_args.h)
//   kSend, kRecv  point-to-point (every MPI send mode, MPI_Recv, MPI_Irecv,
//              Mrecv, Imrecv, and the starts of persistent requests, named
//              after their init call: MPI_Send_init..., MPI_Recv_init)
//   kSendRecv  MPI_Sendrecv, MPI_Sendrecv_replace: a send (its peer and
//              tag) and a receive (MpiOp::recv_peer, recv_tag; the probe's
//              "recv_peer" and "recv_tag" args, mpi_args.h) in one call,
//              each matched as a kSend and a kRecv would be; without those
//              args (an older probe's spans) only the send
//   kWait      MPI_Wait, Waitall, Waitany, Waitsome: completes earlier
//              nonblocking operations of its thread
//   kLock, kSharedLock, kUnlock  MPI_Win_lock, MPI_Win_unlock: a
//              passive-target epoch on one target (the peer). RoleOf gives
//              kLock to every Win_lock; its args narrow it (RoleOfSpan,
//              mpi_args.h): an exclusive lock stays kLock, a shared one is
//              kSharedLock, one that takes no lock (MPI_MODE_NOCHECK) or
//              says no type is kNone
//   kLockAll, kUnlockAll  MPI_Win_lock_all, MPI_Win_unlock_all: a shared
//              epoch on every target of the window (no peer)
//   kPost, kStart  MPI_Win_post, MPI_Win_start: open an exposure (access)
//              epoch of generalized active target synchronization towards
//              the group they name (MpiOp::sources; the probe's "group"
//              arg, mpi_args.h)
//   kComplete, kWinWait  MPI_Win_complete, MPI_Win_wait: close them
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
// I- forms as their blocking ones. c10d operations (whose peers and roots
// are world ranks) as their MPI namesakes; alltoall and reduce_scatter
// record the bytes of all their inputs (kAllToAllTotal). Receives (counted
// at their sends), waits, neighbor collectives and NCCL operations (whose
// peers and roots are communicator ranks) have none.
//
// Matching (MpiMatching):
//   instance   the spans of a collective role with equal (comm, seq), seq
//              set and comm nonzero; members in ascending rank; the root is
//              the member whose rank equals its peer (a rooted collective
//              records its root as its peer)
//   message    sends and receives with a rank and a peer, paired in order of
//              start per (comm, source, destination, tag), as MPI's
//              non-overtaking rule pairs them; a Sendrecv is a send and a
//              receive there, so it may be in two messages (the send of
//              one, the receive of the other)
//   lock epoch a Win_lock (exclusive or shared) and the next Win_unlock
//              of the same rank, window (comm) and target (peer); or a
//              Win_lock_all and the next Win_unlock_all of the same rank and
//              window, a shared epoch on each of the window's targets
//   exposure   a Win_post and the next Win_wait of the same rank and window
//              (with no Win_post between); an access epoch is a Win_start
//              and the next Win_complete likewise. On a window, the k-th
//              Win_post of target T whose group lists origin O matches the
//              k-th Win_start of O whose group lists T (MPI has every
//              process post and start in an order that makes this so).
//              From a rank's first Win_post (Win_start) on a window that
//              lists no group (the probe lists none past 256 members) on,
//              its Win_posts (Win_starts) there match nothing: what they
//              counted is unknown.
//
// Groups: what each instance, message, lock hand-off and exposure epoch
// implies about time.
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
//   message    starts = the send, ends = the receive (a Sendrecv ends no
//              earlier than the send it received started)
//   lock hand-off  on one (window, target), an exclusive epoch excludes
//              every other epoch, exclusive or shared (a Win_lock_all's
//              counts on each target of its window); shared epochs never
//              exclude, or order, each other. Ordered by the start of their
//              Win_unlock (Win_unlock_all), an epoch B holds the lock after
//              the holders before it: an exclusive B after the shared
//              epochs since the exclusive epoch before it, or after that
//              exclusive epoch if no shared one came between; a shared B
//              after the exclusive epoch before it. Each such holder A of
//              another rank hands the lock to B's call that waited for it:
//              one group per such call, starts = the holders' Win_unlock
//              (_all), ends = the call. That is the order they held it in:
//              a lock is released only once its Win_unlock began, so a B
//              whose Win_unlock began after A's cannot have held the lock
//              before A did, nor (the two excluding each other) while A did.
//              Open MPI 4.1 (osc/sm, osc/rdma) and MPICH 4 (ch4) take the
//              lock in Win_lock and Win_lock_all, which return only once
//              the holder let go (tests/mpi_edges.cc, under both: rank 2's
//              Win_lock returns after rank 0's Win_unlock began, rank 0
//              holding it exclusive or shared, and so does a Win_lock_all
//              of rank 2 after rank 0's exclusive epoch), and MPICH's
//              Win_unlock may go on well after it released the lock: so
//              Win_unlock's start, not its end, orders the epochs, and the
//              call is B's Win_lock (Win_lock_all) if it returned after A's
//              Win_unlock began. Otherwise (a library that takes the lock
//              lazily, at B's first operation or Win_unlock: MPICH's ch3,
//              Open MPI's osc/pt2pt) it is B's Win_unlock(_all), which
//              always ends after A's Win_unlock began. There, though, an
//              epoch whose Win_unlock waited for the holder's to begin is
//              ordered first, and that wait is no edge: it shows as the
//              waiting rank's own communication. The probe records no
//              assert of Win_lock_all, so one with MPI_MODE_NOCHECK (no
//              lock taken) counts as shared: its hand-offs still hold in
//              time, since a correct program keeps such an epoch apart from
//              exclusive ones.
//   exposure   one group per Win_wait of a target T: starts = the
//              Win_complete of each access epoch matched with the exposure
//              epoch it closes, ends = the Win_wait. MPI_Win_wait returns
//              only once every matched origin called MPI_Win_complete (the
//              standard says so). The other way, one group per Win_start of
//              an origin O: starts = the Win_post of each matched exposure
//              epoch that began before the Win_start returned, ends = the
//              Win_start. The standard lets Win_start return before the
//              post (the data then wait elsewhere); Open MPI 4.1 and MPICH 4
//              (ch4) wait in it until every matched post arrived
//              (tests/mpi_edges.cc pscw: rank 0's Win_start returns after
//              rank 3's late Win_post began, under both). A Win_start that
//              returned before a matched post began is no edge: a library
//              that defers the wait, to an operation or Win_complete, shows
//              it as the origin's own communication.
// A rooted instance whose root span is absent (not captured, or outside the
// read) has no group.
//
// Example: ranks 0, 1, 2 enter MPI_Bcast (root 1, comm 7, seq 4) at 10, 30
// and 20 ms. They are one instance, members {0, 1, 2}; its group is starts =
// {rank 1}, ends = {ranks 0, 1, 2}: ranks 0 and 2 cannot leave before 30 ms.
// Had they entered MPI_Neighbor_alltoall on a directed ring (rank 0's
// sources {2}, rank 1's {0}, rank 2's {1}), the groups would be per rank:
// rank 0 waits for rank 2 (20 ms), rank 1 for rank 0 (10 ms: no wait),
// rank 2 for rank 1 (30 ms). One-sided: ranks 0 and 1 hold shared locks on
// rank 3's memory and begin their Win_unlock at 50 and 100 ms; rank 2's
// exclusive Win_lock, called at 5 ms, returns at 101 ms. Its group is
// starts = {both unlocks}, ends = {rank 2's Win_lock}: it waited for rank
// 1's (100 ms). Had rank 3 posted to ranks 0 to 2, which called
// Win_complete at 10, 80 and 20 ms, rank 3's Win_wait would end after 80 ms.
//
// More: docs/analysis.md, "The dependency graph".
#ifndef MERIDIAN_QUERY_OPS_MPI_SEMANTICS_H_
#define MERIDIAN_QUERY_OPS_MPI_SEMANTICS_H_

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
  kSharedLock,
  kUnlock,
  kLockAll,
  kUnlockAll,
  kPost,
  kStart,
  kComplete,
  kWinWait,
  kSync,
  kSendRecv,
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
// The MPI operations the role table names ("MPI_Barrier", ...): each one
// the probe records (capture/probe/mpi_ops.h; mpi_semantics_test).
std::vector<std::string> MpiOperationsWithRoles();
// The data flow of an operation, from its category and name.
DataFlow DataFlowOf(v1::Category category, const std::string& name);
// Whether a flow is a collective's (its instances are expanded together).
bool IsCollective(DataFlow flow);
// Whether an operation sets up or tears down the job's communication
// rather than communicates: MPI_Init, MPI_Init_thread, MPI_Finalize. The
// critical path gives their time its own class (TIME_CLASS_SETUP), steps
// count it apart, and `meridian stats` bounds the profile by them, as
// mpitrace does: no analysis counts it as communication.
bool IsSetUp(v1::Category category, const std::string& name);
// Whether an MPI operation is nonblocking (recorded from issue to
// completion): MPI_I* operations and persistent starts (MPI_*_init) with a
// role.
bool IsAsynchronous(v1::Category category, const std::string& name);
// Whether spans of the role form instances (kAllToAll, kRootIn, kRootOut,
// kPrefix, kExclusivePrefix, kNeighbor).
bool IsCollective(SpanRole role);
// kSend, kRecv or kSendRecv.
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
  // kNeighbor: the world ranks of the rank's in-neighbors; kPost, kStart:
  // of the group it names. Ascending (SourceLists keeps them); read only
  // while MpiMatching is made.
  absl::Span<const int32_t> sources;
  // kSendRecv: its receive's source (-1: none known) and tag.
  int32_t recv_peer = -1;
  int32_t recv_tag = 0;
};

// Whether an operation is, or holds, a send that can match (a rank and a
// peer), and a receive (a rank and a source).
bool Sends(const MpiOp& op);
bool Receives(const MpiOp& op);

// A Sendrecv's receive: the world rank it received from and the tag.
struct ReceiveHalf {
  int32_t peer = -1;
  int32_t tag = 0;
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
  // Lock hand-offs: (the earlier epoch's Win_unlock(_all), the later
  // epoch's call that waited for it), by ascending (window, target), then
  // time (Win_lock_all epochs: under each target that has an exclusive
  // epoch).
  const std::vector<std::pair<int32_t, int32_t>>& lock_handoffs() const {
    return handoffs_;
  }
  // Matched access and exposure epochs: (the origin's Win_complete, the
  // target's Win_wait), ascending.
  const std::vector<std::pair<int32_t, int32_t>>& epoch_completions() const {
    return completions_;
  }
  // Matched exposure and access epochs whose Win_start returned after the
  // Win_post began: (the target's Win_post, the origin's Win_start),
  // ascending.
  const std::vector<std::pair<int32_t, int32_t>>& epoch_posts() const {
    return posts_;
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
  // One group per call that waited for other ranks' epochs: a lock
  // hand-off's acquiring call (ends) with every Win_unlock(_all) handed
  // over to it, a Win_wait with its matched Win_completes, or a Win_start
  // with its matched Win_posts (starts). Ascending by that call.
  size_t epoch_groups() const { return epoch_groups_.size(); }
  Group EpochGroup(size_t g) const;
  // Every group: the instances', the messages', then the epochs'.
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
  struct EpochCall;
  // An edge of an epoch group being built: (end, start's start time,
  // start).
  using EpochEdge = std::tuple<int32_t, int64_t, int32_t>;
  // The group of call `end` over epoch_starts_[first, first + count).
  struct EpochGroupEntry {
    int64_t first = 0;
    int32_t count = 0;
    int32_t end = -1;
    int32_t last = -1;
  };
  // Sorts `collective` by Collective's operator<.
  static void SortByInstance(std::vector<Collective>* collective);
  void MatchInstances(std::vector<Collective>* collective);
  void BuildMemberGroups(int64_t k, const std::vector<Collective>& collective);
  void MatchMessages(std::vector<ChannelEnd>* sends,
                     std::vector<ChannelEnd>* recvs);
  void MatchLockEpochs(std::vector<LockCall>* calls,
                       std::vector<EpochEdge>* edges);
  void MatchActiveTarget(std::vector<EpochCall>* calls,
                         std::vector<EpochEdge>* edges);
  void BuildEpochGroups(std::vector<EpochEdge>* edges);

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
  std::vector<std::pair<int32_t, int32_t>> completions_;
  std::vector<std::pair<int32_t, int32_t>> posts_;
  std::vector<int32_t> epoch_starts_;
  std::vector<EpochGroupEntry> epoch_groups_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_OPS_MPI_SEMANTICS_H_
