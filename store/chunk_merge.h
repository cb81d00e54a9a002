// MergeChunks: a Scan's merge, the same for every store. Stored chunks
// arrive in order of first start; a chunk is decoded once the merge's next
// span starts at or after its first start, so spans leave in time order
// however the chunks of different tracks (or one track's chunks from
// different drains) overlap, and memory holds only the chunks that overlap
// in time, each cut to its spans in the range as it is decoded (and one
// chunk whole: the one being decoded). Example, two tracks:
//   chunk A (track 1): starts 10, 30, 50      chunk B (track 2): 20, 30
//   open A (first 10) -> emit 10; B's first 20 <= A's next 30: open B ->
//   emit 20 (B), 30 (A: track 1 before track 2), 30 (B), 50 (A).
// The spans leave in batches, sorted: each batch is the open chunks' spans
// that start before the next chunk's first start (and within a width kept
// near 16,384 spans a batch), so the order is the same as one span at a
// time.
#ifndef MERIDIAN_STORE_CHUNK_MERGE_H_
#define MERIDIAN_STORE_CHUNK_MERGE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "store/store.h"
#include "wire/span_chunk.h"

namespace meridian {

// One chunk, decoded, as a store's ChunkSource gives it.
struct MergeChunk {
  int64_t id = 0;  // the store's: ties between equal starts and tracks
  int64_t track = 0;
  SpanColumns spans;  // absolute times
  // How the chunk names operations and strings: when empty, a span's name
  // is its operation id and an arg's strings are string ids (LookupString);
  // otherwise they index these.
  std::vector<int64_t> op_ids;
  std::vector<std::string> strings;
};

// The chunks a Scan may need, ascending by (first start, id).
class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // The next chunk's first start (absolute ns), or nullopt at the end.
  virtual absl::StatusOr<std::optional<int64_t>> PeekFirstStart() = 0;
  // Takes the next chunk: decodes it into `out` and returns true, or
  // returns false (leaving `out` alone) if its track is not wanted.
  // DATA_LOSS, naming the chunk, if it does not decode.
  virtual absl::StatusOr<bool> Take(MergeChunk* out) = 0;
  // The string with store id `id` (for chunks without `strings`).
  virtual absl::StatusOr<std::string> LookupString(int64_t id) = 0;
};

// Span i of `s`'s fields from its columns: all but its track, operation
// and args (which the caller names: its ids are the chunk's).
void SpanFromColumns(const SpanColumns& s, size_t i, StoredSpan* span);

// Restores the heap order of `heap` (a max-heap under `less`, as std's
// heap functions keep it) after its top element's key changed: one sift
// down, not a pop and a push (the evidence log's merge).
template <typename T, typename Less>
void SiftDown(std::vector<T>& heap, const Less& less) {
  const size_t n = heap.size();
  size_t at = 0;
  T top = heap[0];
  while (true) {
    size_t child = 2 * at + 1;
    if (child >= n) break;
    if (child + 1 < n && less(heap[child], heap[child + 1])) ++child;
    if (!less(top, heap[child])) break;
    heap[at] = heap[child];
    at = child;
  }
  heap[at] = top;
}

// Span i's args of `c` into `out`, whose elements (and their strings'
// buffers) are reused from the span before: no allocation once they are
// warm. `text` gives the text of a string id (keys, string values); its
// first error is returned.
absl::Status ArgsOf(
    const SpanColumns& c, size_t i,
    absl::FunctionRef<absl::Status(int64_t id, std::string* to)> text,
    std::vector<StoredArg>* out);
// The same for one span's `args`.
absl::Status ArgsOf(
    absl::Span<const ChunkArg> args,
    absl::FunctionRef<absl::Status(int64_t id, std::string* to)> text,
    std::vector<StoredArg>* out);

// The spans of `source`'s chunks in `range` (absolute bounds computed by the
// store: spans starting before `abs_hi` and ending at or after
// `abs_end_lo`, in the range's steps), in ascending start (ties: track id,
// then chunk id), to `visit` until it returns false.
absl::Status MergeChunks(ChunkSource* source, const ScanRange& range,
                         int64_t abs_end_lo, int64_t abs_hi,
                         const std::function<bool(const StoredSpan&)>& visit,
                         ScanStats* stats);

}  // namespace meridian

#endif  // MERIDIAN_STORE_CHUNK_MERGE_H_
