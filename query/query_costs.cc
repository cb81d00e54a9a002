#include "query/query_costs.h"

#include <algorithm>

#include "wire/span_chunk.h"

namespace meridian {
namespace {

uint64_t Spans(const JobCatalog& catalog) {
  return static_cast<uint64_t>(std::max<int64_t>(catalog.job.spans, 0));
}

}  // namespace

uint64_t ScanBytes(const JobCatalog& catalog) {
  const uint64_t tracks = std::max<uint64_t>(catalog.tracks.size(), 1);
  return std::min(Spans(catalog), tracks * kMaxChunkSpans) * kScanBytesPerSpan;
}

uint64_t SolveBytes(const JobCatalog& catalog) {
  return ScanBytes(catalog) + Spans(catalog) * kSolveBytesPerSpan;
}

uint64_t WholeBytes(const JobCatalog& catalog, uint64_t bytes_per_span) {
  return Spans(catalog) * bytes_per_span;
}

uint64_t BlockBytes(const JobCatalog& catalog, int64_t block_spans,
                    uint64_t bytes_per_span) {
  const uint64_t block = std::min(
      Spans(catalog), static_cast<uint64_t>(std::max<int64_t>(block_spans, 1)));
  return block * bytes_per_span + ScanBytes(catalog);
}

uint64_t StepsBytes(const JobCatalog& catalog, int64_t steps, int64_t job_steps,
                    uint64_t bytes_per_span) {
  const uint64_t spans = Spans(catalog);
  // At most the job's steps (a range may name steps the job lacks): no
  // overflow for a client's extreme range.
  const uint64_t asked = static_cast<uint64_t>(
      std::clamp<int64_t>(steps, 1, std::max<int64_t>(job_steps, 1)));
  const uint64_t share =
      job_steps > 0 ? spans / static_cast<uint64_t>(job_steps) * asked * 2
                    : spans;
  return std::min(spans, std::max<uint64_t>(share, kLeastStepSpans)) *
         bytes_per_span;
}

}  // namespace meridian
