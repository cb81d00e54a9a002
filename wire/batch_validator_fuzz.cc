// libFuzzer entry point: any bytes, parsed as a Batch and validated, must
// be refused or come out storable (every string valid UTF-8 of at most
// kMaxStringBytes, every kept chunk span within the rules), never crash,
// hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "common/utf8.h"
#include "wire/batch_validator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meridian::v1::Batch batch;
  if (!batch.ParseFromArray(data, static_cast<int>(size))) return 0;
  std::vector<meridian::SpanColumns> decoded;
  meridian::BatchRepairs repairs;
  if (!meridian::ValidateBatch(&batch, &decoded, &repairs).ok()) return 0;
  for (const std::string& s : batch.strings()) {
    if (s.size() > meridian::kMaxStringBytes || !meridian::IsValidUtf8(s)) {
      abort();
    }
  }
  if (decoded.size() != static_cast<size_t>(batch.chunks_size())) abort();
  for (const meridian::SpanColumns& c : decoded) {
    for (size_t i = 0; i < c.size(); ++i) {
      if (c.name[i] >= static_cast<uint32_t>(batch.strings_size())) abort();
      const std::string problem = meridian::SpanProblem(
          {batch.strings(c.name[i]).size(), c.category[i], c.kind[i],
           c.start_ns[i], c.dur_ns[i], c.bytes[i], c.value[i]});
      if (!problem.empty()) abort();
    }
  }
  return 0;
}
