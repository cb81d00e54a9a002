// One-sided communication (windows, RMA, epochs and locks) and MPI-IO.
//
// Part of mpi_wrappers.cc's translation unit, included there only (and by
// the parts after it): the wrappers' state and helpers stay in one
// translation unit's anonymous namespace, where the compiler inlines them
// into every wrapper, as the MPI call path needs.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_WRAP_RMA_IO_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_WRAP_RMA_IO_H_

#include "capture/probe/mpi_wrap_persistent.h"

extern "C" {

// ---- One-sided communication ------------------------------------------------

// Window creation is collective over `comm`: recorded as its collective
// (comm, seq), and the window is registered with an id of its own.
#define MERIDIAN_WIN_CREATE(op, comm, win, call)                              \
  if (!probe::g_event.enabled) return call;                                   \
  CommInfo* parent = Comm(comm);                                              \
  const uint64_t seq = NextSeq(parent);                                       \
  const int64_t start = probe::Now();                                         \
  const int rc = call;                                                        \
  const int64_t end = probe::Now();                                           \
  MPI_Group group;                                                            \
  if (rc == MPI_SUCCESS && PMPI_Win_get_group(*(win), &group) == MPI_SUCCESS) \
    RegisterMade(Key(*(win)), comm, kWindowSalt, group);                      \
  if (probe::Recording()) {                                                   \
    probe::Emit(CollectiveRecord(op, start, end, parent, seq, 0, -1));        \
  }                                                                           \
  return rc;

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                   MPI_Comm comm, MPI_Win* win) {
  MERIDIAN_WIN_CREATE(kWin_create, comm, win,
                      PMPI_Win_create(base, size, disp_unit, info, comm, win))
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                     void* baseptr, MPI_Win* win) {
  MERIDIAN_WIN_CREATE(
      kWin_allocate, comm, win,
      PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win))
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
                            MPI_Comm comm, void* baseptr, MPI_Win* win) {
  MERIDIAN_WIN_CREATE(
      kWin_allocate_shared, comm, win,
      PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win))
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  MERIDIAN_WIN_CREATE(kWin_create_dynamic, comm, win,
                      PMPI_Win_create_dynamic(info, comm, win))
}
#undef MERIDIAN_WIN_CREATE

// Freeing a window or closing a file is collective over its members: an
// instance (its id, seq) like a communicator's collectives. Its id is
// copied first, since the table entry goes with the handle.
#define MERIDIAN_FREE_OBJECT(op, handle, lookup, call)                \
  if (!probe::g_event.enabled || (handle) == nullptr) return call;    \
  const uint64_t key = Key(*(handle));                                \
  CommInfo* info = lookup(*(handle));                                 \
  const uint64_t seq = NextSeq(info);                                 \
  CommInfo copy = info != nullptr ? *info : CommInfo{};               \
  const int64_t start = probe::Now();                                 \
  const int rc = call;                                                \
  const int64_t end = probe::Now();                                   \
  g_comms.Take(key, nullptr);                                         \
  if (probe::Recording() && info != nullptr) {                        \
    probe::Emit(CollectiveRecord(op, start, end, &copy, seq, 0, -1)); \
  }                                                                   \
  return rc;

int MPI_Win_free(MPI_Win* win) {
  MERIDIAN_FREE_OBJECT(kWin_free, win, Window, PMPI_Win_free(win))
}

// A fence that only opens an epoch (MPI_MODE_NOPRECEDE, which every member
// gives or none) need not synchronize: it is counted but carries no seq, so
// the analyses do not take it for an instance that waits for every member.
int MPI_Win_fence(int assert_flags, MPI_Win win) {
  if (!probe::g_event.enabled) return PMPI_Win_fence(assert_flags, win);
  CommInfo* info = Window(win);
  const uint64_t seq = NextSeq(info);
  if (!probe::Recording()) return PMPI_Win_fence(assert_flags, win);
  const int64_t start = probe::Now();
  const int rc = PMPI_Win_fence(assert_flags, win);
  ProbeRecord r =
      CollectiveRecord(kWin_fence, start, probe::Now(), info, seq, 0, -1);
  if (assert_flags & MPI_MODE_NOPRECEDE) r.flags &= ~ProbeRecord::kHasSeq;
  probe::Emit(r);
  return rc;
}

