#include "common/memory.h"

#include <malloc.h>

namespace meridian {

void ReturnFreedMemory() { malloc_trim(0); }

}  // namespace meridian
