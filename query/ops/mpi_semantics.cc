#include "query/ops/mpi_semantics.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace meridian {
namespace {

// What MPI_* operations are: their role in MPI's order and how they move
// data (DataFlow). One table, so that a send is a send for both.
struct MpiKind {
  SpanRole role = SpanRole::kNone;
  DataFlow flow = DataFlow::kNone;
};

const MpiKind& MpiKindOf(const std::string& name) {
  using R = SpanRole;
  using F = DataFlow;
  static const auto* const kinds =
      new absl::flat_hash_map<std::string, MpiKind>{
          {"MPI_Barrier", {R::kAllToAll, F::kSynchronize}},
          {"MPI_Allreduce", {R::kAllToAll, F::kAllToAll}},
          {"MPI_Allgather", {R::kAllToAll, F::kAllToAll}},
          {"MPI_Allgatherv", {R::kAllToAll, F::kAllToAllTotal}},
          {"MPI_Alltoall", {R::kAllToAll, F::kAllToAll}},
          {"MPI_Alltoallv", {R::kAllToAll, F::kAllToAllTotal}},
          {"MPI_Alltoallw", {R::kAllToAll, F::kAllToAllTotal}},
          {"MPI_Reduce_scatter", {R::kAllToAll, F::kAllToAllTotal}},
          {"MPI_Reduce_scatter_block", {R::kAllToAll, F::kAllToAll}},
          {"MPI_Scan", {R::kNone, F::kPrefix}},
          {"MPI_Exscan", {R::kNone, F::kPrefix}},
          {"MPI_Ibarrier", {R::kAllToAll, F::kSynchronize}},
          {"MPI_Iallreduce", {R::kAllToAll, F::kAllToAll}},
          {"MPI_Iallgather", {R::kAllToAll, F::kAllToAll}},
          {"MPI_Iallgatherv", {R::kAllToAll, F::kAllToAllTotal}},
          {"MPI_Ialltoall", {R::kAllToAll, F::kAllToAll}},
          {"MPI_Ialltoallv", {R::kAllToAll, F::kAllToAllTotal}},
          {"MPI_Ialltoallw", {R::kAllToAll, F::kAllToAllTotal}},
          {"MPI_Ireduce_scatter", {R::kAllToAll, F::kAllToAllTotal}},
          {"MPI_Ireduce_scatter_block", {R::kAllToAll, F::kAllToAll}},
          {"MPI_Iscan", {R::kNone, F::kPrefix}},
          {"MPI_Iexscan", {R::kNone, F::kPrefix}},
          {"MPI_Reduce", {R::kRootIn, F::kToRoot}},
          {"MPI_Gather", {R::kRootIn, F::kToRoot}},
          {"MPI_Gatherv", {R::kRootIn, F::kToRoot}},
          {"MPI_Ireduce", {R::kRootIn, F::kToRoot}},
          {"MPI_Igather", {R::kRootIn, F::kToRoot}},
          {"MPI_Igatherv", {R::kRootIn, F::kToRoot}},
          {"MPI_Bcast", {R::kRootOut, F::kFromRoot}},
          {"MPI_Scatter", {R::kRootOut, F::kFromRoot}},
          {"MPI_Scatterv", {R::kRootOut, F::kFromRoot}},
          {"MPI_Ibcast", {R::kRootOut, F::kFromRoot}},
          {"MPI_Iscatter", {R::kRootOut, F::kFromRoot}},
          {"MPI_Iscatterv", {R::kRootOut, F::kFromRoot}},
          {"MPI_Send", {R::kSend, F::kToPeer}},
          {"MPI_Ssend", {R::kSend, F::kToPeer}},
          {"MPI_Rsend", {R::kSend, F::kToPeer}},
          {"MPI_Bsend", {R::kSend, F::kToPeer}},
          {"MPI_Isend", {R::kSend, F::kToPeer}},
          {"MPI_Issend", {R::kSend, F::kToPeer}},
          {"MPI_Irsend", {R::kSend, F::kToPeer}},
          {"MPI_Ibsend", {R::kSend, F::kToPeer}},
          // Each MPI_Start of a persistent send is recorded under its init
          // call's name.
          {"MPI_Send_init", {R::kSend, F::kToPeer}},
          {"MPI_Ssend_init", {R::kSend, F::kToPeer}},
          {"MPI_Rsend_init", {R::kSend, F::kToPeer}},
          {"MPI_Bsend_init", {R::kSend, F::kToPeer}},
          {"MPI_Sendrecv", {R::kNone, F::kExchange}},
          {"MPI_Sendrecv_replace", {R::kNone, F::kExchange}},
          {"MPI_Put", {R::kNone, F::kToPeer}},
          {"MPI_Rput", {R::kNone, F::kToPeer}},
          {"MPI_Accumulate", {R::kNone, F::kToPeer}},
          {"MPI_Raccumulate", {R::kNone, F::kToPeer}},
          {"MPI_Get_accumulate", {R::kNone, F::kToPeer}},
          {"MPI_Rget_accumulate", {R::kNone, F::kToPeer}},
          {"MPI_Fetch_and_op", {R::kNone, F::kToPeer}},
          {"MPI_Compare_and_swap", {R::kNone, F::kToPeer}},
          {"MPI_Get", {R::kNone, F::kFromPeer}},
          {"MPI_Rget", {R::kNone, F::kFromPeer}},
          {"MPI_Recv", {R::kRecv, F::kNone}},
          {"MPI_Irecv", {R::kRecv, F::kNone}},
          {"MPI_Recv_init", {R::kRecv, F::kNone}},
          {"MPI_Mrecv", {R::kRecv, F::kNone}},
          {"MPI_Imrecv", {R::kRecv, F::kNone}},
          // A fence that ends an epoch waits for every member's (the probe
          // gives one that only opens an epoch, MPI_MODE_NOPRECEDE, no
          // sequence number: it need not synchronize).
          {"MPI_Win_fence", {R::kAllToAll, F::kNone}},
          {"MPI_Wait", {R::kWait, F::kNone}},
          {"MPI_Waitall", {R::kWait, F::kNone}},
          {"MPI_Waitany", {R::kWait, F::kNone}},
          {"MPI_Waitsome", {R::kWait, F::kNone}},
      };
  static const MpiKind kNone;
  auto it = kinds->find(name);
  return it == kinds->end() ? kNone : it->second;
}

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
  return category == v1::CATEGORY_MPI ? MpiKindOf(name).flow : DataFlow::kNone;
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
         role == SpanRole::kRootOut;
}

