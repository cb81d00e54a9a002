// libFuzzer entry point: any bytes, read as an IBM mpitrace text profile,
// must be read or refused with an error, never crash, hang or read out of
// bounds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "import/mpitrace_profile_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto profile = meridian::ReadMpitraceProfile(
      std::string_view(reinterpret_cast<const char*>(data), size),
      "mpi_profile.fuzz.0");
  (void)profile;
  return 0;
}
