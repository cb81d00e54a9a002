// The spans of a v1::Batch, whichever form they travel in: span messages
// (tools, tests, synthetic jobs) or span chunks (agents). One place for the
// facts both the agent and the collector need about them.
#ifndef MERIDIAN_COMMON_BATCH_SPANS_H_
#define MERIDIAN_COMMON_BATCH_SPANS_H_

#include <cstdint>

#include "meridian/v1/span.pb.h"
#include "wire/span_chunk.h"

namespace meridian {

// Spans in the batch: its span messages and its chunks' counts.
int64_t SpanCount(const v1::Batch& batch);

// The earliest start in the batch (0 if it has no spans), from the messages
// and the chunks' first_start_ns (checked against their data by the
// collector's validator).
int64_t MinStart(const v1::Batch& batch);

// Appends `span` to `out` with the batch's ids: name and string args are
// indexes into the batch's strings, category is the v1::Category, as in a
// wire chunk.
void AppendSpanMessage(const v1::Span& span, SpanColumns* out);

}  // namespace meridian

#endif  // MERIDIAN_COMMON_BATCH_SPANS_H_
