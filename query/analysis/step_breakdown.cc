#include "query/analysis/step_breakdown.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "query/analysis/interval_set.h"
#include "query/ops/category.h"

namespace meridian {
namespace {

// (step, rank) -> the rank's step window, of the steps there are.
std::map<std::pair<int64_t, int32_t>, std::pair<int64_t, int64_t>> StepWindows(
    const JobSpans& spans) {
  const std::vector<JobSpan>& all = spans.spans();
  // A job that marks its steps' ends has as steps only those that ended
  // (some rank's marker): the step the probe opened after the last
  // optimizer.step() (auto_steps), or one a trace window cut, is none.
  absl::flat_hash_set<int64_t> ended;
  if (spans.marks_steps()) {
    for (const JobSpan& s : all) {
      if (spans.is_step_marker(s)) ended.insert(s.step);
    }
  }
  // (step, rank) -> the rank's step window.
  std::map<std::pair<int64_t, int32_t>, std::pair<int64_t, int64_t>> windows;
  for (const JobSpan& s : all) {
    if (!s.has_step) continue;
    if (spans.marks_steps() && !ended.contains(s.step)) continue;
    auto [it, added] = windows.try_emplace({s.step, s.rank}, s.start, s.end);
    if (!added) {
      it->second.first = std::min(it->second.first, s.start);
      it->second.second = std::max(it->second.second, s.end);
    }
  }
  return windows;
}

// A rank's union of compute time, of communication time, and both; and of
// set-up time (MPI_Init...), which is neither.
struct RankTime {
  IntervalSet compute, communication, overlap, setup;
};

std::map<int32_t, RankTime> RankTimes(const DependencyGraph& graph) {
  const JobSpans& spans = graph.spans();
  const std::vector<JobSpan>& all = spans.spans();
  std::map<int32_t, RankTime> by_rank;
  {
    struct Busy {
      std::vector<IntervalSet::Interval> compute, communication, setup;
    };
    std::map<int32_t, Busy> busy;
    for (size_t t = 0; t < spans.tracks().size(); ++t) {
      Busy& b = busy[spans.tracks()[t].rank];
      for (const DependencyGraph::Piece& p :
           graph.pieces(static_cast<int32_t>(t))) {
        if (p.span < 0) continue;
        const JobSpan& owner = all[p.span];
        if (spans.setup(owner)) {
          b.setup.emplace_back(p.t0, p.t1);
        } else if (IsCommunication(owner.category)) {
          b.communication.emplace_back(p.t0, p.t1);
        } else if (owner.role != SpanRole::kSync) {
          b.compute.emplace_back(p.t0, p.t1);
        }
      }
    }
    for (const JobSpan& s : all) {
      if (s.async) busy[s.rank].communication.emplace_back(s.start, s.end);
    }
    for (auto& [rank, b] : busy) {
      RankTime& r = by_rank[rank];
      r.compute = IntervalSet(std::move(b.compute));
      r.communication = IntervalSet(std::move(b.communication));
      r.overlap = r.compute.Intersect(r.communication);
      r.setup = IntervalSet(std::move(b.setup));
    }
  }
  return by_rank;
}

}  // namespace

v1::StepsReply StepBreakdown(const DependencyGraph& graph) {
  const auto windows = StepWindows(graph.spans());
  std::map<int32_t, RankTime> by_rank = RankTimes(graph);
  v1::StepsReply reply;
  v1::StepSummary* step = nullptr;
  auto finish = [](v1::StepSummary* s) {
    if (s == nullptr || s->ranks_size() == 0) return;
    const int64_t n = s->ranks_size();
    s->set_compute_ns(s->compute_ns() / n);
    s->set_communication_ns(s->communication_ns() / n);
    s->set_overlap_ns(s->overlap_ns() / n);
    s->set_setup_ns(s->setup_ns() / n);
  };
  int64_t slowest = -1;
  for (const auto& [key, window] : windows) {
    const auto [step_number, rank] = key;
    if (step == nullptr || step->step() != step_number) {
      finish(step);
      step = reply.add_steps();
      step->set_step(step_number);
      step->set_start_ns(window.first);
      step->set_dur_ns(0);
      slowest = -1;
    }
    const RankTime& time = by_rank[rank];
    v1::RankStep* r = step->add_ranks();
    r->set_rank(rank);
    r->set_start_ns(window.first);
    r->set_dur_ns(window.second - window.first);
    r->set_compute_ns(time.compute.Measure(window.first, window.second));
    r->set_communication_ns(
        time.communication.Measure(window.first, window.second));
    r->set_overlap_ns(time.overlap.Measure(window.first, window.second));
    r->set_setup_ns(time.setup.Measure(window.first, window.second));
    // Sums for now; finish() turns them into means.
    step->set_compute_ns(step->compute_ns() + r->compute_ns());
    step->set_communication_ns(step->communication_ns() +
                               r->communication_ns());
    step->set_overlap_ns(step->overlap_ns() + r->overlap_ns());
    step->set_setup_ns(step->setup_ns() + r->setup_ns());
    const int64_t end =
        std::max(step->start_ns() + step->dur_ns(), window.second);
    step->set_start_ns(std::min(step->start_ns(), window.first));
    step->set_dur_ns(end - step->start_ns());
    if (r->dur_ns() > slowest) {
      slowest = r->dur_ns();
      step->set_slowest_rank(rank);
    }
  }
  finish(step);
  return reply;
}

void KeepRankSteps(std::optional<int32_t> rank, v1::StepsReply* reply) {
  for (v1::StepSummary& step : *reply->mutable_steps()) {
    auto* ranks = step.mutable_ranks();
    int kept = 0;
    for (int i = 0; i < ranks->size(); ++i) {
      if (rank && ranks->Get(i).rank() == *rank) ranks->SwapElements(i, kept++);
    }
    ranks->DeleteSubrange(kept, ranks->size() - kept);
  }
}

}  // namespace meridian
