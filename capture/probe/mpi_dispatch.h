// The MPI dispatcher of libmeridian_probe.so: the probe exports every MPI
// function it records (mpi_family_abi.h lists them) as a stub that calls
// through a table, and fills the table at the first MPI call with the
// functions of the family library that matches the MPI library the program
// uses. So the probe itself needs no MPI: a process that never calls MPI
// (a PyTorch worker, a shell, mpirun) never loads one because of it.
//
// At the first call of any stub (once, under pthread_once):
//   1. If no MPI library is in the global scope (a Python extension linked
//      against libmpi and loaded RTLD_LOCAL), the loaded object that
//      defines PMPI_Init is made global (dlopen RTLD_NOLOAD | RTLD_GLOBAL),
//      as mpi4py does for Open MPI, so that the family library, and the
//      lookups of step 4, find it.
//   2. If the probe is disabled (no MERIDIAN_AGENT_SOCKET), every entry is
//      the MPI library's own function: nothing is recorded, nothing loaded.
//   3. The family is detected and the library chosen (mpi_family_choice.h),
//      then loaded (RTLD_NOW | RTLD_LOCAL) from beside libmeridian_probe.so
//      (its path as loaded, then with links resolved). Its PMPI_* and MPI
//      data symbols bind to the process's MPI library, its probe symbols to
//      this probe (probe_runtime.h): one runtime per process.
//   4. Every entry the family library has is its function; the others (all
//      of them if nothing was loaded, saying why once on stderr) are the
//      next definition of the name (dlsym RTLD_NEXT): the MPI library's.
// The program calls a wrapped MPI function only once its MPI library is
// loaded (linked, or dlopened before use), so step 3 always sees it.
//
// Cost: each MPI call goes through one acquire load and one indirect call
// more than a directly linked wrapper.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_DISPATCH_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_DISPATCH_H_

#include <atomic>

#include "capture/probe/mpi_family_abi.h"

namespace meridian {
namespace mpi {

// The function each stub calls; null until the first MPI call.
extern std::atomic<void*> g_mpi_targets[kMpiSymbolCount];

// Fills the table (once) and returns entry `index`.
void* ResolveMpiTarget(int index);

inline void* MpiTarget(int index) {
  void* target = g_mpi_targets[index].load(std::memory_order_acquire);
  return __builtin_expect(target != nullptr, 1) ? target
                                                : ResolveMpiTarget(index);
}

}  // namespace mpi
}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_DISPATCH_H_
