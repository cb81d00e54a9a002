// The MPI functions libmeridian_probe.so exports (mpi_family_abi.h): each
// passes its arguments, as pointer-sized integers, to the function the
// dispatch table holds for it (mpi_dispatch.h). No mpi.h: the probe is the
// same for every MPI.
//
// What the preprocessor writes for MPI_Send (6 parameters):
//   int MPI_Send(A a0, A a1, A a2, A a3, A a4, A a5) {
//     return reinterpret_cast<int (*)(A, A, A, A, A, A)>(
//         MpiTarget(kSym_MPI_Send))(a0, a1, a2, a3, a4, a5);
//   }
// (with MERIDIAN_CALLSITES=1, each stub first keeps its return address for
// the call site, unless an outer MPI call did: callsite.h) and, Fortran
// functions returning nothing,
// for mpi_send_ (7):
//   void mpi_send_(A a0, ..., A a6) { ...(MpiTarget(kSym_mpi_send_))(...); }
#include <cstdint>

#include "capture/probe/callsite.h"
#include "capture/probe/mpi_dispatch.h"

namespace {

using A = intptr_t;

}  // namespace

// Parameters, their types and the arguments, for 0 to 14 parameters.
#define MERIDIAN_P0 void
#define MERIDIAN_P1 A a0
#define MERIDIAN_P2 MERIDIAN_P1, A a1
#define MERIDIAN_P3 MERIDIAN_P2, A a2
#define MERIDIAN_P4 MERIDIAN_P3, A a3
#define MERIDIAN_P5 MERIDIAN_P4, A a4
#define MERIDIAN_P6 MERIDIAN_P5, A a5
#define MERIDIAN_P7 MERIDIAN_P6, A a6
#define MERIDIAN_P8 MERIDIAN_P7, A a7
#define MERIDIAN_P9 MERIDIAN_P8, A a8
#define MERIDIAN_P10 MERIDIAN_P9, A a9
#define MERIDIAN_P11 MERIDIAN_P10, A a10
#define MERIDIAN_P12 MERIDIAN_P11, A a11
#define MERIDIAN_P13 MERIDIAN_P12, A a12
#define MERIDIAN_P14 MERIDIAN_P13, A a13
#define MERIDIAN_T0
#define MERIDIAN_T1 A
#define MERIDIAN_T2 MERIDIAN_T1, A
#define MERIDIAN_T3 MERIDIAN_T2, A
#define MERIDIAN_T4 MERIDIAN_T3, A
#define MERIDIAN_T5 MERIDIAN_T4, A
#define MERIDIAN_T6 MERIDIAN_T5, A
#define MERIDIAN_T7 MERIDIAN_T6, A
#define MERIDIAN_T8 MERIDIAN_T7, A
#define MERIDIAN_T9 MERIDIAN_T8, A
#define MERIDIAN_T10 MERIDIAN_T9, A
#define MERIDIAN_T11 MERIDIAN_T10, A
#define MERIDIAN_T12 MERIDIAN_T11, A
#define MERIDIAN_T13 MERIDIAN_T12, A
#define MERIDIAN_T14 MERIDIAN_T13, A
#define MERIDIAN_A0
#define MERIDIAN_A1 a0
#define MERIDIAN_A2 MERIDIAN_A1, a1
#define MERIDIAN_A3 MERIDIAN_A2, a2
#define MERIDIAN_A4 MERIDIAN_A3, a3
#define MERIDIAN_A5 MERIDIAN_A4, a4
#define MERIDIAN_A6 MERIDIAN_A5, a5
#define MERIDIAN_A7 MERIDIAN_A6, a6
#define MERIDIAN_A8 MERIDIAN_A7, a7
#define MERIDIAN_A9 MERIDIAN_A8, a8
#define MERIDIAN_A10 MERIDIAN_A9, a9
#define MERIDIAN_A11 MERIDIAN_A10, a10
#define MERIDIAN_A12 MERIDIAN_A11, a11
#define MERIDIAN_A13 MERIDIAN_A12, a12
#define MERIDIAN_A14 MERIDIAN_A13, a13

// Without MERIDIAN_CALLSITES the stub is one load, a branch and a tail
// call; with it, it keeps its return address for the call's duration.
#define MERIDIAN_C_STUB(name, count)                                           \
  __attribute__((visibility("default"))) int name(MERIDIAN_P##count) {         \
    using Target = int (*)(MERIDIAN_T##count);                                 \
    const Target target = reinterpret_cast<Target>(                            \
        meridian::mpi::MpiTarget(meridian::mpi::kSym_##name));                 \
    if (__builtin_expect(!meridian::probe::g_event.callsites, 1)) {            \
      return target(MERIDIAN_A##count);                                        \
    }                                                                          \
    const meridian::probe::OutermostMpiCall call(__builtin_return_address(0)); \
    return target(MERIDIAN_A##count);                                          \
  }

#define MERIDIAN_F_STUB(name, lower, UPPER, count)                             \
  __attribute__((visibility("default"))) void name(MERIDIAN_P##count) {        \
    using Target = void (*)(MERIDIAN_T##count);                                \
    const Target target = reinterpret_cast<Target>(                            \
        meridian::mpi::MpiTarget(meridian::mpi::kSym_##name));                 \
    if (__builtin_expect(!meridian::probe::g_event.callsites, 1)) {            \
      return target(MERIDIAN_A##count);                                        \
    }                                                                          \
    const meridian::probe::OutermostMpiCall call(__builtin_return_address(0)); \
    target(MERIDIAN_A##count);                                                 \
  }
#define MERIDIAN_F_STUBS(lower, UPPER, count) \
  MERIDIAN_MPI_FORTRAN_NAMES(MERIDIAN_F_STUB, lower, UPPER, count)

extern "C" {
MERIDIAN_MPI_C_FUNCTIONS(MERIDIAN_C_STUB)
MERIDIAN_MPI_FORTRAN_FUNCTIONS(MERIDIAN_F_STUBS)
}  // extern "C"
