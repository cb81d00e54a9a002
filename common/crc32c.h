// CRC-32C (Castagnoli), the checksum of the agent's spool records.
//
// Written here because no kept library exports it on Debian 12: Google's
// crc32c library is not packaged there, absl gained absl/crc only after the
// 20220623 release Debian ships, and zlib's crc32 is a different
// polynomial. The SSE 4.2 `crc32` instruction computes it where the CPU has
// it (every x86-64 server of the last decade); a table serves elsewhere.
//
// Crc32c("123456789") == 0xE3069283 (the standard check value); extending
// is chaining: Crc32c(b, Crc32c(a)) == Crc32c(a + b).
#ifndef MERIDIAN_COMMON_CRC32C_H_
#define MERIDIAN_COMMON_CRC32C_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace meridian {

uint32_t Crc32c(std::string_view data, uint32_t crc = 0);

}  // namespace meridian

#endif  // MERIDIAN_COMMON_CRC32C_H_
