// Which MPI family library (mpi_family_abi.h) records a process's MPI calls:
// the decisions of the MPI dispatcher (mpi_dispatch.h), kept free of the
// dynamic loader so that tests can make them with any inputs.
//
// The family is told by a symbol that only one family's library defines,
// looked up in the process once its MPI library is loaded:
//   Open MPI       ompi_mpi_comm_world (the object behind MPI_COMM_WORLD)
//   MPICH family   MPIR_Err_create_code (MPICH and the MPIs that keep its
//                  ABI: Intel MPI, Cray MPICH, MVAPICH)
// MERIDIAN_MPI_WRAPPERS, when set, decides instead:
//   openmpi, mpich   that family's library, whatever is detected
//   none             no MPI call is recorded
//   a path (a '/')   that library file
// Plain C++ and libc: this is linked into traced processes.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_FAMILY_CHOICE_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_FAMILY_CHOICE_H_

#include <cstddef>

namespace meridian {
namespace mpi {

enum class MpiFamily { kNone, kOpenMpi, kMpich, kBoth };

// The family of the MPI library in the process; `defined(symbol, context)`
// says whether the process defines `symbol`.
MpiFamily DetectFamily(bool (*defined)(const char* symbol, void* context),
                       void* context);

// What the dispatcher does: load `library` (a file name, looked for beside
// libmeridian_probe.so, or a path), or call the MPI library's functions
// untraced, saying `why` on stderr unless it is null (`why` is null too
// when `library` is set).
struct FamilyChoice {
  const char* library;  // null: untraced
  const char* why;
};

// `override_value`: MERIDIAN_MPI_WRAPPERS (null or empty when unset).
FamilyChoice ChooseFamilyLibrary(const char* override_value,
                                 MpiFamily detected);

// `file` in the directory of `probe_path` (just `file` if the path has no
// directory) into `out`; false if it does not fit in `size` bytes.
bool LibraryBesideProbe(const char* probe_path, const char* file, char* out,
                        size_t size);

}  // namespace mpi
}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_FAMILY_CHOICE_H_
