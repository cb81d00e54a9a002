// BatchShape: how many of each element a serialized v1::Batch holds, read
// from its raw bytes before protobuf parses it. Parsing costs memory per
// element (a message of 16 MiB of empty strings parses to some 20 times its
// size); counting first lets the collector refuse a batch over its bounds
// (kMaxBatch* below) for the price of one pass over the bytes, allocating
// nothing. The collector checks the bounds here only, once.
//
// Counts the top-level repeated fields, the args of every span message and
// the size totals of every op totals (the only nested repeated fields of
// any size). A malformed message
// (truncated varint or length, a length past the end, a wire type protobuf
// does not use) is INVALID_ARGUMENT: protobuf would refuse it too.
//
// Example: a batch of 3 strings, 1 process, 1 track and 2 span messages
// with 1 arg each has strings 3, processes 1, tracks 1, spans 2, args 2.
#ifndef MERIDIAN_WIRE_BATCH_SHAPE_H_
#define MERIDIAN_WIRE_BATCH_SHAPE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace meridian {

// Per batch (an agent sends at most 16,384 spans in a batch).
inline constexpr int kMaxBatchStrings = 1 << 18;
inline constexpr int kMaxBatchProcesses = 1 << 14;
inline constexpr int kMaxBatchTracks = 1 << 16;
inline constexpr int kMaxBatchItems = 1 << 18;  // span messages + chunks;
                                                // span args

struct BatchShape {
  int64_t strings = 0;
  int64_t processes = 0;
  int64_t tracks = 0;
  int64_t spans = 0;  // span messages
  int64_t args = 0;   // of span messages
  int64_t chunks = 0;
  int64_t rings = 0;
  int64_t totals = 0;  // op_totals + process_totals
  int64_t sizes = 0;   // size totals of op_totals
};

absl::StatusOr<BatchShape> ScanBatchShape(absl::string_view bytes);

// "" if `shape` is within the per-batch bounds, else which is over.
std::string BatchShapeProblem(const BatchShape& shape);

}  // namespace meridian

#endif  // MERIDIAN_WIRE_BATCH_SHAPE_H_