#define MERIDIAN_RMA(op, win, target, bytes, call) \
  if (!probe::Recording()) return call;            \
  const int64_t start = probe::Now();              \
  const int rc = call;                             \
  RecordOneSided(op, start, win, target, bytes);   \
  return rc;

#define MERIDIAN_RRMA(op, win, target, bytes, request, call) \
  if (!probe::Recording()) return call;                      \
  const int64_t start = probe::Now();                        \
  const int rc = call;                                       \
  if (rc == MPI_SUCCESS) {                                   \
    IssueOneSided(op, start, win, target, bytes, request);   \
  }                                                          \
  return rc;

int MPI_Put(const void* origin, int origin_count, MPI_Datatype origin_type,
            int target, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_type, MPI_Win win) {
  MERIDIAN_RMA(kPut, win, target, TypeBytes(origin_count, origin_type),
               PMPI_Put(origin, origin_count, origin_type, target, target_disp,
                        target_count, target_type, win))
}

int MPI_Get(void* origin, int origin_count, MPI_Datatype origin_type,
            int target, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_type, MPI_Win win) {
  MERIDIAN_RMA(kGet, win, target, TypeBytes(origin_count, origin_type),
               PMPI_Get(origin, origin_count, origin_type, target, target_disp,
                        target_count, target_type, win))
}

int MPI_Accumulate(const void* origin, int origin_count,
                   MPI_Datatype origin_type, int target, MPI_Aint target_disp,
                   int target_count, MPI_Datatype target_type, MPI_Op op,
                   MPI_Win win) {
  MERIDIAN_RMA(kAccumulate, win, target, TypeBytes(origin_count, origin_type),
               PMPI_Accumulate(origin, origin_count, origin_type, target,
                               target_disp, target_count, target_type, op, win))
}

// Bytes: the origin buffer's (0 for MPI_NO_OP's empty one).
int MPI_Get_accumulate(const void* origin, int origin_count,
                       MPI_Datatype origin_type, void* result, int result_count,
                       MPI_Datatype result_type, int target,
                       MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  MERIDIAN_RMA(
      kGet_accumulate, win, target, TypeBytes(origin_count, origin_type),
      PMPI_Get_accumulate(origin, origin_count, origin_type, result,
                          result_count, result_type, target, target_disp,
                          target_count, target_type, op, win))
}

int MPI_Fetch_and_op(const void* origin, void* result, MPI_Datatype type,
                     int target, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  MERIDIAN_RMA(
      kFetch_and_op, win, target, TypeBytes(1, type),
      PMPI_Fetch_and_op(origin, result, type, target, target_disp, op, win))
}

int MPI_Compare_and_swap(const void* origin, const void* compare, void* result,
                         MPI_Datatype type, int target, MPI_Aint target_disp,
                         MPI_Win win) {
  MERIDIAN_RMA(kCompare_and_swap, win, target, TypeBytes(1, type),
               PMPI_Compare_and_swap(origin, compare, result, type, target,
                                     target_disp, win))
}

int MPI_Rput(const void* origin, int origin_count, MPI_Datatype origin_type,
             int target, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  MERIDIAN_RRMA(kRput, win, target, TypeBytes(origin_count, origin_type),
                request,
                PMPI_Rput(origin, origin_count, origin_type, target,
                          target_disp, target_count, target_type, win, request))
}

int MPI_Rget(void* origin, int origin_count, MPI_Datatype origin_type,
             int target, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  MERIDIAN_RRMA(kRget, win, target, TypeBytes(origin_count, origin_type),
                request,
                PMPI_Rget(origin, origin_count, origin_type, target,
                          target_disp, target_count, target_type, win, request))
}

int MPI_Raccumulate(const void* origin, int origin_count,
                    MPI_Datatype origin_type, int target, MPI_Aint target_disp,
                    int target_count, MPI_Datatype target_type, MPI_Op op,
                    MPI_Win win, MPI_Request* request) {
  MERIDIAN_RRMA(
      kRaccumulate, win, target, TypeBytes(origin_count, origin_type), request,
      PMPI_Raccumulate(origin, origin_count, origin_type, target, target_disp,
                       target_count, target_type, op, win, request))
}

