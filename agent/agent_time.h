// The agent's clock reads: nanoseconds of a clock, and milliseconds of the
// monotonic clock its loop schedules by.
#ifndef MERIDIAN_AGENT_AGENT_TIME_H_
#define MERIDIAN_AGENT_AGENT_TIME_H_

#include <time.h>

#include <cstdint>

namespace meridian {

inline int64_t ClockNs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

inline int64_t NowMs() { return ClockNs(CLOCK_MONOTONIC) / 1000000; }

}  // namespace meridian

#endif  // MERIDIAN_AGENT_AGENT_TIME_H_
