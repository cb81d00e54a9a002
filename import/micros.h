// Trace-file times: JSON numbers of microseconds ("12", "12.345",
// "1.5e3") converted to integer nanoseconds exactly, from the number's
// text rather than through a double (epoch microseconds with three
// decimals do not fit a double's 53 bits).
#ifndef MERIDIAN_IMPORT_MICROS_H_
#define MERIDIAN_IMPORT_MICROS_H_

#include <cstdint>
#include <string_view>

namespace meridian {

// Parses `text`, a JSON number of microseconds, into nanoseconds, rounding
// digits below 1 ns half away from zero. False if it is not a JSON number
// or its value does not fit an int64 of nanoseconds.
bool MicrosToNs(std::string_view text, int64_t* ns);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_MICROS_H_
