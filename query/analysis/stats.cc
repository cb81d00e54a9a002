#include "query/analysis/stats.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "query/ops/category.h"

namespace meridian {

int SizeBucketOf(int64_t bytes) {
  if (bytes <= 0) return -1;
  return 63 - __builtin_clzll(static_cast<uint64_t>(bytes));
}

int MpitraceSizeBucketOf(int64_t bytes) {
  if (bytes <= 0) return -1;
  if (bytes <= 4) return 1;
  // ceil(log2(bytes)) - 1: the k with 2^k < bytes <= 2^(k+1).
  return 63 - __builtin_clzll(static_cast<uint64_t>(bytes - 1));
}

int64_t InCallNs(const StoredSpan& span) {
  for (const StoredArg& arg : span.args) {
    // Inside the issuing call: never more than issue to completion.
    if (arg.key == "call_ns" && arg.type == StoredArg::Type::kInt) {
      return std::clamp<int64_t>(arg.int_value, 0, span.dur_ns);
    }
  }
  return span.dur_ns;
}

namespace {

// The span's "callsite" string arg; null if it has none, or an empty one.
const std::string* CallsiteOf(const StoredSpan& span) {
  for (const StoredArg& arg : span.args) {
    if (arg.key == "callsite" && arg.type == StoredArg::Type::kString) {
      return arg.str.empty() ? nullptr : &arg.str;
    }
  }
  return nullptr;
}

}  // namespace

StatsBuilder::StatsBuilder(const JobCatalog& catalog,
                           const SpanSelection& selection, StatsOptions options)
    : catalog_(catalog), selection_(selection), options_(options) {
  static const std::pair<const char*, Figure> kFigures[] = {
      {"MPI_Init", Figure::kInit},
      {"MPI_Init_thread", Figure::kInit},
      {"MPI_Finalize", Figure::kFinalize},
      {"rusage.user_ns", Figure::kUserNs},
      {"rusage.system_ns", Figure::kSystemNs},
      {"rusage.max_rss_bytes", Figure::kMaxRssBytes},
      {"rusage.context_switches", Figure::kContextSwitches},
      {"MPI_Pcontrol", Figure::kPcontrol},
  };
  for (const OpInfo& op : catalog.ops) {
    op_[op.id] = &op;
    if (op.category != v1::CATEGORY_MPI) continue;
    for (const auto& [name, figure] : kFigures) {
      if (op.name == name) figure_of_op_[op.id] = figure;
    }
  }
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
  AddProcessFigures(span, rank);
  // MPI_Init and MPI_Finalize bound the profile; mpitrace counts neither as
  // communication.
  if (span.kind != v1::SPAN_KIND_COMPLETE ||
      !IsCommunication(op_[span.op_id]->category) ||
      figure_of_op_.contains(span.op_id)) {
    return;
  }
  const int64_t in_call_ns = InCallNs(span);
  const int bucket = options_.mpitrace_bins ? MpitraceSizeBucketOf(span.bytes)
                                            : SizeBucketOf(span.bytes);
  ++rank.calls;
  rank.comm_ns = SaturatingAdd(rank.comm_ns, in_call_ns);
  op_sums_.Add(span.op_id, bucket, span.bytes, in_call_ns);
  if (options_.per_rank) {
    rank.ops.Add(span.op_id, bucket, span.bytes, in_call_ns);
  }
  if (options_.by_callsite) AddCallsite(span, in_call_ns);
}

void StatsBuilder::AddCallsite(const StoredSpan& span, int64_t in_call_ns) {
  const std::string* callsite = CallsiteOf(span);
  if (callsite == nullptr) return;
  auto& sites = callsites_[span.op_id];
  auto it = sites.find(*callsite);
  if (it == sites.end()) {
    const int64_t size = static_cast<int64_t>(callsite->size());
    if (callsites_held_ >= options_.max_callsites ||
        size > options_.max_callsite_bytes - callsite_bytes_held_) {
      other_callsites_[span.op_id].Add(span.bytes, in_call_ns);
      return;
    }
    ++callsites_held_;
    callsite_bytes_held_ += size;
    it = sites.emplace(*callsite, Sums()).first;
  }
  it->second.Add(span.bytes, in_call_ns);
}

void StatsBuilder::AddUnselected(const StoredSpan& span) {
  if (!figure_of_op_.contains(span.op_id) ||
      !selection_.tracks().contains(span.track_id)) {
    return;
  }
  AddProcessFigures(span, ranks_[rank_of_track_[span.track_id]]);
}

void StatsBuilder::AddProcessFigures(const StoredSpan& span, RankSums& rank) {
  auto it = figure_of_op_.find(span.op_id);
  if (it == figure_of_op_.end()) return;
  const bool complete = span.kind == v1::SPAN_KIND_COMPLETE;
  const bool counter = span.kind == v1::SPAN_KIND_COUNTER;
  switch (it->second) {
    case Figure::kInit:
      if (complete) {
        rank.init_end = std::min(rank.init_end, span.start_ns + span.dur_ns);
      }
      break;
    case Figure::kFinalize:
      if (complete) {
        rank.finalize_start = std::max(rank.finalize_start, span.start_ns);
      }
      break;
    case Figure::kUserNs:
      if (counter) rank.user_ns.Take(span.start_ns, span.value);
      break;
    case Figure::kSystemNs:
      if (counter) rank.system_ns.Take(span.start_ns, span.value);
      break;
    case Figure::kMaxRssBytes:
      if (counter) rank.max_rss_bytes.Take(span.start_ns, span.value);
      break;
    case Figure::kContextSwitches:
      if (counter) rank.context_switches.Take(span.start_ns, span.value);
      break;
    case Figure::kPcontrol:
      rank.pcontrol = true;
      break;
  }
}

void StatsBuilder::AddTotals(const JobTotals& totals) {
  // A process's selected operations' time: its communication time when
  // the filter leaves some operations out.
  absl::flat_hash_map<int64_t, int64_t> selected_ns;
  // A rank's routines are counted from one imported process: its latest
  // (the highest id). A profile imported alone, then again with its run,
  // is stored on two nodes (its file's name, then the host rank 0's table
  // gives): the same run's calls, not twice as many.
  absl::flat_hash_map<int32_t, int64_t> routines_of_rank;
  for (const StoredOpTotals& op : totals.ops) {
    int64_t& latest = routines_of_rank[rank_of_process_[op.process_id]];
    latest = std::max(latest, op.process_id);
  }
  for (const StoredOpTotals& op : totals.ops) {
    if (!selection_.SelectsProcess(op.process_id) ||
        !selection_.SelectsOp(op.op_id) ||
        routines_of_rank[rank_of_process_[op.process_id]] != op.process_id) {
      continue;
    }
    RankSums& rank = ranks_[rank_of_process_[op.process_id]];
    rank.calls += op.calls;
    selected_ns[op.process_id] =
        SaturatingAdd(selected_ns[op.process_id], op.dur_ns);
    auto add_to = [&op](OpSums& sums) {
      sums.ops[op.op_id].Add(op.bytes, op.dur_ns, op.calls);
      for (const StoredOpTotals::Size& size : op.sizes) {
        sums.buckets[{op.op_id, size.log2}].Add(size.bytes, size.dur_ns,
                                                size.calls);
      }
    };
    add_to(op_sums_);
    if (options_.per_rank) add_to(rank.ops);
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
    // The tool's resource use, where the rank's spans carried none.
    for (auto [figure, sample] :
         {std::pair{p.user_ns, &rank.user_ns},
          {p.system_ns, &rank.system_ns},
          {p.max_rss_bytes, &rank.max_rss_bytes},
          {p.context_switches, &rank.context_switches}}) {
      if (figure && sample->at_ns == INT64_MAX) sample->value = *figure;
    }
  }
}

void StatsBuilder::AppendOps(
    const OpSums& sums,
    google::protobuf::RepeatedPtrField<v1::OpStats>* out) const {
  std::vector<std::pair<int64_t, Sums>> ops(sums.ops.begin(), sums.ops.end());
  std::sort(ops.begin(), ops.end(), [this](const auto& a, const auto& b) {
    if (a.second.dur_ns != b.second.dur_ns) {
      return a.second.dur_ns > b.second.dur_ns;
    }
    return op_.at(a.first)->name < op_.at(b.first)->name;
  });
  for (const auto& [op_id, op_sums] : ops) {
    v1::OpStats* op = out->Add();
    op->set_category(op_.at(op_id)->category);
    op->set_name(op_.at(op_id)->name);
    op->set_calls(op_sums.calls);
    op->set_bytes(op_sums.bytes);
    op->set_dur_ns(op_sums.dur_ns);
    for (auto it = sums.buckets.lower_bound({op_id, -1});
         it != sums.buckets.end() && it->first.first == op_id; ++it) {
      v1::SizeBucket* bucket = op->add_buckets();
      bucket->set_log2(it->first.second);
      bucket->set_calls(it->second.calls);
      bucket->set_bytes(it->second.bytes);
      bucket->set_dur_ns(it->second.dur_ns);
    }
  }
}

void StatsBuilder::AppendCallsites(
    google::protobuf::RepeatedPtrField<v1::CallsiteStats>* out) const {
  struct Row {
    const OpInfo* op;
    const std::string* callsite;
    const Sums* sums;
  };
  const std::string other = kOtherCallsites;
  std::vector<Row> rows;
  for (const auto& [op_id, sites] : callsites_) {
    for (const auto& [callsite, sums] : sites) {
      rows.push_back({op_.at(op_id), &callsite, &sums});
    }
  }
  for (const auto& [op_id, sums] : other_callsites_) {
    rows.push_back({op_.at(op_id), &other, &sums});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.sums->dur_ns != b.sums->dur_ns) {
      return a.sums->dur_ns > b.sums->dur_ns;
    }
    // The category last: an MPI and a NCCL operation may share a name.
    return std::tie(a.op->name, *a.callsite, a.op->category) <
           std::tie(b.op->name, *b.callsite, b.op->category);
  });
  out->Reserve(static_cast<int>(rows.size()));
  for (const Row& row : rows) {
    v1::CallsiteStats* site = out->Add();
    site->set_category(row.op->category);
    site->set_name(row.op->name);
    site->set_callsite(*row.callsite);
    site->set_calls(row.sums->calls);
    site->set_bytes(row.sums->bytes);
    site->set_dur_ns(row.sums->dur_ns);
  }
}

