#include "query/analysis/streamed_replay.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "query/analysis/dependency_graph.h"
#include "query/analysis/job_spans.h"
#include "query/analysis/replay_report.h"
#include "query/analysis/step_blocks.h"
#include "query/clocks/job_clocks.h"

namespace meridian {
namespace {

// A first start and last end (measured), and a saving summed over blocks.
struct Totals {
  int64_t start = std::numeric_limits<int64_t>::max();
  int64_t end = std::numeric_limits<int64_t>::min();
  int64_t saving = 0;
};

}  // namespace

absl::StatusOr<v1::ReplayReply> StreamedReplay(
    Store& store, const JobCatalog& catalog,
    const std::optional<StoredJobResult>& stored, const ReplayChanges& changes,
    int64_t block_spans, int64_t max_spans) {
  if (absl::Status s = CheckChanges(changes); !s.ok()) return s;
  auto range = store.StepRange(catalog.job.id);
  if (!range.ok()) return range.status();
  if (!*range) {
    return absl::NotFoundError(
        absl::StrCat("job ", catalog.job.name, " has no steps"));
  }
  const auto [first_step, last_step] = **range;
  StepBlocks blocks(catalog.job.spans, last_step - first_step + 1, block_spans);
  v1::ReplayReply reply;
  Totals job;
  std::map<int32_t, Totals> ranks;
  for (int64_t lo = first_step, hi; lo <= last_step; lo = hi + 1) {
    hi = std::min(last_step, lo + blocks.steps() - 1);
    std::optional<JobClocks> clocks;
    auto spans = JobSpans::LoadSteps(store, catalog, lo, hi, &clocks, nullptr,
                                     &stored, nullptr, max_spans);
    if (absl::IsNotFound(spans.status())) continue;  // a gap in the steps
    if (absl::IsResourceExhausted(spans.status())) {
      if (!blocks.Halve(hi - lo + 1)) {
        return absl::ResourceExhaustedError(
            absl::StrCat("job ", catalog.job.name, "'s step ", lo,
                         " holds more than ", max_spans, " spans"));
      }
      hi = lo - 1;  // the same steps again, fewer at a time
      continue;
    }
    if (!spans.ok()) return spans.status();
    if (!clocks || !clocks->from_stored()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "job ", catalog.job.name,
          ": its stored clock solution is not of the job as it stands"));
    }
    blocks.Fitted();
    const DependencyGraph graph(*spans);
    auto times = Replay(graph, changes);
    if (!times.ok()) return times.status();
    auto part = ReplayReport(graph, *times, StepRange{lo, hi}, false);
    if (!part.ok()) return part.status();
    reply.set_blocks(reply.blocks() + 1);
    // The measured extents of what the report counts: the spans tagged
    // with the block's steps.
    for (const JobSpan& s : spans->spans()) {
      if (!s.has_step || s.step < lo || s.step > hi) continue;
      for (Totals* t : {&job, &ranks[spans->tracks()[s.track].rank]}) {
        t->start = std::min(t->start, s.start);
        t->end = std::max(t->end, s.end);
      }
    }
    job.saving += part->saving_ns();
    for (const v1::ReplayRank& r : part->ranks()) {
      ranks[r.rank()].saving += r.measured_ns() - r.predicted_ns();
    }
    for (v1::ReplayStep& step : *part->mutable_steps()) {
      *reply.add_steps() = std::move(step);
    }
    reply.set_spans(reply.spans() + part->spans());
    reply.set_scaled_spans(reply.scaled_spans() + part->scaled_spans());
    reply.set_broken_dependencies(reply.broken_dependencies() +
                                  part->broken_dependencies());
  }
  if (job.end < job.start) {
    return absl::NotFoundError(
        absl::StrCat("job ", catalog.job.name, " has no steps"));
  }
  reply.set_first_step(first_step);
  reply.set_last_step(last_step);
  reply.set_measured_ns(job.end - job.start);
  reply.set_predicted_ns(reply.measured_ns() - job.saving);
  reply.set_saving_ns(job.saving);
  reply.set_saving_share(reply.measured_ns() > 0
                             ? static_cast<double>(job.saving) /
                                   static_cast<double>(reply.measured_ns())
                             : 0);
  for (const auto& [rank, t] : ranks) {
    v1::ReplayRank* r = reply.add_ranks();
    r->set_rank(rank);
    r->set_measured_ns(t.end - t.start);
    r->set_predicted_ns(t.end - t.start - t.saving);
  }
  return reply;
}

}  // namespace meridian
