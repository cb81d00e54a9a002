// SpanChunk: the columnar, compressed form of one track's spans, from the
// agent to the store.
//
// A chunk holds up to kMaxChunkSpans spans of one track, sorted by start
// time (ties keep the order they were added in). Each field is one column;
// each column is a run of LEB128 varints, most of them the zigzag-coded
// difference from the previous value of the same column, so a column whose
// value repeats (an operation, a communicator, a step) costs one zero byte
// per span before compression and almost nothing after it. Optional fields
// (peer, tag, seq, step, partition) have a presence bit in the `flags`
// column and a value only where present. A column that holds nothing but
// defaults is left out. The whole block is one zstd frame.
//
// Example: three spans of one thread
//   start 1000, 1500, 1500   dur 400, 0, 20   name 7, 7, 9   step -, 3, 3
// encode as
//   start deltas 0, 500, 0     (from the header's base start 1000)
//   dur          400, 0, 20
//   name         zz(7), 0, zz(2)
//   flags        0, kHasStep, kHasStep
//   step         zz(3), 0      (present values only)
// and every other column is absent.
//
// Ids in a chunk are whatever the producer and consumer agree on: on the
// wire, `name` and the string ids of args are indexes into the batch's
// string table and `category` is a v1::Category; in the store, `name` is an
// operation id, `category` is 0, and string ids are the store's.
//
// DecodeSpanChunk treats its input as hostile: every length, count and
// varint is checked, the decompressed size is bounded, and an error names
// the column that is wrong. Thread-compatible.
#ifndef MERIDIAN_WIRE_SPAN_CHUNK_H_
#define MERIDIAN_WIRE_SPAN_CHUNK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace meridian {

// At most this many spans in one chunk, and this many args over its spans.
inline constexpr int64_t kMaxChunkSpans = 65536;
inline constexpr int64_t kMaxChunkArgs = 4 * kMaxChunkSpans;

// One argument of a span. For kString, `value` is a string id.
struct ChunkArg {
  enum class Type : uint8_t { kInt = 0, kString = 1, kReal = 2 };
  uint32_t key = 0;  // string id
  Type type = Type::kInt;
  int64_t value = 0;  // kInt: the value; kString: a string id
  double real = 0;    // kReal
};

// Spans as columns: entry i of every per-span vector is span i.
struct SpanColumns {
  enum Flag : uint8_t {
    kHasPeer = 1,
    kHasTag = 2,
    kHasSeq = 4,
    kHasStep = 8,
    kHasPartition = 16,
  };

  std::vector<int64_t> start_ns;
  std::vector<int64_t> dur_ns;
  std::vector<uint32_t> name;
  std::vector<uint32_t> category;
  std::vector<uint32_t> kind;  // v1::SpanKind
  std::vector<uint8_t> flags;  // Flag bits: which optional fields are set
  std::vector<int64_t> bytes;
  std::vector<int32_t> peer;  // 0 where not kHasPeer; likewise below
  std::vector<int32_t> tag;
  std::vector<uint64_t> comm;
  std::vector<uint32_t> comm_size;
  std::vector<uint64_t> seq;
  std::vector<int64_t> step;
  std::vector<int32_t> partition;
  std::vector<uint64_t> correlation;
  std::vector<double> value;
  // On the wire: the index of the probe's ring record the span came from
  // (SpanChunk.ring names the ring), so the collector can tell records it
  // already stored from new ones after an agent restart. 0 in the store.
  std::vector<uint64_t> record;
  // Span i's args are args[arg_end[i-1] .. arg_end[i]) (arg_end[-1] = 0).
  std::vector<uint32_t> arg_end;
  std::vector<ChunkArg> args;

  size_t size() const { return start_ns.size(); }
  void Clear();
  // Appends a span with the given required fields and every other field at
  // its default; returns its index. Set the others through the vectors.
  size_t Add(int64_t start_ns, int64_t dur_ns, uint32_t name, uint32_t category,
             uint32_t kind);
  // Appends an arg to the last span added.
  void AddArg(const ChunkArg& arg);
  // Copies span i of `from` (args included) to the end.
  void AppendFrom(const SpanColumns& from, size_t i);
};

// Encodes `spans` (1 .. kMaxChunkSpans of them, at most kMaxChunkArgs args)
// sorted by start; ties keep their order. INVALID_ARGUMENT if the count is
// out of range or a column's length differs from the span count.
absl::StatusOr<std::string> EncodeSpanChunk(const SpanColumns& spans);

// Decodes a chunk into `out` (cleared first), in start order. On error `out`
// is unspecified and the message names the column.
absl::Status DecodeSpanChunk(absl::string_view chunk, SpanColumns* out);

}  // namespace meridian

#endif  // MERIDIAN_WIRE_SPAN_CHUNK_H_
