// MPI capture for MPICH's `use mpi_f08` calls that take no buffer. MPICH's
// other Fortran bindings call the C functions, which the C wrappers of
// mpi_wrappers.cc record: mpif.h and `use mpi` (mpi_send_, mpi_wait_...)
// and the mpi_f08 calls with a buffer (mpi_send_f08ts_, whose buffers are
// TS 29113 descriptors, call MPI_Send). Its mpi_f08 calls without one
// (mpi_wait_f08_, mpi_barrier_f08_, mpi_init_f08_, mpi_win_fence_f08_...)
// call PMPI_* directly, so a Fortran 2008 program's waits, barriers,
// communicator and window calls, and MPI_Init itself, would go unrecorded.
// The functions here take those names in libmeridian_mpi_mpich.so
// (mpi_family.cc): each passes its arguments to the C wrapper, which
// records the call and runs PMPI_*, so the call is recorded exactly as the
// same C call.
//
// MPICH's mpi_f08 ABI, as gfortran builds it (read off Debian 12's MPICH
// 4.0 libmpichfort.so.12): every argument by reference; a handle is a type
// holding one INTEGER, which is MPICH's C handle itself (MPICH's handles
// are ints), except a file's (MPI_File_f2c); TYPE(MPI_Status) has the
// layout of C's MPI_Status; the optional ierror is a null pointer when
// absent; a LOGICAL is 1 or 0; indices are 1-based; MPI_STATUS_IGNORE,
// MPI_STATUSES_IGNORE, MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are the
// addresses of MPIR_F08_MPI_STATUS_IGNORE_OBJ,
// MPIR_F08_MPI_STATUSES_IGNORE_OBJ and the mpi_f08_link_constants module's
// variables; a CHARACTER(*) argument's length comes after the last
// parameter.
#include <limits.h>
#include <mpi.h>

#include <cstring>
#include <type_traits>

#include "capture/probe/fortran_string.h"
#include "capture/probe/mpi_family_abi.h"

#if !defined(MPICH_VERSION)
#error "MPICH's mpi_f08 ABI: build this file against MPICH's mpi.h"
#endif

// MPICH's mpi_f08 sentinels (weak: a program without Fortran has none, and
// an MPI of MPICH's ABI without them must still load this library).
extern char g_f08_status_ignore asm("MPIR_F08_MPI_STATUS_IGNORE_OBJ")
    __attribute__((weak));
extern char g_f08_statuses_ignore asm("MPIR_F08_MPI_STATUSES_IGNORE_OBJ")
    __attribute__((weak));
extern char g_f08_unweighted asm("__mpi_f08_link_constants_MOD_mpi_unweighted")
    __attribute__((weak));
extern char g_f08_weights_empty asm(
    "__mpi_f08_link_constants_MOD_mpi_weights_empty") __attribute__((weak));

