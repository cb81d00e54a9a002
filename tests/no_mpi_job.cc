// A program that uses no MPI, run under `meridian run` by
// tests/mpi_capture_calls_test.cc: it records step 0 with a phase "load"
// inside through the C API, then checks its own memory map:
// libmeridian_probe.so is there, no MPI library is (libmpi*, libmpich*, Open
// MPI's libopen-*, the probe's MPI family libraries). Exit 0 and one line
// saying so, else 1 naming what it found (2 if the probe is not loaded and
// enabled).
#include <cstdio>
#include <cstring>
#include <initializer_list>

#define MERIDIAN_PROBE_OPTIONAL
#include "meridian/probe.h"

int main() {
  if (meridian_enabled == nullptr || meridian_enabled() == 0) {
    fprintf(stderr, "no_mpi_job: the probe is not loaded and enabled\n");
    return 2;
  }
  MERIDIAN_CALL(meridian_step_begin, 0);
  MERIDIAN_CALL(meridian_phase_begin, "load");
  MERIDIAN_CALL(meridian_phase_end);
  MERIDIAN_CALL(meridian_step_end);

  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == nullptr) {
    perror("no_mpi_job: /proc/self/maps");
    return 1;
  }
  bool probe = false, mpi = false;
  char line[4096];
  while (fgets(line, sizeof(line), maps) != nullptr) {
    if (strstr(line, "/libmeridian_probe.so") != nullptr) probe = true;
    for (const char* name :
         {"/libmpi", "/libopen-rte", "/libopen-pal", "/libmeridian_mpi_"}) {
      if (strstr(line, name) != nullptr) {
        fprintf(stderr, "no_mpi_job: mapped: %s", line);
        mpi = true;
      }
    }
  }
  fclose(maps);
  if (!probe || mpi) {
    fprintf(stderr, "no_mpi_job: libmeridian_probe.so %s, %s\n",
            probe ? "mapped" : "not mapped",
            mpi ? "an MPI library mapped" : "no MPI library");
    return 1;
  }
  printf("no_mpi_job: traced, libmeridian_probe.so mapped, no MPI library\n");
  return 0;
}
