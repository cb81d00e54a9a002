// What each kind of query holds while it runs, in bytes, estimated from
// the job's catalog before anything is read: what it reserves of the
// collector's analysis budget (analysis_memory.h). The figures per span
// were measured with 40 queries at once of a 280,384-span job of 64 ranks
// (docs/PERFORMANCE.md, "Concurrent queries").
#ifndef MERIDIAN_QUERY_QUERY_COSTS_H_
#define MERIDIAN_QUERY_QUERY_COSTS_H_

#include <cstdint>

#include "store/store.h"

namespace meridian {

// An analysis of the spans it loads (spans, clocks, dependency graph),
// measured on analysis_bench's jobs.
inline constexpr uint64_t kAnalysisBytesPerSpan = 190;
// A replay holds the predicted timeline and its graph as well (peak RSS
// 438 MB against 244 MB for a critical path of 1M spans).
inline constexpr uint64_t kReplayBytesPerSpan = 2 * kAnalysisBytesPerSpan;
// A scan of a job holds each track's current chunk decoded, and the
// merge between them: about 80 bytes a span of those chunks.
inline constexpr uint64_t kScanBytesPerSpan = 80;
// A clock solve holds the job's clock evidence, its matches and the
// refinement's graph beside the scan.
inline constexpr uint64_t kSolveBytesPerSpan = 64;
// The least a read of some steps reserves, in spans.
inline constexpr int64_t kLeastStepSpans = 65536;

// A scan of the whole job: one decoded chunk per track at most.
uint64_t ScanBytes(const JobCatalog& catalog);
// A scan that solves the job's clocks as it goes (or reads them).
uint64_t SolveBytes(const JobCatalog& catalog);
// The whole job loaded, at `bytes_per_span`.
uint64_t WholeBytes(const JobCatalog& catalog, uint64_t bytes_per_span);
// A walk a block of steps at a time (streamed path and replay, step
// summaries): a block of at most `block_spans`, and the scan.
uint64_t BlockBytes(const JobCatalog& catalog, int64_t block_spans,
                    uint64_t bytes_per_span);
// `steps` of the job's `job_steps` read alone: twice their share of the
// spans (a step also reads the one before it, and steps differ), at least
// kLeastStepSpans, at most the job.
uint64_t StepsBytes(const JobCatalog& catalog, int64_t steps, int64_t job_steps,
                    uint64_t bytes_per_span);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_QUERY_COSTS_H_
