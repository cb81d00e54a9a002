// The spans of a v1::Batch, whichever form they travel in: span messages
// (tools, tests, synthetic jobs) or span chunks (agents). One place for the
// facts both the agent and the collector need about them.
#ifndef MERIDIAN_WIRE_BATCH_SPANS_H_
#define MERIDIAN_WIRE_BATCH_SPANS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "meridian/v1/span.pb.h"
#include "wire/span_chunk.h"

namespace meridian {

// Spans in the batch: its span messages and its chunks' counts.
int64_t SpanCount(const v1::Batch& batch);

// Spans in the batch by the job of their track's process, in the order the
// jobs first come; a span whose track, process or job index is out of
// range counts under "" (the collector rejects such a batch).
std::vector<std::pair<std::string, int64_t>> SpansByJob(const v1::Batch& batch);

// The earliest start in the batch (0 if it has no spans), from the messages
// and the chunks' first_start_ns (checked against their data by the
// collector's validator).
int64_t MinStart(const v1::Batch& batch);

// Appends `span` to `out` with the batch's ids: name and string args are
// indexes into the batch's strings, category is the v1::Category, as in a
// wire chunk.
void AppendSpanMessage(const v1::Span& span, SpanColumns* out);

}  // namespace meridian

#endif  // MERIDIAN_WIRE_BATCH_SPANS_H_
