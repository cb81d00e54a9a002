// libFuzzer entry point: any bytes, read as an Nsight Systems SQLite
// export (a database image in memory, as `meridian import` reads a file
// whole), must import or be refused with an error, never crash, hang or
// read out of bounds. Bytes that are not whole 512-byte pages are also
// read cut to whole pages, so that a mutation that cuts or inserts bytes
// still reaches SQLite and the reader, not only the reader's size check.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "import/nsight_sqlite_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meridian::ImportOptions options;
  options.file = "fuzz.sqlite";
  options.fallback_end_ns = 1764000000000000000;
  const std::string_view image(reinterpret_cast<const char*>(data), size);
  auto trace = meridian::ReadNsightSqliteImage(image, options);
  (void)trace;
  if (size % 512 != 0) {
    trace = meridian::ReadNsightSqliteImage(image.substr(0, size - size % 512),
                                            options);
  }
  return 0;
}
