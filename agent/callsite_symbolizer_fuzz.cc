// libFuzzer entry point: any bytes, as a call site a traced process wrote,
// are symbolized or refused without crashing; what is no absolute path with
// a hex address gives "".
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "agent/callsite_symbolizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static meridian::CallsiteSymbolizer* symbolizer =
      new meridian::CallsiteSymbolizer();
  const absl::string_view raw(reinterpret_cast<const char*>(data), size);
  const std::string site = symbolizer->Symbolize(raw);
  if (!site.empty() && (raw.empty() || raw[0] != '/')) abort();
  return 0;
}
