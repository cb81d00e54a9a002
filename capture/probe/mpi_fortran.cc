// MPI capture for Fortran callers. Open MPI's Fortran bindings call PMPI_*
// directly, so a Fortran program's calls never reach the C wrappers of
// mpi_wrappers.cc. The functions here take the Fortran names instead:
//   mpi_send, mpi_send_, mpi_send__, MPI_SEND   mpif.h and `use mpi`
//   mpi_send_f08_                               `use mpi_f08` (gfortran)
// and, for the persistent collectives of Open MPI 4.1's pcollreq extension,
// mpix_bcast_init, mpix_bcast_init_, mpix_bcast_init__, MPIX_BCAST_INIT and
// mpix_bcast_init_f08_ (`use mpi_f08_ext`), which call PMPIX_* directly.
// Each converts its handles, sentinels and arrays to C, calls the C wrapper
// (MPI_Send...), which records the call and runs PMPI_Send, and converts
// the results back. A Fortran call is therefore recorded exactly as the
// same C call.
//
// The Fortran ABI, as Open MPI 4.1 built with gfortran uses it: every
// argument by reference; handles are MPI_Fint; a LOGICAL is an integer,
// nonzero for true; a status is kStatusInts MPI_Fints; indices are 1-based;
// MPI_IN_PLACE, MPI_BOTTOM and MPI_STATUS(ES)_IGNORE are the addresses of
// common blocks. In mpi_f08 a handle is a type holding one integer, a status
// has the same layout as mpif.h's, and the trailing ierror is optional (a
// null pointer when absent), so one definition serves both bindings.
//
// Part of libmeridian_mpi_openmpi.so only (mpi_family.cc): MPICH's Fortran
// bindings call the C functions, so the C wrappers see its Fortran calls.
//
// One translation unit in parts, in this order (each includes the one
// before it): mpi_fortran_convert.h (conversions, the naming macro),
// mpi_fortran_point_to_point.h, mpi_fortran_collectives.h,
// mpi_fortran_rma_io.h.
#include "capture/probe/mpi_fortran_rma_io.h"

namespace meridian {
namespace mpi {

// Every Fortran name of Open MPI's in the family table (mpi_family.cc),
// each checked against mpi_family_abi.h's list (MPICH's MPI-4 group stays
// null: Open MPI 4.1 has none of it).
void FillFortranEntries(void** entries) {
#define MERIDIAN_F_ENTRY(name, lower, UPPER, count) \
  MERIDIAN_MPI_FAMILY_ENTRY(entries, name, count, void);
#define MERIDIAN_F_ENTRIES(lower, UPPER, count) \
  MERIDIAN_MPI_FORTRAN_NAMES(MERIDIAN_F_ENTRY, lower, UPPER, count)
  MERIDIAN_MPI_FORTRAN_COMMON(MERIDIAN_F_ENTRIES)
  MERIDIAN_MPI_FORTRAN_MPIX(MERIDIAN_F_ENTRIES)
#undef MERIDIAN_F_ENTRIES
#undef MERIDIAN_F_ENTRY
}

}  // namespace mpi
}  // namespace meridian
