// Fortran one-sided communication and MPI-IO.
//
// Part of mpi_fortran.cc's translation unit, included there only (and by
// the parts after it), as mpi_wrappers.cc's parts are.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_FORTRAN_RMA_IO_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_FORTRAN_RMA_IO_H_

#include "capture/probe/mpi_fortran_collectives.h"

extern "C" {

// ---- One-sided communication ------------------------------------------------

// baseptr is where MPI writes the new memory's address: an
// INTEGER(KIND=MPI_ADDRESS_KIND) in mpif.h and `use mpi`, a TYPE(C_PTR) in
// mpi_f08, both 8 bytes passed by reference, as C's void* (really void**)
// is.
#define MERIDIAN_FORTRAN_ALLOCATE(lower, UPPER, Name)                      \
  MERIDIAN_FORTRAN(                                                        \
      lower, UPPER,                                                        \
      (MPI_Aint * size, MPI_Fint * disp_unit, MPI_Fint * info,             \
       MPI_Fint * comm, void* baseptr, MPI_Fint* win, MPI_Fint* ierror)) { \
    MPI_Win c_win = MPI_WIN_NULL;                                          \
    const int rc = MPI_##Name(*size, *disp_unit, Info(info), Comm(comm),   \
                              baseptr, &c_win);                            \
    *win = PMPI_Win_c2f(c_win);                                            \
    Return(ierror, rc);                                                    \
  }
MERIDIAN_FORTRAN_ALLOCATE(mpi_win_allocate, MPI_WIN_ALLOCATE, Win_allocate)
MERIDIAN_FORTRAN_ALLOCATE(mpi_win_allocate_shared, MPI_WIN_ALLOCATE_SHARED,
                          Win_allocate_shared)
#undef MERIDIAN_FORTRAN_ALLOCATE

MERIDIAN_FORTRAN(mpi_win_create, MPI_WIN_CREATE,
                 (void* base, MPI_Aint* size, MPI_Fint* disp_unit,
                  MPI_Fint* info, MPI_Fint* comm, MPI_Fint* win,
                  MPI_Fint* ierror)) {
  MPI_Win c_win = MPI_WIN_NULL;
  const int rc =
      MPI_Win_create(base, *size, *disp_unit, Info(info), Comm(comm), &c_win);
  *win = PMPI_Win_c2f(c_win);
  Return(ierror, rc);
}

MERIDIAN_FORTRAN(mpi_win_create_dynamic, MPI_WIN_CREATE_DYNAMIC,
                 (MPI_Fint * info, MPI_Fint* comm, MPI_Fint* win,
                  MPI_Fint* ierror)) {
  MPI_Win c_win = MPI_WIN_NULL;
  const int rc = MPI_Win_create_dynamic(Info(info), Comm(comm), &c_win);
  *win = PMPI_Win_c2f(c_win);
  Return(ierror, rc);
}

MERIDIAN_FORTRAN(mpi_win_free, MPI_WIN_FREE,
                 (MPI_Fint * win, MPI_Fint* ierror)) {
  MPI_Win c_win = Win(win);
  const int rc = MPI_Win_free(&c_win);
  *win = PMPI_Win_c2f(c_win);
  Return(ierror, rc);
}

