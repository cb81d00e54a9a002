#include "query/analysis/streamed_path.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "query/analysis/critical_path.h"
#include "query/analysis/dependency_graph.h"
#include "query/analysis/job_spans.h"
#include "query/analysis/step_blocks.h"
#include "query/clocks/job_clocks.h"

namespace meridian {

absl::StatusOr<v1::CriticalPathReply> StreamedCriticalPath(
    Store& store, const JobCatalog& catalog,
    const std::optional<StoredJobResult>& stored, int64_t block_spans,
    int64_t max_spans, ScanStats* stats) {
  auto range = store.StepRange(catalog.job.id);
  if (!range.ok()) return range.status();
  if (!*range) {
    return absl::NotFoundError(
        absl::StrCat("job ", catalog.job.name, " has no steps"));
  }
  const auto [first_step, last_step] = **range;
  // A block loads its steps and the one before: about block_spans.
  StepBlocks blocks(catalog.job.spans, last_step - first_step + 1, block_spans,
                    1);
  constexpr int64_t kBefore = std::numeric_limits<int64_t>::min() / 4;
  constexpr int64_t kAfter = std::numeric_limits<int64_t>::max() / 4;

  PathWalk walk;
  TimeWindow job{0, 0};
  bool whole = false;    // the first block was walked
  int64_t cut = kAfter;  // where the later block's time begins
  for (int64_t hi = last_step; hi >= first_step && !walk.done();) {
    const int64_t lo = std::max(first_step, hi - blocks.steps() + 1);
    const bool first_block = lo == first_step;
    const std::pair<int64_t, int64_t> cover{first_block ? kBefore : cut, cut};
    std::optional<JobClocks> clocks;
    const int64_t from = std::max(first_step, lo - 1);
    auto spans = JobSpans::LoadSteps(store, catalog, from, hi, &clocks, stats,
                                     &stored, &cover, max_spans);
    if (absl::IsNotFound(spans.status())) {  // a gap in the steps
      hi = lo - 1;
      continue;
    }
    if (absl::IsResourceExhausted(spans.status())) {
      if (blocks.Halve(hi - lo + 1)) continue;
      return absl::ResourceExhaustedError(absl::StrCat(
          "job ", catalog.job.name, "'s step ", hi,
          from < hi ? " and the step before it" : "",
          first_block ? ", with the time before its first step," : "",
          hi == last_step ? ", with the time after its last step," : "",
          from < hi ? " hold" : " holds", " more than ", max_spans, " spans"));
    }
    if (!spans.ok()) return spans.status();
    blocks.Fitted();
    if (!clocks || !clocks->from_stored()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "job ", catalog.job.name,
          ": its stored clock solution is not of the job as it stands"));
    }
    TimeWindow window = JobWindow(*spans);
    if (hi == last_step) job.end = window.end;
    if (cut == kAfter) cut = window.end;
    // Every span from the first start of the steps read on is there (the
    // read's window); earlier, only those of these steps.
    int64_t complete_from = kAfter;
    int64_t own_start = kAfter;  // the first start of steps lo..hi
    for (const JobSpan& span : spans->spans()) {
      if (!span.has_step || span.step < lo - 1 || span.step > hi) continue;
      complete_from = std::min(complete_from, span.start);
      if (span.step >= lo) own_start = std::min(own_start, span.start);
    }
    if (first_block) {
      job.start = window.start;
    } else {
      // The later blocks' time begins at the first start of steps lo..hi
      // (step lo's, but for a gap); a block whose own steps have no span
      // walks nothing (the earlier one, read up to the cut, does).
      window.start = std::min(own_start, cut);
    }
    window.end = cut;
    const DependencyGraph graph(*spans);
    walk.Back(graph, window, first_block, complete_from);
    whole = first_block;
    cut = window.start;
    hi = lo - 1;
  }
  if (!whole) {  // the latest steps hold no span the path can end at
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", catalog.job.name,
        ": no span of its last steps ends the path (only asynchronous "
        "calls); analyse one step (--step N)"));
  }
  v1::CriticalPathReply reply = std::move(walk).Finish(job);
  reply.set_job(catalog.job.name);
  return reply;
}

}  // namespace meridian
