// libFuzzer entry point: DecodeSpanChunk on arbitrary bytes must return an
// error or a chunk that encodes again and decodes to the same spans, never
// crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "wire/span_chunk.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meridian::SpanColumns spans;
  absl::string_view input(reinterpret_cast<const char*>(data), size);
  if (!meridian::DecodeSpanChunk(input, &spans).ok()) return 0;
  auto again = meridian::EncodeSpanChunk(spans);
  if (!again.ok()) abort();
  meridian::SpanColumns round;
  if (!meridian::DecodeSpanChunk(*again, &round).ok()) abort();
  if (round.start_ns != spans.start_ns || round.dur_ns != spans.dur_ns ||
      round.name != spans.name || round.flags != spans.flags ||
      round.step != spans.step || round.arg_end != spans.arg_end) {
    abort();
  }
  return 0;
}
