#include "query/ops/span_selection.h"

#include <fnmatch.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace meridian {

absl::Status CheckRanksInJob(const JobCatalog& catalog,
                             absl::Span<const int32_t> ranks) {
  std::set<int32_t> has;
  for (const ProcessInfo& p : catalog.processes) {
    if (p.rank >= 0) has.insert(p.rank);
  }
  for (const int32_t rank : ranks) {
    if (has.count(rank) > 0) continue;
    // The job's ranks as runs: "0-3", "0-1, 4".
    std::vector<std::string> runs;
    for (auto it = has.begin(); it != has.end();) {
      const int32_t first = *it;
      int32_t last = first;
      for (++it; it != has.end() && *it == last + 1; ++it) last = *it;
      runs.push_back(first == last ? absl::StrCat(first)
                                   : absl::StrCat(first, "-", last));
    }
    return absl::NotFoundError(absl::StrCat(
        "job ", catalog.job.name, " has no rank ", rank,
        runs.empty()
            ? " (it has no ranks)"
            : absl::StrCat(" (its ranks: ", absl::StrJoin(runs, ", "), ")")));
  }
  return absl::OkStatus();
}

absl::StatusOr<SpanSelection> SpanSelection::Make(
    const JobCatalog& catalog, const v1::SpanFilter& filter) {
  if (filter.has_first_step() && filter.has_last_step() &&
      filter.first_step() > filter.last_step()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "step range ", filter.first_step(), ":", filter.last_step(),
        " is empty; write FIRST:LAST with "
        "FIRST <= LAST"));
  }
  if (filter.has_from_ns() && filter.has_to_ns() &&
      filter.from_ns() > filter.to_ns()) {
    return absl::InvalidArgumentError(
        "time range is empty: --from is after --to");
  }
  absl::flat_hash_set<v1::Category> categories;
  for (int c : filter.categories()) {
    if (!v1::Category_IsValid(c)) {
      return absl::InvalidArgumentError(
          absl::StrCat("category ", c, " is not a known category"));
    }
    categories.insert(static_cast<v1::Category>(c));
  }
  absl::flat_hash_set<int32_t> ranks(filter.ranks().begin(),
                                     filter.ranks().end());
  if (absl::Status known = CheckRanksInJob(
          catalog,
          absl::MakeConstSpan(filter.ranks().data(), filter.ranks().size()));
      !known.ok()) {
    return known;
  }

  SpanSelection selection;
  selection.narrows_tracks_ = !ranks.empty();
  selection.narrows_ops_ = !categories.empty() || !filter.name_glob().empty();
  for (const ProcessInfo& p : catalog.processes) {
    if (ranks.empty() || ranks.contains(p.rank)) {
      selection.processes_.insert(p.id);
    }
  }
  for (const TrackInfo& t : catalog.tracks) {
    if (selection.processes_.contains(t.process_id)) {
      selection.tracks_.insert(t.id);
    }
  }
  for (const OpInfo& op : catalog.ops) {
    if (!categories.empty() && !categories.contains(op.category)) continue;
    if (!filter.name_glob().empty() &&
        fnmatch(filter.name_glob().c_str(), op.name.c_str(), 0) != 0) {
      continue;
    }
    selection.ops_.insert(op.id);
  }
  return selection;
}

ScanRange ScanRangeOf(const v1::SpanFilter& filter,
                      const SpanSelection& selection) {
  ScanRange range;
  if (selection.narrows_tracks()) range.tracks = selection.tracks();
  if (filter.has_from_ns()) range.from_ns = filter.from_ns();
  if (filter.has_to_ns()) range.to_ns = filter.to_ns();
  if (filter.has_first_step()) range.first_step = filter.first_step();
  if (filter.has_last_step()) range.last_step = filter.last_step();
  return range;
}

}  // namespace meridian