v1::StatsReply StatsBuilder::Finish() const {
  v1::StatsReply reply;
  reply.set_job(catalog_.job.name);
  reply.set_mpitrace_bins(options_.mpitrace_bins);
  reply.set_elapsed_ns(last_end_ >= first_start_ ? last_end_ - first_start_
                                                 : 0);

  AppendOps(op_sums_, reply.mutable_ops());
  AppendCallsites(reply.mutable_callsites());

  std::vector<std::pair<int64_t, int32_t>> by_comm;  // (comm_ns, rank)
  for (const auto& [rank, sums] : ranks_) {
    v1::RankStats* out = reply.add_ranks();
    out->set_rank(rank);
    out->set_host(sums.host);
    out->set_calls(sums.calls);
    out->set_comm_ns(sums.comm_ns + sums.imported_comm_ns);
    out->set_elapsed_ns(sums.last_end >= sums.first_start
                            ? sums.last_end - sums.first_start
                            : 0);
    out->set_source(sums.source);
    out->set_user_ns(sums.user_ns.value);
    out->set_system_ns(sums.system_ns.value);
    out->set_max_rss_bytes(sums.max_rss_bytes.value);
    out->set_context_switches(sums.context_switches.value);
    out->set_pcontrol_windows(sums.pcontrol);
    if (sums.finalize_start >= sums.init_end) {
      out->set_mpi_elapsed_ns(sums.finalize_start - sums.init_end);
    } else {
      out->set_mpi_elapsed_ns(sums.imported_elapsed_ns);  // the same span
    }
    if (options_.per_rank) AppendOps(sums.ops, out->mutable_ops());
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