bool IsCollective(DataFlow flow) {
  return flow == DataFlow::kFromRoot || flow == DataFlow::kToRoot ||
         flow == DataFlow::kAllToAll || flow == DataFlow::kAllToAllTotal ||
         flow == DataFlow::kPrefix || flow == DataFlow::kSynchronize;
}

bool IsMessage(SpanRole role) {
  return role == SpanRole::kSend || role == SpanRole::kRecv;
}

MpiMatching::MpiMatching(int32_t count, absl::FunctionRef<MpiOp(int32_t)> op) {
  // A collective operation, ordered by (comm, seq, rank, index).
  struct Member {
    uint64_t comm;
    uint64_t seq;
    int32_t rank;
    int32_t index;
    int32_t peer;
    SpanRole role;
    int64_t start;
    bool operator<(const Member& o) const {
      return std::tie(comm, seq, rank, index) <
             std::tie(o.comm, o.seq, o.rank, o.index);
    }
  };
  // (comm, source, destination, tag, start, index) per send or receive.
  using End = std::tuple<uint64_t, int32_t, int32_t, int32_t, int64_t, int32_t>;
  std::vector<Member> collective;
  std::vector<End> sends, recvs;
  for (int32_t i = 0; i < count; ++i) {
    const MpiOp o = op(i);
    if (IsCollective(o.role) && o.has_seq && o.comm != 0) {
      collective.push_back({o.comm, o.seq, o.rank, i, o.peer, o.role, o.start});
    } else if (o.role == SpanRole::kSend && o.rank >= 0 && o.peer >= 0) {
      sends.emplace_back(o.comm, o.rank, o.peer, o.tag, o.start, i);
    } else if (o.role == SpanRole::kRecv && o.rank >= 0 && o.peer >= 0) {
      recvs.emplace_back(o.comm, o.peer, o.rank, o.tag, o.start, i);
    }
  }

  std::sort(collective.begin(), collective.end());
  members_.reserve(collective.size());
  for (size_t i = 0; i < collective.size(); ++i) {
    const Member& m = collective[i];
    if (i == 0 || m.comm != collective[i - 1].comm ||
        m.seq != collective[i - 1].seq) {
      instance_first_.push_back(static_cast<int64_t>(i));
      instance_role_.push_back(m.role);
      root_.push_back(-1);
      last_.push_back(static_cast<int64_t>(i));
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

  std::sort(sends.begin(), sends.end());
  std::sort(recvs.begin(), recvs.end());
  auto channel = [](const End& e) {
    return std::make_tuple(std::get<0>(e), std::get<1>(e), std::get<2>(e),
                           std::get<3>(e));
  };
  size_t a = 0, b = 0;
  while (a < sends.size() && b < recvs.size()) {
    if (channel(sends[a]) < channel(recvs[b])) {
      ++a;
    } else if (channel(recvs[b]) < channel(sends[a])) {
      ++b;
    } else {
      messages_.emplace_back(std::get<5>(sends[a++]), std::get<5>(recvs[b++]));
    }
  }
}

MpiMatching::Group MpiMatching::InstanceGroup(int64_t k) const {
  const absl::Span<const int32_t> all = members(k);
  const int32_t last = members_[last_[k]];
  if (instance_role_[k] == SpanRole::kAllToAll) return {all, all, last};
  if (root_[k] < 0) return {};
  const absl::Span<const int32_t> root =
      absl::MakeConstSpan(members_.data() + root_[k], 1);
  if (instance_role_[k] == SpanRole::kRootIn) return {all, root, last};
  return {root, all, root[0]};
}

MpiMatching::Group MpiMatching::MessageGroup(size_t m) const {
  return {absl::MakeConstSpan(&messages_[m].first, 1),
          absl::MakeConstSpan(&messages_[m].second, 1), messages_[m].first};
}

void MpiMatching::ForEachGroup(
    absl::FunctionRef<void(const Group&)> visit) const {
  for (int64_t k = 0; k < instances(); ++k) {
    const Group group = InstanceGroup(k);
    if (!group.ends.empty()) visit(group);
  }
  for (size_t m = 0; m < messages_.size(); ++m) visit(MessageGroup(m));
}

int64_t MpiMatching::MemoryBytes() const {
  return Bytes(members_) + Bytes(instance_first_) + Bytes(instance_role_) +
         Bytes(root_) + Bytes(last_) + Bytes(messages_);
}

std::optional<MessageEnd> MessageOrdinals::Next(SpanRole role, int32_t rank,
                                                std::optional<int32_t> peer,
                                                std::optional<int32_t> tag,
                                                uint64_t comm) {
  if (!IsMessage(role) || rank < 0 || !peer || *peer < 0) return std::nullopt;
  MessageEnd end;
  end.send = role == SpanRole::kSend;
  end.comm = comm;
  end.source = end.send ? rank : *peer;
  end.destination = end.send ? *peer : rank;
  end.tag = tag.value_or(0);
  auto& [sends, receives] =
      channels_[Channel(comm, end.source, end.destination, end.tag)];
  end.ordinal = end.send ? sends++ : receives++;
  return end;
}

}  // namespace meridian
