// ChunkRowSource: the ChunkSource (chunk_merge.h) of a ClickHouse store's
// scan. Its rows arrive as RowBinary (row_binary.h) in scan order:
//   id Int64, track Int64, first_start Int64, op_ids Array(Int64),
//   strings Array(String), data String (a span chunk, wire/span_chunk.h)
// read from a stream as they arrive (ClickHouseRows). Whatever the bytes,
// a read gives a chunk or an error (DATA_LOSS naming what broke off), never
// a crash: chunk_rows_fuzz.cc feeds it arbitrary bytes.
#ifndef MERIDIAN_STORE_CHUNK_ROWS_H_
#define MERIDIAN_STORE_CHUNK_ROWS_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "store/chunk_merge.h"

namespace meridian {

// The stream the rows come from: Fill(n) gives the bytes received and not
// consumed, at least n unless the stream ended first; Consume(n) drops n.
struct RowStream {
  std::function<absl::StatusOr<absl::string_view>(size_t)> fill;
  std::function<void(size_t)> consume;
  std::function<bool()> ended;
};

class ChunkRowSource final : public ChunkSource {
 public:
  explicit ChunkRowSource(RowStream stream) : stream_(std::move(stream)) {}
  absl::StatusOr<std::optional<int64_t>> PeekFirstStart() override;
  absl::StatusOr<bool> Take(MergeChunk* out) override;
  // Chunks carry their strings: a lookup is DATA_LOSS.
  absl::StatusOr<std::string> LookupString(int64_t id) override;

 private:
  RowStream stream_;
};

}  // namespace meridian

#endif  // MERIDIAN_STORE_CHUNK_ROWS_H_