// Put, Get and Accumulate, and their request-based forms (Rput...), which
// take a request before ierror. PARAMS and ARGS as for the collectives.
#define MERIDIAN_FORTRAN_RMA(lower, UPPER, Name, PARAMS, ARGS)            \
  MERIDIAN_FORTRAN(mpi_##lower, MPI_##UPPER,                              \
                   (MERIDIAN_UNPAREN PARAMS, MPI_Fint * ierror)) {        \
    Return(ierror, MPI_##Name(MERIDIAN_UNPAREN ARGS));                    \
  }                                                                       \
  MERIDIAN_FORTRAN(                                                       \
      mpi_r##lower, MPI_R##UPPER,                                         \
      (MERIDIAN_UNPAREN PARAMS, MPI_Fint * request, MPI_Fint * ierror)) { \
    NewRequest r(request);                                                \
    Return(ierror, MPI_R##lower(MERIDIAN_UNPAREN ARGS, r.c()));           \
  }
#define MERIDIAN_FORTRAN_TRANSFER(lower, UPPER, Name)                   \
  MERIDIAN_FORTRAN_RMA(                                                 \
      lower, UPPER, Name,                                               \
      (void* origin, MPI_Fint* origin_count, MPI_Fint* origin_type,     \
       MPI_Fint* target, MPI_Aint* target_disp, MPI_Fint* target_count, \
       MPI_Fint* target_type, MPI_Fint* win),                           \
      (Buffer(origin), *origin_count, Type(origin_type), *target,       \
       *target_disp, *target_count, Type(target_type), Win(win)))
MERIDIAN_FORTRAN_TRANSFER(put, PUT, Put)
MERIDIAN_FORTRAN_TRANSFER(get, GET, Get)
#undef MERIDIAN_FORTRAN_TRANSFER

MERIDIAN_FORTRAN_RMA(accumulate, ACCUMULATE, Accumulate,
                     (void* origin, MPI_Fint* origin_count,
                      MPI_Fint* origin_type, MPI_Fint* target,
                      MPI_Aint* target_disp, MPI_Fint* target_count,
                      MPI_Fint* target_type, MPI_Fint* op, MPI_Fint* win),
                     (Buffer(origin), *origin_count, Type(origin_type), *target,
                      *target_disp, *target_count, Type(target_type), Op(op),
                      Win(win)))
#undef MERIDIAN_FORTRAN_RMA

MERIDIAN_FORTRAN(mpi_rget_accumulate, MPI_RGET_ACCUMULATE,
                 (void* origin, MPI_Fint* origin_count, MPI_Fint* origin_type,
                  void* result, MPI_Fint* result_count, MPI_Fint* result_type,
                  MPI_Fint* target, MPI_Aint* target_disp,
                  MPI_Fint* target_count, MPI_Fint* target_type, MPI_Fint* op,
                  MPI_Fint* win, MPI_Fint* request, MPI_Fint* ierror)) {
  NewRequest r(request);
  Return(ierror,
         MPI_Rget_accumulate(Buffer(origin), *origin_count, Type(origin_type),
                             Buffer(result), *result_count, Type(result_type),
                             *target, *target_disp, *target_count,
                             Type(target_type), Op(op), Win(win), r.c()));
}
MERIDIAN_FORTRAN(mpi_get_accumulate, MPI_GET_ACCUMULATE,
                 (void* origin, MPI_Fint* origin_count, MPI_Fint* origin_type,
                  void* result, MPI_Fint* result_count, MPI_Fint* result_type,
                  MPI_Fint* target, MPI_Aint* target_disp,
                  MPI_Fint* target_count, MPI_Fint* target_type, MPI_Fint* op,
                  MPI_Fint* win, MPI_Fint* ierror)) {
  Return(ierror,
         MPI_Get_accumulate(Buffer(origin), *origin_count, Type(origin_type),
                            Buffer(result), *result_count, Type(result_type),
                            *target, *target_disp, *target_count,
                            Type(target_type), Op(op), Win(win)));
}

MERIDIAN_FORTRAN(mpi_fetch_and_op, MPI_FETCH_AND_OP,
                 (void* origin, void* result, MPI_Fint* type, MPI_Fint* target,
                  MPI_Aint* target_disp, MPI_Fint* op, MPI_Fint* win,
                  MPI_Fint* ierror)) {
  Return(ierror, MPI_Fetch_and_op(Buffer(origin), Buffer(result), Type(type),
                                  *target, *target_disp, Op(op), Win(win)));
}

MERIDIAN_FORTRAN(mpi_compare_and_swap, MPI_COMPARE_AND_SWAP,
                 (void* origin, void* compare, void* result, MPI_Fint* type,
                  MPI_Fint* target, MPI_Aint* target_disp, MPI_Fint* win,
                  MPI_Fint* ierror)) {
  Return(ierror,
         MPI_Compare_and_swap(Buffer(origin), Buffer(compare), Buffer(result),
                              Type(type), *target, *target_disp, Win(win)));
}

// Synchronization.
MERIDIAN_FORTRAN(mpi_win_lock, MPI_WIN_LOCK,
                 (MPI_Fint * lock_type, MPI_Fint* target, MPI_Fint* assert,
                  MPI_Fint* win, MPI_Fint* ierror)) {
  Return(ierror, MPI_Win_lock(*lock_type, *target, *assert, Win(win)));
}

// (int, win): a target rank, or assertions.
#define MERIDIAN_FORTRAN_WIN_INT(lower, UPPER, Name)                        \
  MERIDIAN_FORTRAN(lower, UPPER,                                            \
                   (MPI_Fint * value, MPI_Fint * win, MPI_Fint * ierror)) { \
    Return(ierror, MPI_##Name(*value, Win(win)));                           \
  }
MERIDIAN_FORTRAN_WIN_INT(mpi_win_fence, MPI_WIN_FENCE, Win_fence)
MERIDIAN_FORTRAN_WIN_INT(mpi_win_unlock, MPI_WIN_UNLOCK, Win_unlock)
MERIDIAN_FORTRAN_WIN_INT(mpi_win_lock_all, MPI_WIN_LOCK_ALL, Win_lock_all)
MERIDIAN_FORTRAN_WIN_INT(mpi_win_flush, MPI_WIN_FLUSH, Win_flush)
MERIDIAN_FORTRAN_WIN_INT(mpi_win_flush_local, MPI_WIN_FLUSH_LOCAL,
                         Win_flush_local)
#undef MERIDIAN_FORTRAN_WIN_INT

// (win).
#define MERIDIAN_FORTRAN_WIN(lower, UPPER, Name)                        \
  MERIDIAN_FORTRAN(lower, UPPER, (MPI_Fint * win, MPI_Fint * ierror)) { \
    Return(ierror, MPI_##Name(Win(win)));                               \
  }
MERIDIAN_FORTRAN_WIN(mpi_win_unlock_all, MPI_WIN_UNLOCK_ALL, Win_unlock_all)
MERIDIAN_FORTRAN_WIN(mpi_win_flush_all, MPI_WIN_FLUSH_ALL, Win_flush_all)
MERIDIAN_FORTRAN_WIN(mpi_win_flush_local_all, MPI_WIN_FLUSH_LOCAL_ALL,
                     Win_flush_local_all)
MERIDIAN_FORTRAN_WIN(mpi_win_complete, MPI_WIN_COMPLETE, Win_complete)
MERIDIAN_FORTRAN_WIN(mpi_win_wait, MPI_WIN_WAIT, Win_wait)
#undef MERIDIAN_FORTRAN_WIN

// (group, assertions, win).
#define MERIDIAN_FORTRAN_WIN_GROUP(lower, UPPER, Name)                  \
  MERIDIAN_FORTRAN(lower, UPPER,                                        \
                   (MPI_Fint * group, MPI_Fint * assert, MPI_Fint* win, \
                    MPI_Fint* ierror)) {                                \
    Return(ierror, MPI_##Name(Group(group), *assert, Win(win)));        \
  }
MERIDIAN_FORTRAN_WIN_GROUP(mpi_win_post, MPI_WIN_POST, Win_post)
MERIDIAN_FORTRAN_WIN_GROUP(mpi_win_start, MPI_WIN_START, Win_start)
#undef MERIDIAN_FORTRAN_WIN_GROUP

// ---- MPI-IO -----------------------------------------------------------------

// MPI_File_open has no Fortran entry: its CHARACTER filename adds a hidden
// length argument that the dispatcher's stubs cannot pass on. A file that
// Fortran opened gets its id when first used (File() in mpi_wrappers.cc).
// FILENAME is a CHARACTER(*), its length after the last parameter
// (fortran_string.h).
MERIDIAN_FORTRAN(mpi_file_open, MPI_FILE_OPEN,
                 (MPI_Fint * comm, const char* filename, MPI_Fint* amode,
                  MPI_Fint* info, MPI_Fint* fh, MPI_Fint* ierror,
                  size_t filename_length)) {
  char name[PATH_MAX];
  meridian::FortranString(filename, filename_length, name, sizeof(name));
  MPI_File c_fh = MPI_FILE_NULL;
  const int rc = MPI_File_open(Comm(comm), name, *amode, Info(info), &c_fh);
  *fh = PMPI_File_c2f(c_fh);
  Return(ierror, rc);
}

MERIDIAN_FORTRAN(mpi_file_close, MPI_FILE_CLOSE,
                 (MPI_Fint * fh, MPI_Fint* ierror)) {
  MPI_File c_fh = File(fh);
  const int rc = MPI_File_close(&c_fh);
  *fh = PMPI_File_c2f(c_fh);
  Return(ierror, rc);
}

// Each transfer as x, with a status, and ix, with a request. OFFSET and AT:
// the parameter the _at forms add, an INTEGER(KIND=MPI_OFFSET_KIND), and
// its argument.
#define MERIDIAN_FORTRAN_FILE_IO(x, X, OFFSET, AT)                          \
  MERIDIAN_FORTRAN(                                                         \
      mpi_file_##x, MPI_FILE_##X,                                           \
      (MPI_Fint * fh, MERIDIAN_UNPAREN OFFSET void* buf, MPI_Fint* count,   \
       MPI_Fint* type, MPI_Fint* status, MPI_Fint* ierror)) {               \
    Status s(status);                                                       \
    Return(ierror, MPI_File_##x(File(fh), MERIDIAN_UNPAREN AT Buffer(buf),  \
                                *count, Type(type), s.c()));                \
  }                                                                         \
  MERIDIAN_FORTRAN(                                                         \
      mpi_file_i##x, MPI_FILE_I##X,                                         \
      (MPI_Fint * fh, MERIDIAN_UNPAREN OFFSET void* buf, MPI_Fint* count,   \
       MPI_Fint* type, MPI_Fint* request, MPI_Fint* ierror)) {              \
    NewRequest r(request);                                                  \
    Return(ierror, MPI_File_i##x(File(fh), MERIDIAN_UNPAREN AT Buffer(buf), \
                                 *count, Type(type), r.c()));               \
  }
MERIDIAN_FORTRAN_FILE_IO(read, READ, (), ())
MERIDIAN_FORTRAN_FILE_IO(write, WRITE, (), ())
MERIDIAN_FORTRAN_FILE_IO(read_all, READ_ALL, (), ())
MERIDIAN_FORTRAN_FILE_IO(write_all, WRITE_ALL, (), ())
MERIDIAN_FORTRAN_FILE_IO(read_at, READ_AT, (MPI_Offset * offset, ), (*offset, ))
MERIDIAN_FORTRAN_FILE_IO(write_at, WRITE_AT, (MPI_Offset * offset, ),
                         (*offset, ))
MERIDIAN_FORTRAN_FILE_IO(read_at_all, READ_AT_ALL, (MPI_Offset * offset, ),
                         (*offset, ))
MERIDIAN_FORTRAN_FILE_IO(write_at_all, WRITE_AT_ALL, (MPI_Offset * offset, ),
                         (*offset, ))
#undef MERIDIAN_FORTRAN_FILE_IO
#undef MERIDIAN_UNPAREN

}  // extern "C"

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_FORTRAN_RMA_IO_H_
