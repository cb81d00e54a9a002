/* meridian/probe.h: annotate what Meridian's hooks cannot see.
 *
 * Steps, framework phases (forward, backward, optimizer), queue phases as
 * BytePS and Horovod show them (negotiate, wait for data, fusion-buffer
 * copy, push, pull...), instant events and counters. The functions live in
 * libmeridian_probe.so, which `meridian run` preloads; each call records
 * into the calling thread's shared-memory ring without a system call, lock
 * or allocation (a name's first use interns it once). When the program is
 * not traced (no MERIDIAN_AGENT_SOCKET), every call returns at once.
 *
 * To build a program that runs with or without the probe, define
 * MERIDIAN_PROBE_OPTIONAL before including this header: the functions are
 * then weak symbols, null unless the probe is loaded, and MERIDIAN_CALL
 * calls one only if it is there:
 *
 *   #define MERIDIAN_PROBE_OPTIONAL
 *   #include "meridian/probe.h"
 *   MERIDIAN_CALL(meridian_step_begin, step);
 *
 * Times are CLOCK_MONOTONIC nanoseconds (meridian_now_ns); the node agent
 * maps them to the wall clock. Names are UTF-8, at most 4096 bytes.
 * Thread-safe. Up to 64 threads per process record events.
 */
#ifndef MERIDIAN_PROBE_H_
#define MERIDIAN_PROBE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef MERIDIAN_PROBE_OPTIONAL
#define MERIDIAN_API __attribute__((weak))
#define MERIDIAN_CALL(fn, ...) \
  do {                         \
    if (fn) fn(__VA_ARGS__);   \
  } while (0)
#else
#define MERIDIAN_API __attribute__((visibility("default")))
#define MERIDIAN_CALL(fn, ...) fn(__VA_ARGS__)
#endif

/* 1 if this process records for a node agent, else 0. */
MERIDIAN_API int meridian_enabled(void);

/* The probe's clock: CLOCK_MONOTONIC in nanoseconds. */
MERIDIAN_API uint64_t meridian_now_ns(void);

/* Training step `step` begins: every event until meridian_step_end carries
 * it, and MERIDIAN_START_STEP/MERIDIAN_END_STEP or `meridian trace` decide by
 * it what is recorded. meridian_step_end records a span named "step" for a
 * step recorded from its beginning to its end (not for one a recording
 * window opened or closed in: that step is partial). */
MERIDIAN_API void meridian_step_begin(int64_t step);
MERIDIAN_API void meridian_step_end(void);

/* A phase of this thread ("forward", "backward", "optimizer"...): begin and
 * end nest, up to 32 deep; an end without a begin is ignored. */
MERIDIAN_API void meridian_phase_begin(const char* name);
MERIDIAN_API void meridian_phase_end(void);

/* One phase of a queued operation, timed by the caller, on a track of its
 * own named `queue` (a tensor or a queue: "grad.conv1", "PUSH"...); a null
 * `queue` puts it on this thread. `bytes` is the payload (0 if none),
 * `partition` the BytePS partition (-1 if none). */
MERIDIAN_API void meridian_queue_phase(const char* queue, const char* phase,
                                       uint64_t start_ns, uint64_t end_ns,
                                       int64_t bytes, int32_t partition);

/* A point in time on this thread. */
MERIDIAN_API void meridian_instant(const char* name);

/* A sampled value ("loss", "tokens/s", "fusion buffer bytes"). */
MERIDIAN_API void meridian_counter(const char* name, double value);

#ifdef __cplusplus
}
#endif

#endif /* MERIDIAN_PROBE_H_ */