int MPI_Rget_accumulate(const void* origin, int origin_count,
                        MPI_Datatype origin_type, void* result,
                        int result_count, MPI_Datatype result_type, int target,
                        MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                        MPI_Request* request) {
  MERIDIAN_RRMA(
      kRget_accumulate, win, target, TypeBytes(origin_count, origin_type),
      request,
      PMPI_Rget_accumulate(origin, origin_count, origin_type, result,
                           result_count, result_type, target, target_disp,
                           target_count, target_type, op, win, request))
}

// Synchronization: lock, unlock and flush name their target as the peer;
// the _all forms and the general active target calls name none.
// Recorded as the other one-sided calls, with its lock type (LockArgs):
// exclusive epochs on one target serialize.
int MPI_Win_lock(int lock_type, int target, int assert_flags, MPI_Win win) {
  if (!probe::Recording()) {
    return PMPI_Win_lock(lock_type, target, assert_flags, win);
  }
  const int64_t start = probe::Now();
  const int rc = PMPI_Win_lock(lock_type, target, assert_flags, win);
  const int64_t end = probe::Now();
  ProbeRecord r =
      PointToPointRecord(kWin_lock, start, end, Window(win), target, -1, 0);
  r.args = LockArgs(lock_type, assert_flags);
  probe::Emit(r);
  return rc;
}

int MPI_Win_unlock(int target, MPI_Win win) {
  MERIDIAN_RMA(kWin_unlock, win, target, 0, PMPI_Win_unlock(target, win))
}

int MPI_Win_lock_all(int assert_flags, MPI_Win win) {
  MERIDIAN_RMA(kWin_lock_all, win, -1, 0, PMPI_Win_lock_all(assert_flags, win))
}

int MPI_Win_unlock_all(MPI_Win win) {
  MERIDIAN_RMA(kWin_unlock_all, win, -1, 0, PMPI_Win_unlock_all(win))
}

int MPI_Win_flush(int target, MPI_Win win) {
  MERIDIAN_RMA(kWin_flush, win, target, 0, PMPI_Win_flush(target, win))
}

int MPI_Win_flush_all(MPI_Win win) {
  MERIDIAN_RMA(kWin_flush_all, win, -1, 0, PMPI_Win_flush_all(win))
}

int MPI_Win_flush_local(int target, MPI_Win win) {
  MERIDIAN_RMA(kWin_flush_local, win, target, 0,
               PMPI_Win_flush_local(target, win))
}

int MPI_Win_flush_local_all(MPI_Win win) {
  MERIDIAN_RMA(kWin_flush_local_all, win, -1, 0, PMPI_Win_flush_local_all(win))
}

// An MPI_Win_post or MPI_Win_start that ran from `start` to now, with its
// group (EpochGroupArg): which exposure and access epochs match.
void RecordEpochOpen(Op op, int64_t start, MPI_Win win, MPI_Group group) {
  const int64_t end = probe::Now();
  ProbeRecord r = PointToPointRecord(op, start, end, Window(win), -1, -1, 0);
  r.args = EpochGroupArg(group);
  probe::Emit(r);
}

int MPI_Win_post(MPI_Group group, int assert_flags, MPI_Win win) {
  if (!probe::Recording()) return PMPI_Win_post(group, assert_flags, win);
  const int64_t start = probe::Now();
  const int rc = PMPI_Win_post(group, assert_flags, win);
  RecordEpochOpen(kWin_post, start, win, group);
  return rc;
}

int MPI_Win_start(MPI_Group group, int assert_flags, MPI_Win win) {
  if (!probe::Recording()) return PMPI_Win_start(group, assert_flags, win);
  const int64_t start = probe::Now();
  const int rc = PMPI_Win_start(group, assert_flags, win);
  RecordEpochOpen(kWin_start, start, win, group);
  return rc;
}

int MPI_Win_complete(MPI_Win win) {
  MERIDIAN_RMA(kWin_complete, win, -1, 0, PMPI_Win_complete(win))
}

