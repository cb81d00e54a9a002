// What both stores do with a batch's spans before they store them: gather
// them per track (CollectTrackSpans) and cut each track's spans into stored
// chunks in start order (ForEachStoreChunk). The ids stay the batch's: each
// store turns them into its own.
#ifndef MERIDIAN_STORE_TRACK_SPANS_H_
#define MERIDIAN_STORE_TRACK_SPANS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "meridian/v1/span.pb.h"
#include "wire/span_chunk.h"

namespace meridian {

// Spans of one track go into stored chunks of at most this many.
inline constexpr size_t kStoreChunkSpans = 8192;

// The batch's spans per track (index: the batch's track index), with the
// batch's ids (names and string args index its strings, categories are
// v1::Category): its span messages first, then its chunks. `decoded`, if it
// holds one entry per chunk, is the validator's decoding of them (consumed);
// otherwise they are decoded into `scratch`. `stored_below[r]` is the end of
// what the store already holds of the batch's ring range r: chunk spans from
// records below it are left out. Record indexes are 0 in the result.
absl::StatusOr<std::vector<SpanColumns>> CollectTrackSpans(
    const v1::Batch& batch, std::vector<SpanColumns>* decoded,
    const std::vector<uint64_t>& stored_below, SpanColumns* scratch);

// One stored chunk's bounds (absolute times).
struct StoreChunkBounds {
  int64_t first_start = 0;
  int64_t max_end = 0;
  int64_t max_dur = 0;
  int64_t count = 0;
  bool has_step = false;
  int64_t min_step = 0;
  int64_t max_step = 0;
};

// Sorts `spans` (one track's) by start, ties in their order, and calls
// `store` for each piece of at most kStoreChunkSpans in turn, stopping at
// its first error. `piece` is scratch for pieces that must be copied out.
absl::Status ForEachStoreChunk(
    const SpanColumns& spans, SpanColumns* piece,
    const std::function<absl::Status(const SpanColumns&,
                                     const StoreChunkBounds&)>& store);

}  // namespace meridian

#endif  // MERIDIAN_STORE_TRACK_SPANS_H_
