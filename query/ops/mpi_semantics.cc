#include "query/ops/mpi_semantics.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace meridian {
namespace {

SpanRole MpiRole(const std::string& name) {
  static const auto* const roles =
      new absl::flat_hash_map<std::string, SpanRole>{
          {"MPI_Barrier", SpanRole::kAllToAll},
          {"MPI_Allreduce", SpanRole::kAllToAll},
          {"MPI_Allgather", SpanRole::kAllToAll},
          {"MPI_Allgatherv", SpanRole::kAllToAll},
          {"MPI_Alltoall", SpanRole::kAllToAll},
          {"MPI_Alltoallv", SpanRole::kAllToAll},
          {"MPI_Reduce_scatter", SpanRole::kAllToAll},
          {"MPI_Reduce_scatter_block", SpanRole::kAllToAll},
          {"MPI_Ibarrier", SpanRole::kAllToAll},
          {"MPI_Iallreduce", SpanRole::kAllToAll},
          {"MPI_Iallgather", SpanRole::kAllToAll},
          {"MPI_Iallgatherv", SpanRole::kAllToAll},
          {"MPI_Ialltoall", SpanRole::kAllToAll},
          {"MPI_Ialltoallv", SpanRole::kAllToAll},
          {"MPI_Ireduce_scatter", SpanRole::kAllToAll},
          {"MPI_Ireduce_scatter_block", SpanRole::kAllToAll},
          {"MPI_Reduce", SpanRole::kRootIn},
          {"MPI_Gather", SpanRole::kRootIn},
          {"MPI_Gatherv", SpanRole::kRootIn},
          {"MPI_Ireduce", SpanRole::kRootIn},
          {"MPI_Igather", SpanRole::kRootIn},
          {"MPI_Igatherv", SpanRole::kRootIn},
          {"MPI_Bcast", SpanRole::kRootOut},
          {"MPI_Scatter", SpanRole::kRootOut},
          {"MPI_Scatterv", SpanRole::kRootOut},
          {"MPI_Ibcast", SpanRole::kRootOut},
          {"MPI_Iscatter", SpanRole::kRootOut},
          {"MPI_Iscatterv", SpanRole::kRootOut},
          {"MPI_Send", SpanRole::kSend},
          {"MPI_Ssend", SpanRole::kSend},
          {"MPI_Rsend", SpanRole::kSend},
          {"MPI_Bsend", SpanRole::kSend},
          {"MPI_Isend", SpanRole::kSend},
          {"MPI_Issend", SpanRole::kSend},
          {"MPI_Irsend", SpanRole::kSend},
          {"MPI_Ibsend", SpanRole::kSend},
          {"MPI_Recv", SpanRole::kRecv},
          {"MPI_Irecv", SpanRole::kRecv},
          {"MPI_Wait", SpanRole::kWait},
          {"MPI_Waitall", SpanRole::kWait},
          {"MPI_Waitany", SpanRole::kWait},
          {"MPI_Waitsome", SpanRole::kWait},
      };
  auto it = roles->find(name);
  return it == roles->end() ? SpanRole::kNone : it->second;
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
      return MpiRole(name);
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

bool IsAsynchronous(v1::Category category, const std::string& name) {
  if (category != v1::CATEGORY_MPI || !absl::StartsWith(name, "MPI_I")) {
    return false;
  }
  const SpanRole role = RoleOf(category, name);
  return role != SpanRole::kNone && role != SpanRole::kWait;
}

bool IsCollective(SpanRole role) {
  return role == SpanRole::kAllToAll || role == SpanRole::kRootIn ||
         role == SpanRole::kRootOut;
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
