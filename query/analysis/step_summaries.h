// StepSummaries: a job's per-step summaries, made as steps complete and
// stored with the job, so that `steps` and `stragglers` over a whole job
// read summaries, not spans.
//
// A step's summary (v1::StoredStep) is its StepSummary (every rank's
// iteration time, compute, communication and overlap; the slowest rank)
// and its stragglers over the instances and messages tagged with it
// (StragglersByStep: the 100 most skewed instances, the ranks' waits). They
// are made from blocks of consecutive steps, each block loaded alone
// (JobSpans::LoadSteps: the block's window, clocks refined over it, as
// `--step N` analyses load a step) and holding about kBlockSpans spans, so
// making them takes the memory of one block whatever the job's size.
//
// Steps complete: a step is complete once every rank (process) that
// records steps has gone past it (its highest step over its tracks: Store::
// TrackLastSteps), and its summary, once made, is made again only if spans
// tagged with it arrive late (below). Later steps' are
// made too but redone when the job changes. A rank the collector has not
// heard from yet holds nothing back: summaries made before its first
// batch arrives leave it out of the steps they call complete. Update() makes
// only what is missing: the steps after the last complete one summarised,
// and the complete steps that spans written since the last update are
// tagged with (an agent's spool sent late; Store::StepsWrittenAfter). So a
// job's summaries cost one pass over its steps in all, made as it runs, and
// a finished job's are read, not made. A late span with no step (a GPU
// kernel) does not change the summary of a complete step: which step it
// falls in is known only from the placed windows of the steps.
//
// Example: a job summarised when its slowest track was at step 7 and its
// fastest at step 9 has state "complete 6, last 9"; once every track is at
// step 12, Update() makes 7..12 and the state becomes "complete 11,
// last 12".
//
// More: docs/analysis.md, "Step summaries".
#ifndef MERIDIAN_QUERY_ANALYSIS_STEP_SUMMARIES_H_
#define MERIDIAN_QUERY_ANALYSIS_STEP_SUMMARIES_H_

#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "meridian/v1/query.pb.h"
#include "store/store.h"

namespace meridian {

// Spans a block of steps holds at most (unless one step has more).
inline constexpr int64_t kBlockSpans = 200000;
// Instances a step's summary lists.
inline constexpr int kInstancesPerStep = 100;

class StepSummaries {
 public:
  // What Update() made: the summaries to store, and the state to store with
  // them (Store::SaveStepSummaries); nothing to store if `steps` is empty
  // and the state was current.
  struct Made {
    std::vector<StoredStepSummary> steps;
    StoredJobResult state;
    bool current = false;  // the stored summaries were the job's already
    int64_t blocks = 0;    // blocks of steps loaded
    // Every stored summary from this step on is replaced by `steps` (the
    // steps after the last complete one); below it, `steps` holds the
    // complete steps made again for spans that arrived late.
    int64_t remade_from = std::numeric_limits<int64_t>::max();
  };

  // Brings the summaries of `catalog`'s job up to date in memory: reads the
  // stored state and makes the summaries it lacks. NOT_FOUND if no span of
  // the job carries a step (the caller analyses the job whole).
  // RESOURCE_EXHAUSTED, naming the step, if a step alone would take more
  // than `budget` bytes (about 190 a span) to analyse. CANCELLED, with
  // nothing made, if `cancel` (if set) is true before a block of steps is
  // loaded (a block, once started, is finished; current summaries need no
  // block and are returned).
  static absl::StatusOr<Made> Update(Store& store, const JobCatalog& catalog,
                                     uint64_t budget,
                                     const std::atomic<bool>* cancel = nullptr);

  // The whole job's steps (StepsReply.from_summaries set), from the stored
  // summaries and those `made` holds (which replace stored ones of the same
  // steps). `rank` and `means_only` as in v1::StepsRequest.
  static absl::StatusOr<v1::StepsReply> Steps(Store& store,
                                              const JobCatalog& catalog,
                                              const Made& made,
                                              std::optional<int32_t> rank,
                                              bool means_only);
  // The whole job's stragglers (from_summaries set): the steps' waits
  // summed per rank (every rank of the job listed), their instances and
  // messages counted, and the `head` most skewed of their listed instances
  // (0: all listed).
  static absl::StatusOr<v1::StragglersReply> Stragglers(
      Store& store, const JobCatalog& catalog, const Made& made, int head);
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_STEP_SUMMARIES_H_
