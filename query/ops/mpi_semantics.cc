#include "query/ops/mpi_semantics.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "query/ops/dense_key_sort.h"

namespace meridian {
namespace {

// What MPI_* operations are: their role in MPI's order and how they move
// data (DataFlow). One table, so that a send is a send for both.
struct MpiKind {
  SpanRole role = SpanRole::kNone;
  DataFlow flow = DataFlow::kNone;
};

using R = SpanRole;
using F = DataFlow;

// The MPI operations that take part in matching, and their data flow
// (mpi_semantics.h): every name one that capture/probe/mpi_ops.h records
// (mpi_semantics_test holds them to it).
constexpr struct {
  const char* name;
  SpanRole role;
  DataFlow flow;
} kMpiKinds[] = {
    {"MPI_Barrier", R::kAllToAll, F::kSynchronize},
    {"MPI_Allreduce", R::kAllToAll, F::kAllToAll},
    {"MPI_Allgather", R::kAllToAll, F::kAllToAll},
    {"MPI_Allgatherv", R::kAllToAll, F::kAllToAllTotal},
    {"MPI_Alltoall", R::kAllToAll, F::kAllToAll},
    {"MPI_Alltoallv", R::kAllToAll, F::kAllToAllTotal},
    {"MPI_Alltoallw", R::kAllToAll, F::kAllToAllTotal},
    {"MPI_Reduce_scatter", R::kAllToAll, F::kAllToAllTotal},
    {"MPI_Reduce_scatter_block", R::kAllToAll, F::kAllToAll},
    {"MPI_Scan", R::kPrefix, F::kPrefix},
    {"MPI_Exscan", R::kExclusivePrefix, F::kPrefix},
    {"MPI_Ibarrier", R::kAllToAll, F::kSynchronize},
    {"MPI_Iallreduce", R::kAllToAll, F::kAllToAll},
    {"MPI_Iallgather", R::kAllToAll, F::kAllToAll},
    {"MPI_Iallgatherv", R::kAllToAll, F::kAllToAllTotal},
    {"MPI_Ialltoall", R::kAllToAll, F::kAllToAll},
    {"MPI_Ialltoallv", R::kAllToAll, F::kAllToAllTotal},
    {"MPI_Ialltoallw", R::kAllToAll, F::kAllToAllTotal},
    {"MPI_Ireduce_scatter", R::kAllToAll, F::kAllToAllTotal},
    {"MPI_Ireduce_scatter_block", R::kAllToAll, F::kAllToAll},
    {"MPI_Iscan", R::kPrefix, F::kPrefix},
    {"MPI_Iexscan", R::kExclusivePrefix, F::kPrefix},
    {"MPI_Neighbor_allgather", R::kNeighbor, F::kNone},
    {"MPI_Neighbor_allgatherv", R::kNeighbor, F::kNone},
    {"MPI_Neighbor_alltoall", R::kNeighbor, F::kNone},
    {"MPI_Neighbor_alltoallv", R::kNeighbor, F::kNone},
    {"MPI_Neighbor_alltoallw", R::kNeighbor, F::kNone},
    {"MPI_Ineighbor_allgather", R::kNeighbor, F::kNone},
    {"MPI_Ineighbor_allgatherv", R::kNeighbor, F::kNone},
    {"MPI_Ineighbor_alltoall", R::kNeighbor, F::kNone},
    {"MPI_Ineighbor_alltoallv", R::kNeighbor, F::kNone},
    {"MPI_Ineighbor_alltoallw", R::kNeighbor, F::kNone},
    {"MPI_Reduce", R::kRootIn, F::kToRoot},
    {"MPI_Gather", R::kRootIn, F::kToRoot},
    {"MPI_Gatherv", R::kRootIn, F::kToRoot},
    {"MPI_Ireduce", R::kRootIn, F::kToRoot},
    {"MPI_Igather", R::kRootIn, F::kToRoot},
    {"MPI_Igatherv", R::kRootIn, F::kToRoot},
    {"MPI_Bcast", R::kRootOut, F::kFromRoot},
    {"MPI_Scatter", R::kRootOut, F::kFromRoot},
    {"MPI_Scatterv", R::kRootOut, F::kFromRoot},
    {"MPI_Ibcast", R::kRootOut, F::kFromRoot},
    {"MPI_Iscatter", R::kRootOut, F::kFromRoot},
    {"MPI_Iscatterv", R::kRootOut, F::kFromRoot},
    {"MPI_Send", R::kSend, F::kToPeer},
    {"MPI_Ssend", R::kSend, F::kToPeer},
    {"MPI_Rsend", R::kSend, F::kToPeer},
    {"MPI_Bsend", R::kSend, F::kToPeer},
    {"MPI_Isend", R::kSend, F::kToPeer},
    {"MPI_Issend", R::kSend, F::kToPeer},
    {"MPI_Irsend", R::kSend, F::kToPeer},
    {"MPI_Ibsend", R::kSend, F::kToPeer},
    {"MPI_Send_init", R::kSend, F::kToPeer},
    {"MPI_Ssend_init", R::kSend, F::kToPeer},
    {"MPI_Rsend_init", R::kSend, F::kToPeer},
    {"MPI_Bsend_init", R::kSend, F::kToPeer},
    {"MPI_Sendrecv", R::kSendRecv, F::kExchange},
    {"MPI_Sendrecv_replace", R::kSendRecv, F::kExchange},
    {"MPI_Put", R::kNone, F::kToPeer},
    {"MPI_Rput", R::kNone, F::kToPeer},
    {"MPI_Accumulate", R::kNone, F::kToPeer},
    {"MPI_Raccumulate", R::kNone, F::kToPeer},
    {"MPI_Get_accumulate", R::kNone, F::kToPeer},
    {"MPI_Rget_accumulate", R::kNone, F::kToPeer},
    {"MPI_Fetch_and_op", R::kNone, F::kToPeer},
    {"MPI_Compare_and_swap", R::kNone, F::kToPeer},
    {"MPI_Get", R::kNone, F::kFromPeer},
    {"MPI_Rget", R::kNone, F::kFromPeer},
    {"MPI_Recv", R::kRecv, F::kNone},
    {"MPI_Irecv", R::kRecv, F::kNone},
    {"MPI_Recv_init", R::kRecv, F::kNone},
    {"MPI_Psend_init", R::kSend, F::kToPeer},
    {"MPI_Precv_init", R::kRecv, F::kNone},
    {"MPI_Mrecv", R::kRecv, F::kNone},
    {"MPI_Imrecv", R::kRecv, F::kNone},
    {"MPI_Win_fence", R::kAllToAll, F::kNone},
    {"MPI_Win_lock", R::kLock, F::kNone},
    {"MPI_Win_unlock", R::kUnlock, F::kNone},
    {"MPI_Win_lock_all", R::kLockAll, F::kNone},
    {"MPI_Win_unlock_all", R::kUnlockAll, F::kNone},
    {"MPI_Win_post", R::kPost, F::kNone},
    {"MPI_Win_start", R::kStart, F::kNone},
    {"MPI_Win_complete", R::kComplete, F::kNone},
    {"MPI_Win_wait", R::kWinWait, F::kNone},
    {"MPI_Wait", R::kWait, F::kNone},
    {"MPI_Waitall", R::kWait, F::kNone},
    {"MPI_Waitany", R::kWait, F::kNone},
    {"MPI_Waitsome", R::kWait, F::kNone},
};

const MpiKind& MpiKindOf(const std::string& name) {
  static const auto* const kinds = [] {
    auto* map = new absl::flat_hash_map<std::string, MpiKind>;
    for (const auto& k : kMpiKinds)
      map->emplace(k.name, MpiKind{k.role, k.flow});
    return map;
  }();
  static const MpiKind kNone;
  auto it = kinds->find(name);
  if (it == kinds->end() && absl::EndsWith(name, "_init")) {
    // A start of an MPI-4 persistent collective (MPI_Allreduce_init...) is
    // an instance of the collective itself.
    it = kinds->find(name.substr(0, name.size() - 5));
  }
  return it == kinds->end() ? kNone : it->second;
}

}  // namespace

std::vector<std::string> MpiOperationsWithRoles() {
  std::vector<std::string> names;
  for (const auto& k : kMpiKinds) names.push_back(k.name);
  return names;
}

namespace {

// NCCL operations by their collective's name, with or without "nccl".
SpanRole NcclRole(const std::string& name) {
  std::string op = absl::AsciiStrToLower(name);
  if (absl::StartsWith(op, "nccl")) op = op.substr(4);
  if (op == "allreduce" || op == "allgather" || op == "reducescatter" ||
      op == "alltoall") {
    return SpanRole::kAllToAll;
  }
  if (op == "reduce") return SpanRole::kRootIn;
  if (op == "broadcast" || op == "bcast") return SpanRole::kRootOut;
  if (op == "send") return SpanRole::kSend;
  if (op == "recv") return SpanRole::kRecv;
  return SpanRole::kNone;
}

// torch.distributed operations as capture/torch names them (the c10d op's
// name without its namespace and trailing underscore).
struct C10dKind {
  const char* name;
  SpanRole role;
  DataFlow flow;
};
constexpr C10dKind kC10dKinds[] = {
    {"allreduce", SpanRole::kAllToAll, DataFlow::kAllToAll},
    {"allgather", SpanRole::kAllToAll, DataFlow::kAllToAll},
    {"reduce_scatter", SpanRole::kAllToAll, DataFlow::kAllToAllTotal},
    {"alltoall", SpanRole::kAllToAll, DataFlow::kAllToAllTotal},
    {"barrier", SpanRole::kAllToAll, DataFlow::kSynchronize},
    {"reduce", SpanRole::kRootIn, DataFlow::kToRoot},
    {"gather", SpanRole::kRootIn, DataFlow::kToRoot},
    {"broadcast", SpanRole::kRootOut, DataFlow::kFromRoot},
    {"scatter", SpanRole::kRootOut, DataFlow::kFromRoot},
    {"send", SpanRole::kSend, DataFlow::kToPeer},
    {"recv", SpanRole::kRecv, DataFlow::kNone},
};

const C10dKind* C10dKindOf(const std::string& name) {
  for (const C10dKind& kind : kC10dKinds) {
    if (name == kind.name) return &kind;
  }
  return nullptr;
}

template <typename T>
int64_t Bytes(const std::vector<T>& v) {
  return static_cast<int64_t>(v.capacity() * sizeof(T));
}

}  // namespace

SpanRole RoleOf(v1::Category category, const std::string& name) {
  switch (category) {
    case v1::CATEGORY_MPI:
      return MpiKindOf(name).role;
    case v1::CATEGORY_NCCL:
      return NcclRole(name);
    case v1::CATEGORY_C10D: {
      const C10dKind* kind = C10dKindOf(name);
      return kind == nullptr ? SpanRole::kNone : kind->role;
    }
    case v1::CATEGORY_CUDA_SYNC:
      return SpanRole::kSync;
    case v1::CATEGORY_CUDA_RUNTIME:
      return absl::StrContains(name, "Synchronize") ? SpanRole::kSync
                                                    : SpanRole::kNone;
    default:
      return SpanRole::kNone;
  }
}

DataFlow DataFlowOf(v1::Category category, const std::string& name) {
  if (category == v1::CATEGORY_C10D) {
    const C10dKind* kind = C10dKindOf(name);
    return kind == nullptr ? DataFlow::kNone : kind->flow;
  }
  return category == v1::CATEGORY_MPI ? MpiKindOf(name).flow : DataFlow::kNone;
}

bool IsSetUp(v1::Category category, const std::string& name) {
  return category == v1::CATEGORY_MPI &&
         (name == "MPI_Init" || name == "MPI_Init_thread" ||
          name == "MPI_Finalize");
}

bool IsAsynchronous(v1::Category category, const std::string& name) {
  // The starts of persistent requests are recorded under their init call's
  // name, to completion too.
  if (category != v1::CATEGORY_MPI ||
      !(absl::StartsWith(name, "MPI_I") || absl::EndsWith(name, "_init"))) {
    return false;
  }
  const SpanRole role = RoleOf(category, name);
  return role != SpanRole::kNone && role != SpanRole::kWait;
}

bool IsCollective(SpanRole role) {
  return role == SpanRole::kAllToAll || role == SpanRole::kRootIn ||
         role == SpanRole::kRootOut || role == SpanRole::kPrefix ||
         role == SpanRole::kExclusivePrefix || role == SpanRole::kNeighbor;
}

bool IsCollective(DataFlow flow) {
  return flow == DataFlow::kFromRoot || flow == DataFlow::kToRoot ||
         flow == DataFlow::kAllToAll || flow == DataFlow::kAllToAllTotal ||
         flow == DataFlow::kPrefix || flow == DataFlow::kSynchronize;
}

bool IsMessage(SpanRole role) {
  return role == SpanRole::kSend || role == SpanRole::kRecv ||
         role == SpanRole::kSendRecv;
}

bool Sends(const MpiOp& o) {
  return (o.role == SpanRole::kSend || o.role == SpanRole::kSendRecv) &&
         o.rank >= 0 && o.peer >= 0;
}

bool Receives(const MpiOp& o) {
  return (o.role == SpanRole::kRecv && o.rank >= 0 && o.peer >= 0) ||
         (o.role == SpanRole::kSendRecv && o.rank >= 0 && o.recv_peer >= 0);
}

int32_t SourceLists::Add(std::vector<int32_t> sources) {
  std::sort(sources.begin(), sources.end());
  sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
  if (sources.empty()) return -1;
  auto [it, added] =
      index_.try_emplace(sources, static_cast<int32_t>(lists_.size()));
  if (added) lists_.push_back(std::move(sources));
  return it->second;
}

int64_t SourceLists::MemoryBytes() const {
  int64_t bytes = Bytes(lists_);
  // Each list is held twice: in lists_ and as a key of index_.
  for (const auto& list : lists_) bytes += 2 * Bytes(list);
  using Slot = std::pair<const std::vector<int32_t>, int32_t>;
  return bytes + static_cast<int64_t>(index_.capacity() * (sizeof(Slot) + 1));
}

struct MpiMatching::Collective {
  uint64_t comm;
  uint64_t seq;
  int32_t rank;
  int32_t index;
  int32_t peer;
  SpanRole role;
  int64_t start;
  absl::Span<const int32_t> sources;
  bool operator<(const Collective& o) const {
    return std::tie(comm, seq, rank, index) <
           std::tie(o.comm, o.seq, o.rank, o.index);
  }
};

struct MpiMatching::LockCall {
  uint64_t comm;  // the window
  int32_t rank;
  int32_t target;  // -1: every target (Win_lock_all, Win_unlock_all)
  int64_t start;
  int64_t end;
  bool unlock;
  bool exclusive;
  int32_t index;
  bool operator<(const LockCall& o) const {
    return std::tie(comm, rank, target, start, unlock, index) <
           std::tie(o.comm, o.rank, o.target, o.start, o.unlock, o.index);
  }
};

struct MpiMatching::EpochCall {
  uint64_t comm;  // the window
  int32_t rank;
  int64_t start;
  int64_t end;
  SpanRole role;  // kPost, kStart, kComplete or kWinWait
  int32_t index;
  absl::Span<const int32_t> group;  // kPost, kStart
  bool operator<(const EpochCall& o) const {
    return std::tie(comm, rank, start, index) <
           std::tie(o.comm, o.rank, o.start, o.index);
  }
};

MpiMatching::MpiMatching(int32_t count, absl::FunctionRef<MpiOp(int32_t)> op) {
  std::vector<Collective> collective;
  std::vector<ChannelEnd> sends, recvs;
  std::vector<LockCall> locks;
  std::vector<EpochCall> active;
  // Room for the collectives and messages first (most of a job's), so that
  // neither grows as it is filled.
  size_t collectives = 0, messages = 0;
  for (int32_t i = 0; i < count; ++i) {
    const MpiOp o = op(i);
    collectives += IsCollective(o.role) && o.has_seq && o.comm != 0;
    messages += IsMessage(o.role);
  }
  collective.reserve(collectives);
  sends.reserve(messages);
  recvs.reserve(messages);
  for (int32_t i = 0; i < count; ++i) {
    const MpiOp o = op(i);
    if (IsCollective(o.role) && o.has_seq && o.comm != 0) {
      collective.push_back(
          {o.comm, o.seq, o.rank, i, o.peer, o.role, o.start, o.sources});
    } else if (IsMessage(o.role)) {
      if (Sends(o))
        sends.emplace_back(o.comm, o.rank, o.peer, o.tag, o.start, i);
      if (o.role == SpanRole::kSendRecv && Receives(o)) {
        recvs.emplace_back(o.comm, o.recv_peer, o.rank, o.recv_tag, o.start, i);
      } else if (Receives(o)) {
        recvs.emplace_back(o.comm, o.peer, o.rank, o.tag, o.start, i);
      }
    } else if ((o.role == SpanRole::kLock || o.role == SpanRole::kSharedLock ||
                o.role == SpanRole::kUnlock) &&
               o.rank >= 0 && o.peer >= 0 && o.comm != 0) {
      locks.push_back({o.comm, o.rank, o.peer, o.start, o.end,
                       o.role == SpanRole::kUnlock, o.role == SpanRole::kLock,
                       i});
    } else if ((o.role == SpanRole::kLockAll ||
                o.role == SpanRole::kUnlockAll) &&
               o.rank >= 0 && o.comm != 0) {
      locks.push_back({o.comm, o.rank, -1, o.start, o.end,
                       o.role == SpanRole::kUnlockAll, false, i});
    } else if ((o.role == SpanRole::kPost || o.role == SpanRole::kStart ||
                o.role == SpanRole::kComplete ||
                o.role == SpanRole::kWinWait) &&
               o.rank >= 0 && o.comm != 0) {
      active.push_back({o.comm, o.rank, o.start, o.end, o.role, i, o.sources});
    }
  }
  MatchInstances(&collective);
  MatchMessages(&sends, &recvs);
  std::vector<EpochEdge> edges;
  MatchLockEpochs(&locks, &edges);
  MatchActiveTarget(&active, &edges);
  BuildEpochGroups(&edges);
}

void MpiMatching::SortByInstance(std::vector<Collective>* collective) {
  std::vector<Collective>& c = *collective;
  // The evidence comes in start order, and an instance's members start
  // close together: most are a few places from their own. By insertion,
  // while that moves each at most kMoves places on average.
  constexpr size_t kMoves = 8;
  size_t budget = kMoves * c.size();
  size_t i = 1;
  for (; i < c.size() && budget > 0; ++i) {
    if (!(c[i] < c[i - 1])) continue;
    const Collective x = c[i];
    size_t j = i;
    do {
      c[j] = c[j - 1];
      --j;
    } while (j > 0 && x < c[j - 1]);
    c[j] = x;
    budget -= std::min(budget, i - j);
  }
  // Far from sorted (many ranks' members interleaved): sorted whole, by
  // counting where the keys are dense.
  if (i < c.size() && !SortByDenseKeys(collective)) {
    std::sort(c.begin(), c.end());
  }
}

void MpiMatching::MatchInstances(std::vector<Collective>* operations) {
  std::vector<Collective>& collective = *operations;
  SortByInstance(&collective);
  members_.reserve(collective.size());
  for (size_t i = 0; i < collective.size(); ++i) {
    const Collective& m = collective[i];
    if (i == 0 || m.comm != collective[i - 1].comm ||
        m.seq != collective[i - 1].seq) {
      instance_first_.push_back(static_cast<int64_t>(i));
      instance_role_.push_back(m.role);
      root_.push_back(-1);
      last_.push_back(static_cast<int64_t>(i));
      member_group_first_.push_back(-1);
    }
    if (m.start > collective[last_.back()].start) {
      last_.back() = static_cast<int64_t>(i);
    }
    if (root_.back() < 0 && m.rank == m.peer) {
      root_.back() = static_cast<int64_t>(i);
    }
    members_.push_back(m.index);
  }
  instance_first_.push_back(static_cast<int64_t>(collective.size()));
  for (int64_t k = 0; k < instances(); ++k) {
    const SpanRole role = instance_role_[k];
    if (role == SpanRole::kPrefix || role == SpanRole::kExclusivePrefix ||
        role == SpanRole::kNeighbor) {
      BuildMemberGroups(k, collective);
    }
  }
}

void MpiMatching::BuildMemberGroups(int64_t k,
                                    const std::vector<Collective>& collective) {
  const int64_t first = instance_first_[k];
  const int64_t end = instance_first_[k + 1];
  member_group_first_[k] = static_cast<int64_t>(member_groups_.size());
  // `last` becomes op if op started later (ties: the first seen, the lowest
  // rank, since members and sources ascend).
  auto later = [&collective](int64_t op, int64_t* last) {
    if (*last < 0 || collective[op].start > collective[*last].start) {
      *last = op;
    }
  };
  if (instance_role_[k] == SpanRole::kNeighbor) {
    auto rank_less = [](const Collective& c, int32_t rank) {
      return c.rank < rank;
    };
    for (int64_t i = first; i < end; ++i) {
      MemberGroup group;
      group.first = static_cast<int64_t>(neighbor_starts_.size());
      int64_t last = -1;
      for (int32_t source : collective[i].sources) {
        auto it = std::lower_bound(collective.begin() + first,
                                   collective.begin() + end, source, rank_less);
        if (it == collective.begin() + end || it->rank != source) continue;
        neighbor_starts_.push_back(it->index);
        later(it - collective.begin(), &last);
      }
      group.count = static_cast<int32_t>(
          static_cast<int64_t>(neighbor_starts_.size()) - group.first);
      group.last = last < 0 ? -1 : collective[last].index;
      member_groups_.push_back(group);
    }
    return;
  }
  // A prefix: member i's starts are the members up to it (members_[first,
  // i], or [first, i) for Exscan).
  const bool exclusive = instance_role_[k] == SpanRole::kExclusivePrefix;
  int64_t last = -1;
  for (int64_t i = first; i < end; ++i) {
    if (!exclusive) later(i, &last);
    const int64_t count = exclusive ? i - first : i - first + 1;
    member_groups_.push_back({first, static_cast<int32_t>(count),
                              last < 0 ? -1 : collective[last].index});
    if (exclusive) later(i, &last);
  }
}

void MpiMatching::MatchMessages(std::vector<ChannelEnd>* sends,
                                std::vector<ChannelEnd>* recvs) {
  std::sort(sends->begin(), sends->end());
  std::sort(recvs->begin(), recvs->end());
  auto channel = [](const ChannelEnd& e) {
    return std::make_tuple(std::get<0>(e), std::get<1>(e), std::get<2>(e),
                           std::get<3>(e));
  };
  size_t a = 0, b = 0;
  while (a < sends->size() && b < recvs->size()) {
    if (channel((*sends)[a]) < channel((*recvs)[b])) {
      ++a;
    } else if (channel((*recvs)[b]) < channel((*sends)[a])) {
      ++b;
    } else {
      messages_.emplace_back(std::get<5>((*sends)[a++]),
                             std::get<5>((*recvs)[b++]));
    }
  }
}

void MpiMatching::MatchLockEpochs(std::vector<LockCall>* calls,
                                  std::vector<EpochEdge>* edges) {
  // Per (window, rank, target) in order of start, an epoch is a Win_lock
  // and the Win_unlock after it (target -1: a Win_lock_all and the
  // Win_unlock_all after it); an unlock without one is an epoch whose
  // Win_lock took no lock (kNone).
  std::sort(calls->begin(), calls->end());
  struct Epoch {
    uint64_t comm;
    int32_t target;
    int64_t unlock_start;
    int32_t rank;
    int32_t lock;
    int32_t unlock;
    int64_t lock_end;
    bool exclusive;
  };
  std::vector<Epoch> epochs;
  const LockCall* open = nullptr;
  for (const LockCall& c : *calls) {
    if (open != nullptr && std::tie(open->comm, open->rank, open->target) !=
                               std::tie(c.comm, c.rank, c.target)) {
      open = nullptr;
    }
    if (!c.unlock) {
      open = &c;
    } else if (open != nullptr) {
      epochs.push_back({c.comm, c.target, c.start, c.rank, open->index, c.index,
                        open->end, open->exclusive});
      open = nullptr;
    }
  }
  // Epochs of one (window, target) took the lock in the order their
  // Win_unlock began (the header says why); a window's Win_lock_all epochs
  // (target -1) sort first, and count on each of its targets.
  auto order = [](const Epoch& a, const Epoch& b) {
    return std::tie(a.comm, a.target, a.unlock_start, a.rank, a.unlock) <
           std::tie(b.comm, b.target, b.unlock_start, b.rank, b.unlock);
  };
  std::sort(epochs.begin(), epochs.end(), order);
  // B waited for A: the header says why B's Win_lock, or else its
  // Win_unlock.
  auto hand_off = [&](const Epoch& a, const Epoch& b) {
    if (a.rank == b.rank) return;
    const int32_t acquire = b.lock_end >= a.unlock_start ? b.lock : b.unlock;
    handoffs_.emplace_back(a.unlock, acquire);
    edges->emplace_back(acquire, a.unlock_start, a.unlock);
  };
  std::vector<const Epoch*> merged, shared;
  size_t all_first = 0, all_end = 0;  // the window's Win_lock_all epochs
  for (size_t i = 0; i < epochs.size();) {
    size_t end = i + 1;
    bool exclusive = epochs[i].exclusive;
    while (end < epochs.size() && epochs[end].comm == epochs[i].comm &&
           epochs[end].target == epochs[i].target) {
      exclusive = exclusive || epochs[end].exclusive;
      ++end;
    }
    if (epochs[i].target < 0) {
      all_first = i;
      all_end = end;
      i = end;
      continue;
    }
    if (all_end > 0 && epochs[all_first].comm != epochs[i].comm) {
      all_first = all_end = 0;
    }
    // Only an exclusive epoch orders anything.
    if (exclusive) {
      merged.clear();
      for (size_t k = i; k < end; ++k) merged.push_back(&epochs[k]);
      for (size_t k = all_first; k < all_end; ++k) {
        merged.push_back(&epochs[k]);
      }
      std::sort(merged.begin(), merged.end(),
                [](const Epoch* a, const Epoch* b) {
                  return std::tie(a->unlock_start, a->rank, a->unlock) <
                         std::tie(b->unlock_start, b->rank, b->unlock);
                });
      // The exclusive epoch before, and the shared ones since.
      const Epoch* holder = nullptr;
      shared.clear();
      for (const Epoch* b : merged) {
        if (b->exclusive) {
          if (shared.empty() && holder != nullptr) hand_off(*holder, *b);
          for (const Epoch* a : shared) hand_off(*a, *b);
          holder = b;
          shared.clear();
        } else {
          if (holder != nullptr) hand_off(*holder, *b);
          shared.push_back(b);
        }
      }
    }
    i = end;
  }
}

void MpiMatching::MatchActiveTarget(std::vector<EpochCall>* calls,
                                    std::vector<EpochEdge>* edges) {
  std::sort(calls->begin(), calls->end());
  // One (target, origin) pair of an exposure (a Win_post's) or access (a
  // Win_start's) epoch. Ordered, the k-th of a (window, target, origin) on
  // either side match.
  struct Side {
    uint64_t comm;
    int32_t target;
    int32_t origin;
    int64_t start;  // the Win_post's or Win_start's
    int32_t opener;
    int64_t end;
    int32_t closer = -1;  // the Win_wait or Win_complete, if one closed it
    int64_t closer_start = 0;
    bool operator<(const Side& o) const {
      return std::tie(comm, target, origin, start, opener) <
             std::tie(o.comm, o.target, o.origin, o.start, o.opener);
    }
  };
  std::vector<Side> exposures, accesses;
  for (size_t i = 0; i < calls->size();) {
    size_t end = i;
    while (end < calls->size() && (*calls)[end].comm == (*calls)[i].comm &&
           (*calls)[end].rank == (*calls)[i].rank) {
      ++end;
    }
    // Per side: the epoch being opened (its group's entries in `sides`),
    // and whether a call without its group stopped that side.
    struct Open {
      std::vector<Side>* sides;
      size_t first = 0;
      size_t end = 0;
      bool stopped = false;
    };
    Open exposure{&exposures}, access{&accesses};
    for (size_t k = i; k < end; ++k) {
      const EpochCall& c = (*calls)[k];
      const bool post = c.role == SpanRole::kPost;
      Open& side = post || c.role == SpanRole::kWinWait ? exposure : access;
      if (post || c.role == SpanRole::kStart) {
        side.first = side.end = side.sides->size();
        if (c.group.empty()) side.stopped = true;
        if (side.stopped) continue;
        for (int32_t peer : c.group) {
          if (peer == c.rank) continue;
          side.sides->push_back({c.comm, post ? c.rank : peer,
                                 post ? peer : c.rank, c.start, c.index,
                                 c.end});
        }
        side.end = side.sides->size();
      } else {
        // Closes the epoch opened last, if none closed it yet.
        for (size_t e = side.first; e < side.end; ++e) {
          (*side.sides)[e].closer = c.index;
          (*side.sides)[e].closer_start = c.start;
        }
        side.first = side.end = side.sides->size();
      }
    }
    i = end;
  }
  std::sort(exposures.begin(), exposures.end());
  std::sort(accesses.begin(), accesses.end());
  auto pair_of = [](const Side& s) {
    return std::tie(s.comm, s.target, s.origin);
  };
  size_t a = 0, b = 0;
  while (a < exposures.size() && b < accesses.size()) {
    if (pair_of(exposures[a]) < pair_of(accesses[b])) {
      ++a;
    } else if (pair_of(accesses[b]) < pair_of(exposures[a])) {
      ++b;
    } else {
      const Side& exposure = exposures[a++];
      const Side& access = accesses[b++];
      if (exposure.closer >= 0 && access.closer >= 0) {
        completions_.emplace_back(access.closer, exposure.closer);
        edges->emplace_back(exposure.closer, access.closer_start,
                            access.closer);
      }
      // The header says why only a Win_start that returned after the post
      // began.
      if (access.end >= exposure.start) {
        posts_.emplace_back(exposure.opener, access.opener);
        edges->emplace_back(access.opener, exposure.start, exposure.opener);
      }
    }
  }
  std::sort(completions_.begin(), completions_.end());
  std::sort(posts_.begin(), posts_.end());
}

void MpiMatching::BuildEpochGroups(std::vector<EpochEdge>* edges) {
  std::sort(edges->begin(), edges->end());
  edges->erase(std::unique(edges->begin(), edges->end()), edges->end());
  epoch_starts_.reserve(edges->size());
  for (size_t i = 0; i < edges->size(); ++i) {
    const auto& [end, time, start] = (*edges)[i];
    if (i == 0 || std::get<0>((*edges)[i - 1]) != end) {
      epoch_groups_.push_back(
          {static_cast<int64_t>(epoch_starts_.size()), 0, end, start});
    }
    EpochGroupEntry& group = epoch_groups_.back();
    // Ascending by time: the last start is the latest (ties: the first).
    if (i > 0 && std::get<0>((*edges)[i - 1]) == end &&
        std::get<1>((*edges)[i - 1]) < time) {
      group.last = start;
    }
    epoch_starts_.push_back(start);
    ++group.count;
  }
}

void MpiMatching::ForEachInstanceGroup(
    int64_t k, absl::FunctionRef<void(const Group&)> visit) const {
  const absl::Span<const int32_t> all = members(k);
  switch (instance_role_[k]) {
    case SpanRole::kAllToAll:
      visit({all, all, members_[last_[k]]});
      return;
    case SpanRole::kRootIn:
    case SpanRole::kRootOut: {
      if (root_[k] < 0) return;
      const absl::Span<const int32_t> root =
          absl::MakeConstSpan(members_.data() + root_[k], 1);
      if (instance_role_[k] == SpanRole::kRootIn) {
        visit({all, root, members_[last_[k]]});
      } else {
        visit({root, all, root[0]});
      }
      return;
    }
    default:
      break;
  }
  const std::vector<int32_t>& pool =
      instance_role_[k] == SpanRole::kNeighbor ? neighbor_starts_ : members_;
  for (size_t i = 0; i < all.size(); ++i) {
    const MemberGroup& g = member_groups_[member_group_first_[k] + i];
    if (g.count == 0) continue;
    visit({absl::MakeConstSpan(pool.data() + g.first, g.count),
           all.subspan(i, 1), g.last});
  }
}

MpiMatching::Group MpiMatching::MessageGroup(size_t m) const {
  return {absl::MakeConstSpan(&messages_[m].first, 1),
          absl::MakeConstSpan(&messages_[m].second, 1), messages_[m].first};
}

MpiMatching::Group MpiMatching::EpochGroup(size_t g) const {
  const EpochGroupEntry& group = epoch_groups_[g];
  return {absl::MakeConstSpan(epoch_starts_.data() + group.first, group.count),
          absl::MakeConstSpan(&group.end, 1), group.last};
}

void MpiMatching::ForEachGroup(
    absl::FunctionRef<void(const Group&)> visit) const {
  for (int64_t k = 0; k < instances(); ++k) ForEachInstanceGroup(k, visit);
  for (size_t m = 0; m < messages_.size(); ++m) visit(MessageGroup(m));
  for (size_t g = 0; g < epoch_groups_.size(); ++g) visit(EpochGroup(g));
}

int64_t MpiMatching::MemoryBytes() const {
  return Bytes(members_) + Bytes(instance_first_) + Bytes(instance_role_) +
         Bytes(root_) + Bytes(last_) + Bytes(member_group_first_) +
         Bytes(member_groups_) + Bytes(neighbor_starts_) + Bytes(messages_) +
         Bytes(handoffs_) + Bytes(completions_) + Bytes(posts_) +
         Bytes(epoch_starts_) + Bytes(epoch_groups_);
}

}  // namespace meridian