int MPI_Win_wait(MPI_Win win) {
  MERIDIAN_RMA(kWin_wait, win, -1, 0, PMPI_Win_wait(win))
}
#undef MERIDIAN_RMA
#undef MERIDIAN_RRMA

// ---- MPI-IO -----------------------------------------------------------------

// Opening is collective over `comm` (its (comm, seq)); the file gets an id
// of its own, and its collective calls (_all, close) are instances
// (file id, seq).
int MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info,
                  MPI_File* fh) {
  if (!probe::g_event.enabled) {
    return PMPI_File_open(comm, filename, amode, info, fh);
  }
  CommInfo* parent = Comm(comm);
  const uint64_t seq = NextSeq(parent);
  const int64_t start = probe::Now();
  const int rc = PMPI_File_open(comm, filename, amode, info, fh);
  const int64_t end = probe::Now();
  MPI_Group group;
  if (rc == MPI_SUCCESS && PMPI_File_get_group(*fh, &group) == MPI_SUCCESS) {
    RegisterMade(Key(*fh), comm, kFileSalt, group);
  }
  if (probe::Recording()) {
    probe::Emit(CollectiveRecord(kFile_open, start, end, parent, seq, 0, -1));
  }
  return rc;
}

int MPI_File_close(MPI_File* fh) {
  MERIDIAN_FREE_OBJECT(kFile_close, fh, File, PMPI_File_close(fh))
}
#undef MERIDIAN_FREE_OBJECT

// Independent blocking reads and writes: bytes asked for (count x type).
#define MERIDIAN_FILE_IO(op, fh, count, type, call)                         \
  if (!probe::Recording()) return call;                                     \
  const int64_t start = probe::Now();                                       \
  const int rc = call;                                                      \
  probe::Emit(PointToPointRecord(op, start, probe::Now(), File(fh), -1, -1, \
                                 TypeBytes(count, type)));                  \
  return rc;

// Collective ones: an instance (file id, seq), counted recorded or not.
#define MERIDIAN_FILE_IO_ALL(op, fh, count, type, call)            \
  if (!probe::g_event.enabled) return call;                        \
  CommInfo* info = File(fh);                                       \
  const uint64_t seq = NextSeq(info);                              \
  if (!probe::Recording()) return call;                            \
  const int64_t start = probe::Now();                              \
  const int rc = call;                                             \
  probe::Emit(CollectiveRecord(op, start, probe::Now(), info, seq, \
                               TypeBytes(count, type), -1));       \
  return rc;

// Non-blocking: from issue to completion, like MPI_Isend.
#define MERIDIAN_FILE_IIO(op, fh, count, type, request, call) \
  if (!probe::Recording()) return call;                       \
  const int64_t start = probe::Now();                         \
  const int rc = call;                                        \
  if (rc == MPI_SUCCESS) {                                    \
    const CommInfo* info = File(fh);                          \
    Issue(request,                                            \
          PointToPointRecord(op, start, start, info, -1, -1,  \
                             TypeBytes(count, type)),         \
          info, false, false);                                \
  }                                                           \
  return rc;

// Non-blocking collective: an instance too.
#define MERIDIAN_FILE_IIO_ALL(op, fh, count, type, request, call) \
  if (!probe::g_event.enabled) return call;                       \
  CommInfo* info = File(fh);                                      \
  const uint64_t seq = NextSeq(info);                             \
  if (!probe::Recording()) return call;                           \
  const int64_t start = probe::Now();                             \
  const int rc = call;                                            \
  if (rc == MPI_SUCCESS) {                                        \
    Issue(request,                                                \
          CollectiveRecord(op, start, start, info, seq,           \
                           TypeBytes(count, type), -1),           \
          info, false, false);                                    \
  }                                                               \
  return rc;

int MPI_File_read(MPI_File fh, void* buf, int count, MPI_Datatype type,
                  MPI_Status* status) {
  MERIDIAN_FILE_IO(kFile_read, fh, count, type,
                   PMPI_File_read(fh, buf, count, type, status))
}