namespace meridian {
namespace mpi {
namespace {

static_assert(std::is_same_v<MPI_Fint, int>, "MPI_Fint must be an int");
static_assert(std::is_same_v<MPI_Comm, int> &&
                  std::is_same_v<MPI_Request, int> &&
                  std::is_same_v<MPI_Win, int> &&
                  std::is_same_v<MPI_Group, int> &&
                  std::is_same_v<MPI_Info, int> &&
                  std::is_same_v<MPI_Message, int>,
              "MPICH's handles are the INTEGERs of its mpi_f08 types");
static_assert(sizeof(MPI_Status) == 5 * sizeof(MPI_Fint),
              "MPICH's TYPE(MPI_Status) is C's MPI_Status");

bool Is(const void* fortran, const char& sentinel) {
  return fortran != nullptr && fortran == &sentinel;
}

MPI_Status* Status(MPI_Fint* fortran) {
  if (fortran == nullptr || Is(fortran, g_f08_status_ignore)) {
    return MPI_STATUS_IGNORE;
  }
  return reinterpret_cast<MPI_Status*>(fortran);
}

MPI_Status* Statuses(MPI_Fint* fortran) {
  if (fortran == nullptr || Is(fortran, g_f08_statuses_ignore)) {
    return MPI_STATUSES_IGNORE;
  }
  return reinterpret_cast<MPI_Status*>(fortran);
}

const int* Weights(const MPI_Fint* fortran) {
  if (Is(fortran, g_f08_unweighted)) return MPI_UNWEIGHTED;
  if (Is(fortran, g_f08_weights_empty)) return MPI_WEIGHTS_EMPTY;
  return fortran;
}

void Return(MPI_Fint* ierror, int rc) {
  if (ierror != nullptr) *ierror = rc;
}

MPI_Fint Logical(int flag) { return flag != 0; }

// A C index (0-based, or MPI_UNDEFINED) as Fortran sees it.
MPI_Fint FortranIndex(int index) {
  return index == MPI_UNDEFINED ? MPI_UNDEFINED : index + 1;
}

// ---- Init and Finalize ------------------------------------------------------

void mpi_init_f08_(MPI_Fint* ierror) {
  Return(ierror, MPI_Init(nullptr, nullptr));
}

void mpi_init_thread_f08_(MPI_Fint* required, MPI_Fint* provided,
                          MPI_Fint* ierror) {
  Return(ierror, MPI_Init_thread(nullptr, nullptr, *required, provided));
}

void mpi_finalize_f08_(MPI_Fint* ierror) { Return(ierror, MPI_Finalize()); }

// ---- Requests, probes and completion ----------------------------------------

void mpi_start_f08_(MPI_Fint* request, MPI_Fint* ierror) {
  Return(ierror, MPI_Start(request));
}

void mpi_startall_f08_(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* ierror) {
  Return(ierror, MPI_Startall(*count, requests));
}

void mpi_request_free_f08_(MPI_Fint* request, MPI_Fint* ierror) {
  Return(ierror, MPI_Request_free(request));
}

void mpi_probe_f08_(MPI_Fint* source, MPI_Fint* tag, MPI_Fint* comm,
                    MPI_Fint* status, MPI_Fint* ierror) {
  Return(ierror, MPI_Probe(*source, *tag, *comm, Status(status)));
}

void mpi_iprobe_f08_(MPI_Fint* source, MPI_Fint* tag, MPI_Fint* comm,
                     MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierror) {
  int c_flag = 0;
  const int rc = MPI_Iprobe(*source, *tag, *comm, &c_flag, Status(status));
  *flag = Logical(c_flag);
  Return(ierror, rc);
}

void mpi_mprobe_f08_(MPI_Fint* source, MPI_Fint* tag, MPI_Fint* comm,
                     MPI_Fint* message, MPI_Fint* status, MPI_Fint* ierror) {
  Return(ierror, MPI_Mprobe(*source, *tag, *comm, message, Status(status)));
}

void mpi_improbe_f08_(MPI_Fint* source, MPI_Fint* tag, MPI_Fint* comm,
                      MPI_Fint* flag, MPI_Fint* message, MPI_Fint* status,
                      MPI_Fint* ierror) {
  int c_flag = 0;
  const int rc =
      MPI_Improbe(*source, *tag, *comm, &c_flag, message, Status(status));
  *flag = Logical(c_flag);
  Return(ierror, rc);
}

void mpi_wait_f08_(MPI_Fint* request, MPI_Fint* status, MPI_Fint* ierror) {
  Return(ierror, MPI_Wait(request, Status(status)));
}

void mpi_test_f08_(MPI_Fint* request, MPI_Fint* flag, MPI_Fint* status,
                   MPI_Fint* ierror) {
  int c_flag = 0;
  const int rc = MPI_Test(request, &c_flag, Status(status));
  *flag = Logical(c_flag);
  Return(ierror, rc);
}

void mpi_waitall_f08_(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* statuses,
                      MPI_Fint* ierror) {
  Return(ierror, MPI_Waitall(*count, requests, Statuses(statuses)));
}

void mpi_testall_f08_(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* flag,
                      MPI_Fint* statuses, MPI_Fint* ierror) {
  int c_flag = 0;
  const int rc = MPI_Testall(*count, requests, &c_flag, Statuses(statuses));
  *flag = Logical(c_flag);
  Return(ierror, rc);
}

void mpi_waitany_f08_(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index,
                      MPI_Fint* status, MPI_Fint* ierror) {
  int c_index = MPI_UNDEFINED;
  const int rc = MPI_Waitany(*count, requests, &c_index, Status(status));
  *index = FortranIndex(c_index);
  Return(ierror, rc);
}

void mpi_testany_f08_(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index,
                      MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierror) {
  int c_index = MPI_UNDEFINED, c_flag = 0;
  const int rc =
      MPI_Testany(*count, requests, &c_index, &c_flag, Status(status));
  *index = FortranIndex(c_index);
  *flag = Logical(c_flag);
  Return(ierror, rc);
}

// Waitsome and Testsome: the indices they fill, made 1-based.
void Some(int (*call)(int, MPI_Request*, int*, int*, MPI_Status*),
          MPI_Fint* incount, MPI_Fint* requests, MPI_Fint* outcount,
          MPI_Fint* indices, MPI_Fint* statuses, MPI_Fint* ierror) {
  const int rc =
      call(*incount, requests, outcount, indices, Statuses(statuses));
  for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; ++i) {
    indices[i] = FortranIndex(indices[i]);
  }
  Return(ierror, rc);
}

void mpi_waitsome_f08_(MPI_Fint* incount, MPI_Fint* requests,
                       MPI_Fint* outcount, MPI_Fint* indices,
                       MPI_Fint* statuses, MPI_Fint* ierror) {
  Some(MPI_Waitsome, incount, requests, outcount, indices, statuses, ierror);
}

void mpi_testsome_f08_(MPI_Fint* incount, MPI_Fint* requests,
                       MPI_Fint* outcount, MPI_Fint* indices,
                       MPI_Fint* statuses, MPI_Fint* ierror) {
  Some(MPI_Testsome, incount, requests, outcount, indices, statuses, ierror);
}

// ---- Collectives without a buffer -------------------------------------------

void mpi_barrier_f08_(MPI_Fint* comm, MPI_Fint* ierror) {
  Return(ierror, MPI_Barrier(*comm));
}

void mpi_ibarrier_f08_(MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror) {
  Return(ierror, MPI_Ibarrier(*comm, request));
}

void mpi_barrier_init_f08_(MPI_Fint* comm, MPI_Fint* info, MPI_Fint* request,
                           MPI_Fint* ierror) {
  Return(ierror, MPI_Barrier_init(*comm, *info, request));
}

// ---- Partitioned communication ----------------------------------------------

void mpi_pready_f08_(MPI_Fint* partition, MPI_Fint* request, MPI_Fint* ierror) {
  Return(ierror, MPI_Pready(*partition, *request));
}

void mpi_pready_range_f08_(MPI_Fint* low, MPI_Fint* high, MPI_Fint* request,
                           MPI_Fint* ierror) {
  Return(ierror, MPI_Pready_range(*low, *high, *request));
}

void mpi_pready_list_f08_(MPI_Fint* length, MPI_Fint* partitions,
                          MPI_Fint* request, MPI_Fint* ierror) {
  Return(ierror, MPI_Pready_list(*length, partitions, *request));
}

// ---- Communicators ----------------------------------------------------------

void mpi_comm_dup_f08_(MPI_Fint* comm, MPI_Fint* newcomm, MPI_Fint* ierror) {
  Return(ierror, MPI_Comm_dup(*comm, newcomm));
}

void mpi_comm_split_f08_(MPI_Fint* comm, MPI_Fint* color, MPI_Fint* key,
                         MPI_Fint* newcomm, MPI_Fint* ierror) {
  Return(ierror, MPI_Comm_split(*comm, *color, *key, newcomm));
}

void mpi_comm_split_type_f08_(MPI_Fint* comm, MPI_Fint* split_type,
                              MPI_Fint* key, MPI_Fint* info, MPI_Fint* newcomm,
                              MPI_Fint* ierror) {
  Return(ierror, MPI_Comm_split_type(*comm, *split_type, *key, *info, newcomm));
}

void mpi_comm_create_f08_(MPI_Fint* comm, MPI_Fint* group, MPI_Fint* newcomm,
                          MPI_Fint* ierror) {
  Return(ierror, MPI_Comm_create(*comm, *group, newcomm));
}

void mpi_comm_create_group_f08_(MPI_Fint* comm, MPI_Fint* group, MPI_Fint* tag,
                                MPI_Fint* newcomm, MPI_Fint* ierror) {
  Return(ierror, MPI_Comm_create_group(*comm, *group, *tag, newcomm));
}

void mpi_comm_free_f08_(MPI_Fint* comm, MPI_Fint* ierror) {
  Return(ierror, MPI_Comm_free(comm));
}

void mpi_comm_rank_f08_(MPI_Fint* comm, MPI_Fint* rank, MPI_Fint* ierror) {
  Return(ierror, MPI_Comm_rank(*comm, rank));
}

void mpi_comm_size_f08_(MPI_Fint* comm, MPI_Fint* size, MPI_Fint* ierror) {
  Return(ierror, MPI_Comm_size(*comm, size));
}

// Topologies: periods and reorder are LOGICALs, as C's ints are (1 or 0).
void mpi_cart_create_f08_(MPI_Fint* comm, MPI_Fint* ndims, MPI_Fint* dims,
                          MPI_Fint* periods, MPI_Fint* reorder,
                          MPI_Fint* newcomm, MPI_Fint* ierror) {
  Return(ierror,
         MPI_Cart_create(*comm, *ndims, dims, periods, *reorder, newcomm));
}

void mpi_graph_create_f08_(MPI_Fint* comm, MPI_Fint* nnodes, MPI_Fint* index,
                           MPI_Fint* edges, MPI_Fint* reorder,
                           MPI_Fint* newcomm, MPI_Fint* ierror) {
  Return(ierror,
         MPI_Graph_create(*comm, *nnodes, index, edges, *reorder, newcomm));
}

void mpi_dist_graph_create_f08_(MPI_Fint* comm, MPI_Fint* n, MPI_Fint* sources,
                                MPI_Fint* degrees, MPI_Fint* destinations,
                                MPI_Fint* weights, MPI_Fint* info,
                                MPI_Fint* reorder, MPI_Fint* newcomm,
                                MPI_Fint* ierror) {
  Return(ierror,
         MPI_Dist_graph_create(*comm, *n, sources, degrees, destinations,
                               Weights(weights), *info, *reorder, newcomm));
}

void mpi_dist_graph_create_adjacent_f08_(
    MPI_Fint* comm, MPI_Fint* indegree, MPI_Fint* sources,
    MPI_Fint* sourceweights, MPI_Fint* outdegree, MPI_Fint* destinations,
    MPI_Fint* destweights, MPI_Fint* info, MPI_Fint* reorder, MPI_Fint* newcomm,
    MPI_Fint* ierror) {
  Return(ierror,
         MPI_Dist_graph_create_adjacent(
             *comm, *indegree, sources, Weights(sourceweights), *outdegree,
             destinations, Weights(destweights), *info, *reorder, newcomm));
}

// MPI_PCONTROL(LEVEL): one argument, no ierror.
void mpi_pcontrol_f08_(MPI_Fint* level) { MPI_Pcontrol(*level); }

// ---- One-sided communication ------------------------------------------------

// baseptr: a TYPE(C_PTR) by reference, as C's void* (really void**) is.
void mpi_win_allocate_f08_(MPI_Aint* size, MPI_Fint* disp_unit, MPI_Fint* info,
                           MPI_Fint* comm, void* baseptr, MPI_Fint* win,
                           MPI_Fint* ierror) {
  Return(ierror,
         MPI_Win_allocate(*size, *disp_unit, *info, *comm, baseptr, win));
}

void mpi_win_allocate_shared_f08_(MPI_Aint* size, MPI_Fint* disp_unit,
                                  MPI_Fint* info, MPI_Fint* comm, void* baseptr,
                                  MPI_Fint* win, MPI_Fint* ierror) {
  Return(ierror, MPI_Win_allocate_shared(*size, *disp_unit, *info, *comm,
                                         baseptr, win));
}

void mpi_win_create_dynamic_f08_(MPI_Fint* info, MPI_Fint* comm, MPI_Fint* win,
                                 MPI_Fint* ierror) {
  Return(ierror, MPI_Win_create_dynamic(*info, *comm, win));
}

void mpi_win_free_f08_(MPI_Fint* win, MPI_Fint* ierror) {
  Return(ierror, MPI_Win_free(win));
}

void mpi_win_lock_f08_(MPI_Fint* lock_type, MPI_Fint* target, MPI_Fint* assert,
                       MPI_Fint* win, MPI_Fint* ierror) {
  Return(ierror, MPI_Win_lock(*lock_type, *target, *assert, *win));
}

// (int, win): a target rank, or assertions.
#define MERIDIAN_F08_WIN_INT(lower, Name)                               \
  void lower##_f08_(MPI_Fint* value, MPI_Fint* win, MPI_Fint* ierror) { \
    Return(ierror, MPI_##Name(*value, *win));                           \
  }
MERIDIAN_F08_WIN_INT(mpi_win_fence, Win_fence)
MERIDIAN_F08_WIN_INT(mpi_win_unlock, Win_unlock)
MERIDIAN_F08_WIN_INT(mpi_win_lock_all, Win_lock_all)
MERIDIAN_F08_WIN_INT(mpi_win_flush, Win_flush)
MERIDIAN_F08_WIN_INT(mpi_win_flush_local, Win_flush_local)
#undef MERIDIAN_F08_WIN_INT

// (win).
#define MERIDIAN_F08_WIN(lower, Name)                  \
  void lower##_f08_(MPI_Fint* win, MPI_Fint* ierror) { \
    Return(ierror, MPI_##Name(*win));                  \
  }
MERIDIAN_F08_WIN(mpi_win_unlock_all, Win_unlock_all)
MERIDIAN_F08_WIN(mpi_win_flush_all, Win_flush_all)
MERIDIAN_F08_WIN(mpi_win_flush_local_all, Win_flush_local_all)
MERIDIAN_F08_WIN(mpi_win_complete, Win_complete)
MERIDIAN_F08_WIN(mpi_win_wait, Win_wait)
#undef MERIDIAN_F08_WIN

// (group, assertions, win).
void mpi_win_post_f08_(MPI_Fint* group, MPI_Fint* assert, MPI_Fint* win,
                       MPI_Fint* ierror) {
  Return(ierror, MPI_Win_post(*group, *assert, *win));
}

void mpi_win_start_f08_(MPI_Fint* group, MPI_Fint* assert, MPI_Fint* win,
                        MPI_Fint* ierror) {
  Return(ierror, MPI_Win_start(*group, *assert, *win));
}

// ---- MPI-IO -----------------------------------------------------------------

// FILENAME is a CHARACTER(*), its length after the last parameter
// (fortran_string.h).
void mpi_file_open_f08_(MPI_Fint* comm, const char* filename, MPI_Fint* amode,
                        MPI_Fint* info, MPI_Fint* fh, MPI_Fint* ierror,
                        size_t filename_length) {
  char name[PATH_MAX];
  FortranString(filename, filename_length, name, sizeof(name));
  MPI_File c_fh = MPI_FILE_NULL;
  const int rc = MPI_File_open(*comm, name, *amode, *info, &c_fh);
  *fh = PMPI_File_c2f(c_fh);
  Return(ierror, rc);
}

void mpi_file_close_f08_(MPI_Fint* fh, MPI_Fint* ierror) {
  MPI_File c_fh = PMPI_File_f2c(*fh);
  const int rc = MPI_File_close(&c_fh);
  *fh = PMPI_File_c2f(c_fh);
  Return(ierror, rc);
}

}  // namespace

// The table's entries for the names above (mpi_family_abi.h's mpi_NAME_f08_).
void FillMpichF08Entries(void** entries) {
#define MERIDIAN_F08_ENTRY(name, count) \
  MERIDIAN_MPI_FAMILY_ENTRY(entries, name, count, void);
  MERIDIAN_F08_ENTRY(mpi_init_f08_, 1)
  MERIDIAN_F08_ENTRY(mpi_init_thread_f08_, 3)
  MERIDIAN_F08_ENTRY(mpi_finalize_f08_, 1)
  MERIDIAN_F08_ENTRY(mpi_start_f08_, 2)
  MERIDIAN_F08_ENTRY(mpi_startall_f08_, 3)
  MERIDIAN_F08_ENTRY(mpi_request_free_f08_, 2)
  MERIDIAN_F08_ENTRY(mpi_probe_f08_, 5)
  MERIDIAN_F08_ENTRY(mpi_iprobe_f08_, 6)
  MERIDIAN_F08_ENTRY(mpi_mprobe_f08_, 6)
  MERIDIAN_F08_ENTRY(mpi_improbe_f08_, 7)
  MERIDIAN_F08_ENTRY(mpi_wait_f08_, 3)
  MERIDIAN_F08_ENTRY(mpi_test_f08_, 4)
  MERIDIAN_F08_ENTRY(mpi_waitall_f08_, 4)
  MERIDIAN_F08_ENTRY(mpi_testall_f08_, 5)
  MERIDIAN_F08_ENTRY(mpi_waitany_f08_, 5)
  MERIDIAN_F08_ENTRY(mpi_testany_f08_, 6)
  MERIDIAN_F08_ENTRY(mpi_waitsome_f08_, 6)
  MERIDIAN_F08_ENTRY(mpi_testsome_f08_, 6)
  MERIDIAN_F08_ENTRY(mpi_barrier_f08_, 2)
  MERIDIAN_F08_ENTRY(mpi_ibarrier_f08_, 3)
  MERIDIAN_F08_ENTRY(mpi_barrier_init_f08_, 4)
  MERIDIAN_F08_ENTRY(mpi_pready_f08_, 3)
  MERIDIAN_F08_ENTRY(mpi_pready_range_f08_, 4)
  MERIDIAN_F08_ENTRY(mpi_pready_list_f08_, 4)
  MERIDIAN_F08_ENTRY(mpi_comm_dup_f08_, 3)
  MERIDIAN_F08_ENTRY(mpi_comm_split_f08_, 5)
  MERIDIAN_F08_ENTRY(mpi_comm_split_type_f08_, 6)
  MERIDIAN_F08_ENTRY(mpi_comm_create_f08_, 4)
  MERIDIAN_F08_ENTRY(mpi_comm_create_group_f08_, 5)
  MERIDIAN_F08_ENTRY(mpi_comm_free_f08_, 2)
  MERIDIAN_F08_ENTRY(mpi_comm_rank_f08_, 3)
  MERIDIAN_F08_ENTRY(mpi_comm_size_f08_, 3)
  MERIDIAN_F08_ENTRY(mpi_cart_create_f08_, 7)
  MERIDIAN_F08_ENTRY(mpi_graph_create_f08_, 7)
  MERIDIAN_F08_ENTRY(mpi_dist_graph_create_f08_, 10)
  MERIDIAN_F08_ENTRY(mpi_dist_graph_create_adjacent_f08_, 11)
  MERIDIAN_F08_ENTRY(mpi_pcontrol_f08_, 1)
  MERIDIAN_F08_ENTRY(mpi_win_allocate_f08_, 7)
  MERIDIAN_F08_ENTRY(mpi_win_allocate_shared_f08_, 7)
  MERIDIAN_F08_ENTRY(mpi_win_create_dynamic_f08_, 4)
  MERIDIAN_F08_ENTRY(mpi_win_free_f08_, 2)
  MERIDIAN_F08_ENTRY(mpi_win_lock_f08_, 5)
  MERIDIAN_F08_ENTRY(mpi_win_fence_f08_, 3)
  MERIDIAN_F08_ENTRY(mpi_win_unlock_f08_, 3)
  MERIDIAN_F08_ENTRY(mpi_win_lock_all_f08_, 3)
  MERIDIAN_F08_ENTRY(mpi_win_flush_f08_, 3)
  MERIDIAN_F08_ENTRY(mpi_win_flush_local_f08_, 3)
  MERIDIAN_F08_ENTRY(mpi_win_unlock_all_f08_, 2)
  MERIDIAN_F08_ENTRY(mpi_win_flush_all_f08_, 2)
  MERIDIAN_F08_ENTRY(mpi_win_flush_local_all_f08_, 2)
  MERIDIAN_F08_ENTRY(mpi_win_complete_f08_, 2)
  MERIDIAN_F08_ENTRY(mpi_win_wait_f08_, 2)
  MERIDIAN_F08_ENTRY(mpi_win_post_f08_, 4)
  MERIDIAN_F08_ENTRY(mpi_win_start_f08_, 4)
  MERIDIAN_F08_ENTRY(mpi_file_open_f08_, 7)
  MERIDIAN_F08_ENTRY(mpi_file_close_f08_, 2)
#undef MERIDIAN_F08_ENTRY
}

}  // namespace mpi
}  // namespace meridian
