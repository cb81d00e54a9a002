#include "query/analysis/replay_report.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "query/analysis/critical_path.h"

namespace meridian {
namespace {

// First start and last end, measured and predicted, of some spans.
struct Extent {
  int64_t start = std::numeric_limits<int64_t>::max();
  int64_t end = std::numeric_limits<int64_t>::min();
  int64_t predicted_start = std::numeric_limits<int64_t>::max();
  int64_t predicted_end = std::numeric_limits<int64_t>::min();

  void Add(const JobSpan& s, int64_t predicted_start_ns,
           int64_t predicted_end_ns) {
    start = std::min(start, s.start);
    end = std::max(end, s.end);
    predicted_start = std::min(predicted_start, predicted_start_ns);
    predicted_end = std::max(predicted_end, predicted_end_ns);
  }
  int64_t measured() const { return end - start; }
  int64_t predicted() const { return predicted_end - predicted_start; }
};

void AddRanks(const std::map<int32_t, Extent>& ranks,
              google::protobuf::RepeatedPtrField<v1::ReplayRank>* out) {
  for (const auto& [rank, extent] : ranks) {
    v1::ReplayRank* r = out->Add();
    r->set_rank(rank);
    r->set_measured_ns(extent.measured());
    r->set_predicted_ns(extent.predicted());
  }
}

}  // namespace

absl::StatusOr<v1::ReplayReply> ReplayReport(const DependencyGraph& graph,
                                             const ReplayTimes& times,
                                             std::optional<StepRange> steps,
                                             bool paths) {
  const JobSpans& spans = graph.spans();
  const std::vector<JobSpan>& all = spans.spans();
  Extent window;
  std::map<int32_t, Extent> ranks;
  std::map<int64_t, std::pair<Extent, std::map<int32_t, Extent>>> by_step;
  // Spans come by track, then start: consecutive ones mostly share their
  // rank and step, so the entries last used are kept at hand.
  Extent* rank_extent = nullptr;
  Extent* step_extent = nullptr;
  Extent* step_rank_extent = nullptr;
  int32_t last_rank = -2;
  std::optional<int64_t> last_step;
  int64_t window_spans = 0;
  int64_t window_scaled = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const JobSpan& s = all[i];
    const bool in_steps =
        s.has_step &&
        (!steps || (s.step >= steps->first && s.step <= steps->last));
    if (steps && !in_steps) continue;
    ++window_spans;
    if (static_cast<size_t>(s.op) < times.scaled_ops.size() &&
        times.scaled_ops[s.op]) {
      ++window_scaled;
    }
    window.Add(s, times.start[i], times.end[i]);
    const int32_t rank = spans.tracks()[s.track].rank;
    if (rank != last_rank) {
      rank_extent = &ranks[rank];
      last_step.reset();
      last_rank = rank;
    }
    rank_extent->Add(s, times.start[i], times.end[i]);
    if (!in_steps) continue;
    if (last_step != s.step) {
      auto& [extent, step_ranks] = by_step[s.step];
      step_extent = &extent;
      step_rank_extent = &step_ranks[rank];
      last_step = s.step;
    }
    step_extent->Add(s, times.start[i], times.end[i]);
    step_rank_extent->Add(s, times.start[i], times.end[i]);
  }
  if (steps && by_step.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "no span of this job is tagged with a step in ", steps->first, "..",
        steps->last, "; `meridian steps` lists the steps"));
  }
  v1::ReplayReply reply;
  if (steps) {
    reply.set_first_step(steps->first);
    reply.set_last_step(steps->last);
  }
  // The window's spans: a range of steps counts its own, not the job's.
  reply.set_spans(window_spans);
  reply.set_scaled_spans(window_scaled);
  reply.set_broken_dependencies(times.broken_dependencies);
  if (all.empty()) return reply;
  reply.set_measured_ns(window.measured());
  reply.set_predicted_ns(window.predicted());
  reply.set_saving_ns(window.measured() - window.predicted());
  reply.set_saving_share(window.measured() > 0
                             ? static_cast<double>(reply.saving_ns()) /
                                   static_cast<double>(window.measured())
                             : 0);
  for (const auto& [step, entry] : by_step) {
    v1::ReplayStep* out = reply.add_steps();
    out->set_step(step);
    out->set_measured_ns(entry.first.measured());
    out->set_predicted_ns(entry.first.predicted());
    AddRanks(entry.second, out->mutable_ranks());
  }
  AddRanks(ranks, reply.mutable_ranks());
  if (!paths) return reply;
  *reply.mutable_measured_path() =
      CriticalPath(graph, TimeWindow{window.start, window.end});
  const JobSpans predicted = spans.Retimed(times.start, times.end);
  const DependencyGraph predicted_graph(predicted);
  *reply.mutable_predicted_path() =
      CriticalPath(predicted_graph,
                   TimeWindow{window.predicted_start, window.predicted_end});
  return reply;
}

}  // namespace meridian
