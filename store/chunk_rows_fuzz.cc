// libFuzzer entry point: arbitrary bytes as a ClickHouse scan's result
// (chunk_rows.h), merged as a scan merges them (chunk_merge.h). Each run
// ends with spans or an error; never a crash, a hang or a read out of
// bounds, whatever the ids, counts, dictionaries or chunks say.
#include <cstddef>
#include <cstdint>

#include "store/chunk_merge.h"
#include "store/chunk_rows.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view input(reinterpret_cast<const char*>(data), size);
  size_t at = 0;
  meridian::ChunkRowSource source(
      {[&](size_t) -> absl::StatusOr<absl::string_view> {
         return input.substr(at);
       },
       [&](size_t n) { at += n; }, [] { return true; }});
  int64_t spans = 0;
  meridian::MergeChunks(
      &source, {}, INT64_MIN, INT64_MAX,
      [&](const meridian::StoredSpan&) { return ++spans < 1000000; }, nullptr)
      .IgnoreError();
  return 0;
}
