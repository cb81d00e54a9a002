// The entry point of an MPI family library (libmeridian_mpi_openmpi.so,
// libmeridian_mpi_mpich.so): the table of its wrappers in the order of
// mpi_family_abi.h, each checked at compile time against the list.
//
// The library is mpi_wrappers.cc and its family's Fortran wrappers
// (mpi_fortran.cc for Open MPI, mpi_fortran_f08_mpich.cc for MPICH) built
// against one family's mpi.h. It is not linked against any libmpi, nor
// against libmeridian_probe.so: libmeridian_probe.so's dispatcher loads it
// once the program's MPI library is in the process, and its undefined
// symbols bind there: PMPI_* and MPI's objects (ompi_mpi_comm_world) to the
// MPI library, the probe runtime (probe_runtime.h) to the probe. Only
// meridian_mpi_family_v1 is exported (mpi_family.lds): the wrappers' calls
// to one another (the Fortran ones call the C ones) stay inside the
// library.
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>  // MPIX_Bcast_init & co (the pcollreq extension)
#endif

#include "capture/probe/mpi_family_abi.h"

#if defined(OPEN_MPI)
#define MERIDIAN_MPI_FAMILY_NAME "openmpi"
#elif defined(MPICH_VERSION)
#define MERIDIAN_MPI_FAMILY_NAME "mpich"
#else
#error "mpi.h is neither Open MPI's nor MPICH's"
#endif

namespace meridian {
namespace mpi {

#if defined(OPEN_MPI)
// mpi_fortran.cc: Open MPI's Fortran bindings call PMPI_* directly, so the
// Fortran names are wrapped too. MPICH's call the C functions (MPI_Send),
// which the dispatcher sends here: its Fortran entries stay null and go to
// MPICH's own bindings.
void FillFortranEntries(void** entries);
#else
// mpi_fortran_f08_mpich.cc: MPICH's mpi_f08 calls without a buffer
// (mpi_wait_f08_...) call PMPI_* directly, so those names are wrapped;
// its other Fortran entries stay null and go to MPICH's own bindings.
void FillMpichF08Entries(void** entries);
#endif

namespace {

void* g_entries[kMpiSymbolCount];
MpiFamilyTable g_table;

void FillCEntries(void** entries) {
#define MERIDIAN_C_ENTRY(name, count) \
  MERIDIAN_MPI_FAMILY_ENTRY(entries, name, count, int);
  MERIDIAN_MPI_C_COMMON(MERIDIAN_C_ENTRY)
#if defined(OPEN_MPI)
  MERIDIAN_MPI_C_MPIX(MERIDIAN_C_ENTRY)
#else
  MERIDIAN_MPI_C_MPI4(MERIDIAN_C_ENTRY)
#endif
#undef MERIDIAN_C_ENTRY
}

// Called once, under the dispatcher's pthread_once.
const MpiFamilyTable* Table() {
  FillCEntries(g_entries);
#if defined(OPEN_MPI)
  FillFortranEntries(g_entries);
#else
  FillMpichF08Entries(g_entries);
#endif
  g_table = {kMpiSymbolListHash, kMpiSymbolCount, MERIDIAN_MPI_FAMILY_NAME,
             g_entries};
  return &g_table;
}

}  // namespace
}  // namespace mpi
}  // namespace meridian

extern "C" __attribute__((visibility("default")))
const meridian::mpi::MpiFamilyTable*
meridian_mpi_family_v1(void) {
  return meridian::mpi::Table();
}
