#include "query/analysis/comm_matrix.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "common/saturating.h"

namespace meridian {
namespace {

uint64_t PairKey(int32_t from, int32_t to) {
  return (uint64_t{static_cast<uint32_t>(from)} << 32) |
         static_cast<uint32_t>(to);
}

// What a Sendrecv sent: its "send_bytes" arg, else half of its bytes (the
// probe records both buffers).
int64_t SentBytes(const StoredSpan& span) {
  for (const StoredArg& arg : span.args) {
    if (arg.key == "send_bytes" && arg.type == StoredArg::Type::kInt) {
      return std::max<int64_t>(arg.int_value, 0);
    }
  }
  return span.bytes / 2;
}

}  // namespace

CommMatrixBuilder::CommMatrixBuilder(const JobCatalog& catalog,
                                     const SpanSelection& selection,
                                     CommMatrixOptions options)
    : options_(options) {
  absl::flat_hash_map<int64_t, int32_t> rank_of_process;
  absl::flat_hash_set<int32_t> selected;
  for (const ProcessInfo& p : catalog.processes) {
    rank_of_process[p.id] = p.rank;
    if (p.rank >= 0 && selection.SelectsProcess(p.id)) selected.insert(p.rank);
  }
  selected_ranks_ = static_cast<uint32_t>(selected.size());
  for (const TrackInfo& t : catalog.tracks) {
    auto it = rank_of_process.find(t.process_id);
    rank_of_track_[t.id] = it == rank_of_process.end() ? -1 : it->second;
  }
  for (const OpInfo& op : catalog.ops) {
    const DataFlow flow = DataFlowOf(op.category, op.name);
    if (flow != DataFlow::kNone) flow_of_op_[op.id] = flow;
  }
}

void CommMatrixBuilder::Add(const StoredSpan& span) {
  auto op = flow_of_op_.find(span.op_id);
  if (op == flow_of_op_.end()) return;
  auto track = rank_of_track_.find(span.track_id);
  if (track == rank_of_track_.end() || track->second < 0) return;
  if (!IsCollective(op->second)) {
    AddPointToPoint(op->second, track->second, span);
  } else if (options_.expand_collectives) {
    AddCollective(op->second, track->second, span);
  }
}

void CommMatrixBuilder::AddTransfer(int32_t from, int32_t to, int64_t bytes) {
  Traffic& traffic = matrix_[PairKey(from, to)];
  ++traffic.messages;
  traffic.bytes = SaturatingAdd(traffic.bytes, bytes);
}

void CommMatrixBuilder::AddPointToPoint(DataFlow flow, int32_t rank,
                                        const StoredSpan& span) {
  if (!span.peer || *span.peer < 0) return;
  switch (flow) {
    case DataFlow::kToPeer:
      AddTransfer(rank, *span.peer, span.bytes);
      break;
    case DataFlow::kExchange:
      AddTransfer(rank, *span.peer, SentBytes(span));
      break;
    case DataFlow::kFromPeer:
      AddTransfer(*span.peer, rank, span.bytes);
      break;
    default:
      break;
  }
}

void CommMatrixBuilder::AddCollective(DataFlow flow, int32_t rank,
                                      const StoredSpan& span) {
  if (span.comm == 0 || !span.seq) return;
  const InstanceKey key(span.comm, *span.seq);
  auto [ordinal, begun] = ordinal_of_.try_emplace(key, next_ordinal_);
  if (begun) {
    Instance& instance = pending_[next_ordinal_++];
    instance.key = key;
    instance.flow = flow;
    instance.comm_size = span.comm_size;
    // No more members than the selected ranks can record it.
    instance.expected = std::min(span.comm_size, selected_ranks_);
  }
  auto it = pending_.find(ordinal->second);
  it->second.records.push_back({rank, span.peer.value_or(-1), span.bytes});
  ++pending_records_;
  if (it->second.records.size() >= it->second.expected) Retire(it);
  while (pending_records_ > options_.max_pending_records && !pending_.empty()) {
    Retire(pending_.begin());
  }
}

void CommMatrixBuilder::Retire(std::map<uint64_t, Instance>::iterator it) {
  Instance& instance = it->second;
  pending_records_ -= static_cast<int64_t>(instance.records.size());
  ordinal_of_.erase(instance.key);
  Expand(instance);
  pending_.erase(it);
}

void CommMatrixBuilder::Expand(Instance& instance) {
  // One record per member, its first, in ascending rank.
  std::vector<Record>& members = instance.records;
  std::stable_sort(
      members.begin(), members.end(),
      [](const Record& a, const Record& b) { return a.rank < b.rank; });
  members.erase(std::unique(members.begin(), members.end(),
                            [](const Record& a, const Record& b) {
                              return a.rank == b.rank;
                            }),
                members.end());
  int32_t root = -1;
  for (const Record& m : members) {
    if (m.root >= 0) {
      root = m.root;
      break;
    }
  }
  const bool root_recorded =
      std::any_of(members.begin(), members.end(),
                  [root](const Record& m) { return m.rank == root; });
  const int64_t divisor = std::max<int64_t>(
      instance.comm_size, static_cast<int64_t>(members.size()));
  switch (instance.flow) {
    case DataFlow::kFromRoot:
    case DataFlow::kToRoot:
      if (!root_recorded) return;
      for (const Record& m : members) {
        if (m.rank == root) continue;
        if (instance.flow == DataFlow::kFromRoot) {
          AddTransfer(root, m.rank, m.bytes);
        } else {
          AddTransfer(m.rank, root, m.bytes);
        }
      }
      break;
    case DataFlow::kAllToAll:
    case DataFlow::kAllToAllTotal:
      for (const Record& from : members) {
        const int64_t bytes = instance.flow == DataFlow::kAllToAll
                                  ? from.bytes
                                  : from.bytes / divisor;
        for (const Record& to : members) {
          if (to.rank != from.rank) AddTransfer(from.rank, to.rank, bytes);
        }
      }
      break;
    case DataFlow::kPrefix:
      for (size_t i = 0; i < members.size(); ++i) {
        for (size_t j = i + 1; j < members.size(); ++j) {
          AddTransfer(members[i].rank, members[j].rank, members[i].bytes);
        }
      }
      break;
    default:  // kSynchronize: no data
      break;
  }
}

void CommMatrixBuilder::Finish(
    google::protobuf::RepeatedPtrField<v1::RankTraffic>* matrix) {
  while (!pending_.empty()) Retire(pending_.begin());
  std::vector<std::pair<uint64_t, Traffic>> cells(matrix_.begin(),
                                                  matrix_.end());
  std::sort(cells.begin(), cells.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [key, traffic] : cells) {
    v1::RankTraffic* cell = matrix->Add();
    cell->set_from_rank(static_cast<int32_t>(key >> 32));
    cell->set_to_rank(static_cast<int32_t>(key & 0xffffffffu));
    cell->set_messages(traffic.messages);
    cell->set_bytes(traffic.bytes);
  }
}

}  // namespace meridian
