/* annotated.c: a C program annotated with Meridian's C API, the smallest
 * complete one. Three steps, each a "compute" phase and a "loss" counter.
 * docs/agent.md ("Annotate a C or C++ program") builds it both ways against
 * an installed prefix:
 *
 *   cc -I PREFIX/include annotated.c -o annotated \
 *      -L PREFIX/lib -lmeridian_probe -Wl,-rpath,PREFIX/lib
 *   cc -DMERIDIAN_PROBE_OPTIONAL -I PREFIX/include annotated.c -o annotated
 *
 * and runs it under `meridian run`. Linked, it needs the probe to start;
 * built with MERIDIAN_PROBE_OPTIONAL, it runs anywhere, and records only
 * when `meridian run` preloads the probe. Untraced, either way, every call
 * returns at once. */
#include <stdio.h>

#include "meridian/probe.h"

int main(void) {
  double loss = 1.0;
  volatile double sum = 0; /* the work of a step, kept by the compiler */
  for (int step = 0; step < 3; ++step) {
    MERIDIAN_CALL(meridian_step_begin, step);
    MERIDIAN_CALL(meridian_phase_begin, "compute");
    for (int i = 0; i < 1000000; ++i) sum += i * 1e-9;
    MERIDIAN_CALL(meridian_phase_end);
    loss /= 2;
    MERIDIAN_CALL(meridian_counter, "loss", loss);
    MERIDIAN_CALL(meridian_step_end);
  }
  printf("3 steps, loss %g\n", loss);
  return 0;
}
