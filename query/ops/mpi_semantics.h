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
//   kSend, kRecv  point-to-point (every MPI send mode, MPI_Recv, MPI_Irecv,
//              Mrecv, Imrecv, and the starts of persistent requests, named
//              after their init call: MPI_Send_init..., MPI_Recv_init)
//   kWait      MPI_Wait, Waitall, Waitany, Waitsome: completes earlier
//              nonblocking operations of its thread
//   kSync      a CUDA synchronisation: waits for the GPU
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
//
// Groups: what each instance and message implies about time. Every span in a
// group's `ends` ends no earlier than every span in its `starts` starts:
//   kAllToAll  starts = ends = every member
//   kRootIn    starts = every member, ends = the root
//   kRootOut   starts = the root, ends = every member
//   message    starts = the send, ends = the receive
// A rooted instance whose root span is absent (not captured, or outside the
// read) has no group.
//
// Example: ranks 0, 1, 2 enter MPI_Bcast (root 1, comm 7, seq 4) at 10, 30
// and 20 ms. They are one instance, members {0, 1, 2}; its group is starts =
// {rank 1}, ends = {ranks 0, 1, 2}: ranks 0 and 2 cannot leave before 30 ms.
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
  kSend,
  kRecv,
  kWait,
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

  // Every operation of `ends` ends no earlier than every one of `starts`
  // starts; `last` is the one of `starts` that started last (the lowest rank
  // of those tied): what the ends waited for. Both empty: no group (a
  // rooted instance without its root).
  struct Group {
    absl::Span<const int32_t> starts;
    absl::Span<const int32_t> ends;
    int32_t last = -1;
  };
  Group InstanceGroup(int64_t k) const;
  Group MessageGroup(size_t m) const;
  // Every nonempty group: the instances', then the messages'.
  void ForEachGroup(absl::FunctionRef<void(const Group&)> visit) const;

  int64_t MemoryBytes() const;

 private:
  std::vector<int32_t> members_;
  std::vector<int64_t> instance_first_;  // per instance, and one past
  std::vector<SpanRole> instance_role_;  // the lowest rank's role
  std::vector<int64_t> root_;            // index into members_, or -1
  std::vector<int64_t> last_;            // index into members_
  std::vector<std::pair<int32_t, int32_t>> messages_;
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
