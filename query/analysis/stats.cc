#include "query/analysis/stats.h"

#include <algorithm>
#include <vector>

#include "query/ops/category.h"

namespace meridian {

int SizeBucketOf(int64_t bytes) {
  if (bytes <= 0) return -1;
  return 63 - __builtin_clzll(static_cast<uint64_t>(bytes));
}

StatsBuilder::StatsBuilder(const JobCatalog& catalog,
                           const SpanSelection& selection)
    : catalog_(catalog), selection_(selection) {
  for (const OpInfo& op : catalog.ops) op_[op.id] = &op;
  absl::flat_hash_map<int64_t, const ProcessInfo*> process_by_id;
  for (const ProcessInfo& p : catalog.processes) {
    process_by_id[p.id] = &p;
    rank_of_process_[p.id] = p.rank;
    if (selection.SelectsProcess(p.id)) ranks_[p.rank].host = p.node;
  }
  for (const TrackInfo& t : catalog.tracks) {
    rank_of_track_[t.id] = process_by_id[t.process_id]->rank;
  }
}

void StatsBuilder::Add(const StoredSpan& span) {
  const int64_t end = span.start_ns + span.dur_ns;
  first_start_ = std::min(first_start_, span.start_ns);
  last_end_ = std::max(last_end_, end);
  RankSums& rank = ranks_[rank_of_track_[span.track_id]];
  rank.first_start = std::min(rank.first_start, span.start_ns);
  rank.last_end = std::max(rank.last_end, end);
  if (!IsCommunication(op_[span.op_id]->category)) return;
  ++rank.calls;
  rank.comm_ns += span.dur_ns;
  op_sums_[span.op_id].Add(span.bytes, span.dur_ns);
  bucket_sums_[{span.op_id, SizeBucketOf(span.bytes)}].Add(span.bytes,
                                                           span.dur_ns);
}

void StatsBuilder::AddTotals(const JobTotals& totals) {
  // A process's selected operations' time: its communication time when
  // the filter leaves some operations out.
  absl::flat_hash_map<int64_t, int64_t> selected_ns;
  for (const StoredOpTotals& op : totals.ops) {
    if (!selection_.SelectsProcess(op.process_id) ||
        !selection_.SelectsOp(op.op_id)) {
      continue;
    }
    RankSums& rank = ranks_[rank_of_process_[op.process_id]];
    rank.calls += op.calls;
    selected_ns[op.process_id] += op.dur_ns;
    op_sums_[op.op_id].Add(op.bytes, op.dur_ns, op.calls);
    for (const StoredOpTotals::Size& size : op.sizes) {
      bucket_sums_[{op.op_id, size.log2}].Add(size.bytes, size.dur_ns,
                                              size.calls);
    }
  }
  for (const StoredProcessTotals& p : totals.processes) {
    if (!selection_.SelectsProcess(p.process_id)) continue;
    // One rank may have several imported processes (its own profile, and
    // rank 0's table of all ranks): the same run's figures, taken once.
    RankSums& rank = ranks_[rank_of_process_[p.process_id]];
    const int64_t comm_ns =
        selection_.narrows_ops() ? selected_ns[p.process_id] : p.comm_ns;
    rank.imported_comm_ns = std::max(rank.imported_comm_ns, comm_ns);
    rank.imported_elapsed_ns = std::max(rank.imported_elapsed_ns, p.elapsed_ns);
    rank.source = p.source;
    imported_elapsed_ns_ = std::max(imported_elapsed_ns_, p.elapsed_ns);
  }
}

v1::StatsReply StatsBuilder::Finish() const {
  v1::StatsReply reply;
  reply.set_job(catalog_.job.name);
  reply.set_elapsed_ns(
      std::max(last_end_ >= first_start_ ? last_end_ - first_start_ : 0,
               imported_elapsed_ns_));

  std::vector<std::pair<int64_t, Sums>> ops(op_sums_.begin(), op_sums_.end());
  std::sort(ops.begin(), ops.end(), [this](const auto& a, const auto& b) {
    if (a.second.dur_ns != b.second.dur_ns) {
      return a.second.dur_ns > b.second.dur_ns;
    }
    return op_.at(a.first)->name < op_.at(b.first)->name;
  });
  for (const auto& [op_id, sums] : ops) {
    v1::OpStats* op = reply.add_ops();
    op->set_category(op_.at(op_id)->category);
    op->set_name(op_.at(op_id)->name);
    op->set_calls(sums.calls);
    op->set_bytes(sums.bytes);
    op->set_dur_ns(sums.dur_ns);
    for (auto it = bucket_sums_.lower_bound({op_id, -1});
         it != bucket_sums_.end() && it->first.first == op_id; ++it) {
      v1::SizeBucket* bucket = op->add_buckets();
      bucket->set_log2(it->first.second);
      bucket->set_calls(it->second.calls);
      bucket->set_bytes(it->second.bytes);
      bucket->set_dur_ns(it->second.dur_ns);
    }
  }

  std::vector<std::pair<int64_t, int32_t>> by_comm;  // (comm_ns, rank)
  for (const auto& [rank, sums] : ranks_) {
    v1::RankStats* out = reply.add_ranks();
    out->set_rank(rank);
    out->set_host(sums.host);
    out->set_calls(sums.calls);
    out->set_comm_ns(sums.comm_ns + sums.imported_comm_ns);
    out->set_elapsed_ns(std::max(sums.last_end >= sums.first_start
                                     ? sums.last_end - sums.first_start
                                     : 0,
                                 sums.imported_elapsed_ns));
    out->set_source(sums.source);
    by_comm.push_back({sums.comm_ns + sums.imported_comm_ns, rank});
  }
  if (!by_comm.empty()) {
    std::sort(by_comm.begin(), by_comm.end());
    reply.set_min_comm_rank(by_comm.front().second);
    reply.set_median_comm_rank(by_comm[(by_comm.size() - 1) / 2].second);
    // The maximum: the highest time, the lowest rank among equals.
    auto max =
        std::lower_bound(by_comm.begin(), by_comm.end(),
                         std::make_pair(by_comm.back().first, INT32_MIN));
    reply.set_max_comm_rank(max->second);
  }
  return reply;
}

}  // namespace meridian
