// libFuzzer entry point: any bytes are counted or refused by
// ScanBatchShape, never read out of bounds; what protobuf parses, the scan
// counts the same way.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "meridian/v1/span.pb.h"
#include "wire/batch_shape.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto shape = meridian::ScanBatchShape(bytes);
  meridian::v1::Batch batch;
  if (!shape.ok() || !batch.ParseFromArray(data, static_cast<int>(size))) {
    return 0;
  }
  if (shape->strings != batch.strings_size() ||
      shape->spans != batch.spans_size() ||
      shape->chunks != batch.chunks_size()) {
    abort();
  }
  return 0;
}
