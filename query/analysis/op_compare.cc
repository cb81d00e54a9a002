#include "query/analysis/op_compare.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/saturating.h"
#include "query/ops/span_selection.h"

namespace meridian {
namespace {

void AddTo(v1::OpTotals* sum, const v1::OpTotals& t) {
  sum->set_count(sum->count() + t.count());
  sum->set_dur_ns(SaturatingAdd(sum->dur_ns(), t.dur_ns()));
  sum->set_bytes(SaturatingAdd(sum->bytes(), t.bytes()));
}

}  // namespace

OpTotalsBuilder::OpTotalsBuilder(const JobCatalog& catalog) {
  for (const OpInfo& op : catalog.ops) {
    by_op_[op.id] = &totals_[Key(op.category, op.name)];
  }
}

void OpTotalsBuilder::Add(const StoredSpan& span) {
  if (span.kind == v1::SPAN_KIND_COUNTER) return;
  auto it = by_op_.find(span.op_id);
  if (it == by_op_.end()) return;
  v1::OpTotals* t = it->second;
  t->set_count(t->count() + 1);
  t->set_dur_ns(SaturatingAdd(t->dur_ns(), span.dur_ns));
  t->set_bytes(SaturatingAdd(t->bytes(), span.bytes));
}

absl::Status AddRankTotals(Store& store, const JobCatalog& catalog,
                           int32_t rank_a, int32_t rank_b, OpTotalsBuilder* a,
                           OpTotalsBuilder* b) {
  absl::flat_hash_map<int64_t, int32_t> rank_of_process;
  for (const ProcessInfo& p : catalog.processes) rank_of_process[p.id] = p.rank;
  if (absl::Status known = CheckRanksInJob(catalog, {rank_a, rank_b});
      !known.ok()) {
    return known;
  }
  // Each track of either rank, with where its spans go.
  absl::flat_hash_map<int64_t, std::pair<bool, bool>> sides;
  ScanRange range;
  range.tracks.emplace();
  for (const TrackInfo& t : catalog.tracks) {
    auto it = rank_of_process.find(t.process_id);
    if (it == rank_of_process.end()) continue;
    const bool to_a = it->second == rank_a, to_b = it->second == rank_b;
    if (!to_a && !to_b) continue;
    sides[t.id] = {to_a, to_b};
    range.tracks->insert(t.id);
  }
  return store.Scan(catalog.job, range, [&](const StoredSpan& span) {
    auto it = sides.find(span.track_id);
    if (it == sides.end()) return true;
    if (it->second.first) a->Add(span);
    if (it->second.second) b->Add(span);
    return true;
  });
}

absl::StatusOr<v1::CompareReply> CompareOps(const OpTotalsBuilder& a,
                                            const OpTotalsBuilder& b,
                                            const std::string& sort, int head) {
  int64_t (*key)(const v1::OpTotals&) = nullptr;
  if (sort.empty() || sort == "time") {
    key = [](const v1::OpTotals& t) { return std::abs(t.dur_ns()); };
  } else if (sort == "count") {
    key = [](const v1::OpTotals& t) { return std::abs(t.count()); };
  } else if (sort == "bytes") {
    key = [](const v1::OpTotals& t) { return std::abs(t.bytes()); };
  } else if (sort != "name") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown sort \"", sort, "\": use time, count, bytes or name"));
  }
  // Both sides' operations; an operation only one side has counts 0 on the
  // other.
  std::map<OpTotalsBuilder::Key, v1::OpDiff> ops;
  for (const auto* side : {&a, &b}) {
    for (const auto& [op, totals] : side->totals()) {
      if (totals.count() == 0) continue;
      v1::OpDiff& diff = ops[op];
      diff.set_category(op.first);
      diff.set_name(op.second);
      *(side == &a ? diff.mutable_a() : diff.mutable_b()) = totals;
    }
  }
  v1::CompareReply reply;
  std::vector<v1::OpDiff> list;
  for (auto& [op, diff] : ops) {
    AddTo(reply.mutable_total_a(), diff.a());
    AddTo(reply.mutable_total_b(), diff.b());
    diff.mutable_diff()->set_count(diff.b().count() - diff.a().count());
    diff.mutable_diff()->set_dur_ns(diff.b().dur_ns() - diff.a().dur_ns());
    diff.mutable_diff()->set_bytes(diff.b().bytes() - diff.a().bytes());
    list.push_back(std::move(diff));
  }
  if (key != nullptr) {  // the map's order (category, name) breaks ties
    std::stable_sort(list.begin(), list.end(),
                     [key](const v1::OpDiff& x, const v1::OpDiff& y) {
                       return key(x.diff()) > key(y.diff());
                     });
  } else {
    std::stable_sort(list.begin(), list.end(),
                     [](const v1::OpDiff& x, const v1::OpDiff& y) {
                       return x.name() < y.name();
                     });
  }
  reply.set_ops_total(static_cast<int32_t>(list.size()));
  const size_t listed =
      head > 0 ? std::min(list.size(), static_cast<size_t>(head)) : list.size();
  for (size_t i = 0; i < listed; ++i) *reply.add_ops() = std::move(list[i]);
  return reply;
}

}  // namespace meridian
