#include "common/memory.h"

#include <malloc.h>

namespace meridian {

void ReturnFreedMemory() { malloc_trim(0); }

bool ReuseFreedMemory() {
  // Setting either turns off glibc's own adjustment of both.
  return mallopt(M_MMAP_THRESHOLD, kReuseMmapThreshold) == 1 &&
         mallopt(M_TRIM_THRESHOLD, kReuseTrimThreshold) == 1;
}

}  // namespace meridian