int MPI_File_write(MPI_File fh, const void* buf, int count, MPI_Datatype type,
                   MPI_Status* status) {
  MERIDIAN_FILE_IO(kFile_write, fh, count, type,
                   PMPI_File_write(fh, buf, count, type, status))
}

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void* buf, int count,
                     MPI_Datatype type, MPI_Status* status) {
  MERIDIAN_FILE_IO(kFile_read_at, fh, count, type,
                   PMPI_File_read_at(fh, offset, buf, count, type, status))
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void* buf,
                      int count, MPI_Datatype type, MPI_Status* status) {
  MERIDIAN_FILE_IO(kFile_write_at, fh, count, type,
                   PMPI_File_write_at(fh, offset, buf, count, type, status))
}

int MPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype type,
                      MPI_Status* status) {
  MERIDIAN_FILE_IO_ALL(kFile_read_all, fh, count, type,
                       PMPI_File_read_all(fh, buf, count, type, status))
}

int MPI_File_write_all(MPI_File fh, const void* buf, int count,
                       MPI_Datatype type, MPI_Status* status) {
  MERIDIAN_FILE_IO_ALL(kFile_write_all, fh, count, type,
                       PMPI_File_write_all(fh, buf, count, type, status))
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                         MPI_Datatype type, MPI_Status* status) {
  MERIDIAN_FILE_IO_ALL(
      kFile_read_at_all, fh, count, type,
      PMPI_File_read_at_all(fh, offset, buf, count, type, status))
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf,
                          int count, MPI_Datatype type, MPI_Status* status) {
  MERIDIAN_FILE_IO_ALL(
      kFile_write_at_all, fh, count, type,
      PMPI_File_write_at_all(fh, offset, buf, count, type, status))
}

int MPI_File_iread(MPI_File fh, void* buf, int count, MPI_Datatype type,
                   MPI_Request* request) {
  MERIDIAN_FILE_IIO(kFile_iread, fh, count, type, request,
                    PMPI_File_iread(fh, buf, count, type, request))
}

int MPI_File_iwrite(MPI_File fh, const void* buf, int count, MPI_Datatype type,
                    MPI_Request* request) {
  MERIDIAN_FILE_IIO(kFile_iwrite, fh, count, type, request,
                    PMPI_File_iwrite(fh, buf, count, type, request))
}

int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void* buf, int count,
                      MPI_Datatype type, MPI_Request* request) {
  MERIDIAN_FILE_IIO(kFile_iread_at, fh, count, type, request,
                    PMPI_File_iread_at(fh, offset, buf, count, type, request))
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void* buf,
                       int count, MPI_Datatype type, MPI_Request* request) {
  MERIDIAN_FILE_IIO(kFile_iwrite_at, fh, count, type, request,
                    PMPI_File_iwrite_at(fh, offset, buf, count, type, request))
}

int MPI_File_iread_all(MPI_File fh, void* buf, int count, MPI_Datatype type,
                       MPI_Request* request) {
  MERIDIAN_FILE_IIO_ALL(kFile_iread_all, fh, count, type, request,
                        PMPI_File_iread_all(fh, buf, count, type, request))
}

int MPI_File_iwrite_all(MPI_File fh, const void* buf, int count,
                        MPI_Datatype type, MPI_Request* request) {
  MERIDIAN_FILE_IIO_ALL(kFile_iwrite_all, fh, count, type, request,
                        PMPI_File_iwrite_all(fh, buf, count, type, request))
}

int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                          MPI_Datatype type, MPI_Request* request) {
  MERIDIAN_FILE_IIO_ALL(
      kFile_iread_at_all, fh, count, type, request,
      PMPI_File_iread_at_all(fh, offset, buf, count, type, request))
}

int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void* buf,
                           int count, MPI_Datatype type, MPI_Request* request) {
  MERIDIAN_FILE_IIO_ALL(
      kFile_iwrite_at_all, fh, count, type, request,
      PMPI_File_iwrite_at_all(fh, offset, buf, count, type, request))
}
#undef MERIDIAN_FILE_IO
#undef MERIDIAN_FILE_IO_ALL
#undef MERIDIAN_FILE_IIO
#undef MERIDIAN_FILE_IIO_ALL

}  // extern "C"

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_WRAP_RMA_IO_H_
