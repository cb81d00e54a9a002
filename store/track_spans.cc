#include "store/track_spans.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "wire/batch_spans.h"

namespace meridian {

absl::StatusOr<std::vector<SpanColumns>> CollectTrackSpans(
    const v1::Batch& batch, std::vector<SpanColumns>* decoded,
    const std::vector<uint64_t>& stored_below, SpanColumns* scratch) {
  std::vector<SpanColumns> by_track(batch.tracks_size());
  for (const v1::Span& span : batch.spans()) {
    AppendSpanMessage(span, &by_track[span.track()]);
  }
  for (int c = 0; c < batch.chunks_size(); ++c) {
    const v1::SpanChunk& chunk = batch.chunks(c);
    SpanColumns* wire = scratch;
    if (decoded != nullptr &&
        decoded->size() == static_cast<size_t>(batch.chunks_size())) {
      wire = &(*decoded)[c];
    } else {
      absl::Status status = DecodeSpanChunk(chunk.data(), wire);
      if (!status.ok()) return status;  // valid batches only: cannot happen
    }
    const uint64_t below =
        chunk.ring() == 0 ? 0 : stored_below[chunk.ring() - 1];
    bool all_new = true;
    for (size_t i = 0; i < wire->size() && all_new; ++i) {
      all_new = chunk.ring() == 0 || wire->record[i] >= below;
    }
    SpanColumns& out = by_track[chunk.track()];
    // Record indexes matter only on the wire: the store keeps 0.
    if (all_new && out.size() == 0) {  // the common case: no copy
      std::swap(out, *wire);
      std::fill(out.record.begin(), out.record.end(), 0);
      continue;
    }
    for (size_t i = 0; i < wire->size(); ++i) {
      if (!all_new && wire->record[i] < below) continue;
      out.AppendFrom(*wire, i);
      out.record.back() = 0;
    }
  }
  return by_track;
}

absl::Status ForEachStoreChunk(
    const SpanColumns& spans, SpanColumns* piece,
    const std::function<absl::Status(const SpanColumns&,
                                     const StoreChunkBounds&)>& store) {
  const size_t n = spans.size();
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  if (!std::is_sorted(spans.start_ns.begin(), spans.start_ns.end())) {
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return spans.start_ns[a] < spans.start_ns[b];
    });
  }
  // Spans that fit one chunk are stored as they are (EncodeSpanChunk sorts
  // them); otherwise pieces are copied out in order.
  const bool whole = n <= kStoreChunkSpans;
  for (size_t begin = 0; begin < n; begin += kStoreChunkSpans) {
    const size_t end = std::min(n, begin + kStoreChunkSpans);
    if (!whole) piece->Clear();
    StoreChunkBounds bounds;
    bounds.first_start = spans.start_ns[order[begin]];
    bounds.max_end = std::numeric_limits<int64_t>::min();
    bounds.count = static_cast<int64_t>(end - begin);
    int64_t min_step = std::numeric_limits<int64_t>::max();
    int64_t max_step = std::numeric_limits<int64_t>::min();
    for (size_t k = begin; k < end; ++k) {
      const uint32_t i = order[k];
      if (!whole) piece->AppendFrom(spans, i);
      bounds.max_end =
          std::max(bounds.max_end, spans.start_ns[i] + spans.dur_ns[i]);
      bounds.max_dur = std::max(bounds.max_dur, spans.dur_ns[i]);
      if (spans.flags[i] & SpanColumns::kHasStep) {
        min_step = std::min(min_step, spans.step[i]);
        max_step = std::max(max_step, spans.step[i]);
      }
    }
    bounds.has_step = min_step <= max_step;
    if (bounds.has_step) {
      bounds.min_step = min_step;
      bounds.max_step = max_step;
    }
    absl::Status status = store(whole ? spans : *piece, bounds);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace meridian
