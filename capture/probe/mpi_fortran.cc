// MPI capture for Fortran callers. Open MPI's Fortran bindings call PMPI_*
// directly, so a Fortran program's calls never reach the C wrappers of
// mpi_wrappers.cc. The functions here take the Fortran names instead:
//   mpi_send, mpi_send_, mpi_send__, MPI_SEND   mpif.h and `use mpi`
//   mpi_send_f08_                               `use mpi_f08` (gfortran)
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
#include <mpi.h>

#include <new>

#include "capture/probe/mpi_family_abi.h"

#if !defined(OPEN_MPI)
#error "Open MPI's Fortran ABI: build this file against Open MPI's mpi.h"
#endif

extern "C" {
// Open MPI's Fortran sentinels (weak: a build without Fortran has none).
extern char mpi_fortran_in_place_ __attribute__((weak));
extern char mpi_fortran_bottom_ __attribute__((weak));
}

namespace {

static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint must be an int");
constexpr int kStatusInts = sizeof(MPI_Status) / sizeof(MPI_Fint);

void* Buffer(void* fortran) {
  if (fortran != nullptr && fortran == &mpi_fortran_in_place_) {
    return MPI_IN_PLACE;
  }
  if (fortran != nullptr && fortran == &mpi_fortran_bottom_) return MPI_BOTTOM;
  return fortran;
}

MPI_Comm Comm(const MPI_Fint* f) { return PMPI_Comm_f2c(*f); }
MPI_Datatype Type(const MPI_Fint* f) { return PMPI_Type_f2c(*f); }
MPI_Op Op(const MPI_Fint* f) { return PMPI_Op_f2c(*f); }

void Return(MPI_Fint* ierror, int rc) {
  if (ierror != nullptr) *ierror = rc;
}

// A status argument: the C status the call fills, copied back to the
// caller's unless it passed MPI_STATUS_IGNORE.
class Status {
 public:
  explicit Status(MPI_Fint* fortran) : fortran_(fortran) {}
  ~Status() {
    if (!Ignored()) PMPI_Status_c2f(&c_, fortran_);
  }
  MPI_Status* c() { return Ignored() ? MPI_STATUS_IGNORE : &c_; }

 private:
  bool Ignored() const {
    return fortran_ == nullptr || fortran_ == MPI_F_STATUS_IGNORE;
  }
  MPI_Fint* fortran_;
  MPI_Status c_{};
};

// A request argument: converted to C, and back after the call (a completed
// request becomes MPI_REQUEST_NULL).
class Request {
 public:
  explicit Request(MPI_Fint* fortran)
      : fortran_(fortran), c_(PMPI_Request_f2c(*fortran)) {}
  ~Request() { *fortran_ = PMPI_Request_c2f(c_); }
  MPI_Request* c() { return &c_; }

 private:
  MPI_Fint* fortran_;
  MPI_Request c_;
};

// A new request (the I* calls): converted after the call.
class NewRequest {
 public:
  explicit NewRequest(MPI_Fint* fortran) : fortran_(fortran) {}
  ~NewRequest() { *fortran_ = PMPI_Request_c2f(c_); }
  MPI_Request* c() { return &c_; }

 private:
  MPI_Fint* fortran_;
  MPI_Request c_ = MPI_REQUEST_NULL;
};

// The arrays of an array completion call (Waitall & co): requests and
// statuses in C, in per-thread scratch that grows to the largest count seen
// (so a steady loop allocates nothing), converted back by Return().
class Requests {
 public:
  Requests(int count, MPI_Fint* requests, MPI_Fint* statuses)
      : count_(count), fortran_(requests), statuses_(statuses) {
    if (count > tls_capacity) Grow(count);
    ok_ = count <= tls_capacity;
    for (int i = 0; ok_ && i < count; ++i) {
      tls_requests[i] = PMPI_Request_f2c(requests[i]);
    }
  }
  bool ok() const { return ok_; }
  MPI_Request* c() const { return tls_requests; }
  MPI_Status* c_statuses() const {
    return IgnoreStatuses() ? MPI_STATUSES_IGNORE : tls_statuses;
  }
  // Copies the requests back, and the first `statuses` statuses.
  void Return(int statuses) const {
    for (int i = 0; i < count_; ++i) {
      fortran_[i] = PMPI_Request_c2f(tls_requests[i]);
    }
    for (int i = 0; !IgnoreStatuses() && i < statuses; ++i) {
      PMPI_Status_c2f(&tls_statuses[i], statuses_ + i * kStatusInts);
    }
  }

 private:
  bool IgnoreStatuses() const {
    return statuses_ == nullptr || statuses_ == MPI_F_STATUSES_IGNORE;
  }
  static void Grow(int count) {
    MPI_Request* requests = new (std::nothrow) MPI_Request[count];
    MPI_Status* statuses = new (std::nothrow) MPI_Status[count];
    if (requests == nullptr || statuses == nullptr) {
      delete[] requests;
      delete[] statuses;
      return;
    }
    delete[] tls_requests;
    delete[] tls_statuses;
    tls_requests = requests;
    tls_statuses = statuses;
    tls_capacity = count;
  }
  static thread_local MPI_Request* tls_requests;
  static thread_local MPI_Status* tls_statuses;
  static thread_local int tls_capacity;

  int count_;
  MPI_Fint* fortran_;
  MPI_Fint* statuses_;
  bool ok_;
};
thread_local MPI_Request* Requests::tls_requests = nullptr;
thread_local MPI_Status* Requests::tls_statuses = nullptr;
thread_local int Requests::tls_capacity = 0;

// A C index (0-based, or MPI_UNDEFINED) as Fortran sees it.
MPI_Fint FortranIndex(int index) {
  return index == MPI_UNDEFINED ? MPI_UNDEFINED : index + 1;
}

}  // namespace

// Defines mpi_NAME_ and declares its other Fortran names as aliases.
#define MERIDIAN_FORTRAN_ALIAS(target) \
  __attribute__((alias(#target), visibility("default")))
#define MERIDIAN_FORTRAN(lower, UPPER, params)               \
  void lower params MERIDIAN_FORTRAN_ALIAS(lower##_);        \
  void lower##__ params MERIDIAN_FORTRAN_ALIAS(lower##_);    \
  void UPPER params MERIDIAN_FORTRAN_ALIAS(lower##_);        \
  void lower##_f08_ params MERIDIAN_FORTRAN_ALIAS(lower##_); \
  __attribute__((visibility("default"))) void lower##_ params

extern "C" {

// ---- Init and Finalize ------------------------------------------------------

MERIDIAN_FORTRAN(mpi_init, MPI_INIT, (MPI_Fint * ierror)) {
  Return(ierror, MPI_Init(nullptr, nullptr));
}

MERIDIAN_FORTRAN(mpi_init_thread, MPI_INIT_THREAD,
                 (MPI_Fint * required, MPI_Fint* provided, MPI_Fint* ierror)) {
  int c_provided = 0;
  const int rc = MPI_Init_thread(nullptr, nullptr, *required, &c_provided);
  *provided = c_provided;
  Return(ierror, rc);
}

MERIDIAN_FORTRAN(mpi_finalize, MPI_FINALIZE, (MPI_Fint * ierror)) {
  Return(ierror, MPI_Finalize());
}

// ---- Point-to-point ---------------------------------------------------------

#define MERIDIAN_FORTRAN_SEND(lower, UPPER, Name)                           \
  MERIDIAN_FORTRAN(                                                         \
      lower, UPPER,                                                         \
      (void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* dest,          \
       MPI_Fint* tag, MPI_Fint* comm, MPI_Fint* ierror)) {                  \
    Return(ierror, MPI_##Name(Buffer(buf), *count, Type(type), *dest, *tag, \
                              Comm(comm)));                                 \
  }
MERIDIAN_FORTRAN_SEND(mpi_send, MPI_SEND, Send)
MERIDIAN_FORTRAN_SEND(mpi_ssend, MPI_SSEND, Ssend)
MERIDIAN_FORTRAN_SEND(mpi_rsend, MPI_RSEND, Rsend)
MERIDIAN_FORTRAN_SEND(mpi_bsend, MPI_BSEND, Bsend)
#undef MERIDIAN_FORTRAN_SEND

MERIDIAN_FORTRAN(mpi_recv, MPI_RECV,
                 (void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* source,
                  MPI_Fint* tag, MPI_Fint* comm, MPI_Fint* status,
                  MPI_Fint* ierror)) {
  Status s(status);
  Return(ierror, MPI_Recv(Buffer(buf), *count, Type(type), *source, *tag,
                          Comm(comm), s.c()));
}

MERIDIAN_FORTRAN(mpi_sendrecv, MPI_SENDRECV,
                 (void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype,
                  MPI_Fint* dest, MPI_Fint* sendtag, void* recvbuf,
                  MPI_Fint* recvcount, MPI_Fint* recvtype, MPI_Fint* source,
                  MPI_Fint* recvtag, MPI_Fint* comm, MPI_Fint* status,
                  MPI_Fint* ierror)) {
  Status s(status);
  Return(ierror,
         MPI_Sendrecv(Buffer(sendbuf), *sendcount, Type(sendtype), *dest,
                      *sendtag, Buffer(recvbuf), *recvcount, Type(recvtype),
                      *source, *recvtag, Comm(comm), s.c()));
}

MERIDIAN_FORTRAN(mpi_sendrecv_replace, MPI_SENDRECV_REPLACE,
                 (void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* dest,
                  MPI_Fint* sendtag, MPI_Fint* source, MPI_Fint* recvtag,
                  MPI_Fint* comm, MPI_Fint* status, MPI_Fint* ierror)) {
  Status s(status);
  Return(ierror,
         MPI_Sendrecv_replace(Buffer(buf), *count, Type(type), *dest, *sendtag,
                              *source, *recvtag, Comm(comm), s.c()));
}

#define MERIDIAN_FORTRAN_ISEND(lower, UPPER, Name)                            \
  MERIDIAN_FORTRAN(                                                           \
      lower, UPPER,                                                           \
      (void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* peer,            \
       MPI_Fint* tag, MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror)) { \
    NewRequest r(request);                                                    \
    Return(ierror, MPI_##Name(Buffer(buf), *count, Type(type), *peer, *tag,   \
                              Comm(comm), r.c()));                            \
  }
MERIDIAN_FORTRAN_ISEND(mpi_isend, MPI_ISEND, Isend)
MERIDIAN_FORTRAN_ISEND(mpi_issend, MPI_ISSEND, Issend)
MERIDIAN_FORTRAN_ISEND(mpi_irsend, MPI_IRSEND, Irsend)
MERIDIAN_FORTRAN_ISEND(mpi_ibsend, MPI_IBSEND, Ibsend)
MERIDIAN_FORTRAN_ISEND(mpi_irecv, MPI_IRECV, Irecv)
#undef MERIDIAN_FORTRAN_ISEND

// ---- Completion -------------------------------------------------------------

MERIDIAN_FORTRAN(mpi_wait, MPI_WAIT,
                 (MPI_Fint * request, MPI_Fint* status, MPI_Fint* ierror)) {
  Request r(request);
  Status s(status);
  Return(ierror, MPI_Wait(r.c(), s.c()));
}

MERIDIAN_FORTRAN(mpi_test, MPI_TEST,
                 (MPI_Fint * request, MPI_Fint* flag, MPI_Fint* status,
                  MPI_Fint* ierror)) {
  Request r(request);
  Status s(status);
  int c_flag = 0;
  const int rc = MPI_Test(r.c(), &c_flag, s.c());
  *flag = c_flag;
  Return(ierror, rc);
}

MERIDIAN_FORTRAN(mpi_waitall, MPI_WAITALL,
                 (MPI_Fint * count, MPI_Fint* requests, MPI_Fint* statuses,
                  MPI_Fint* ierror)) {
  const Requests r(*count, requests, statuses);
  if (!r.ok()) return Return(ierror, MPI_ERR_NO_MEM);
  const int rc = MPI_Waitall(*count, r.c(), r.c_statuses());
  r.Return(*count);
  Return(ierror, rc);
}

MERIDIAN_FORTRAN(mpi_testall, MPI_TESTALL,
                 (MPI_Fint * count, MPI_Fint* requests, MPI_Fint* flag,
                  MPI_Fint* statuses, MPI_Fint* ierror)) {
  const Requests r(*count, requests, statuses);
  if (!r.ok()) return Return(ierror, MPI_ERR_NO_MEM);
  int c_flag = 0;
  const int rc = MPI_Testall(*count, r.c(), &c_flag, r.c_statuses());
  r.Return(c_flag ? *count : 0);
  *flag = c_flag;
  Return(ierror, rc);
}

MERIDIAN_FORTRAN(mpi_waitany, MPI_WAITANY,
                 (MPI_Fint * count, MPI_Fint* requests, MPI_Fint* index,
                  MPI_Fint* status, MPI_Fint* ierror)) {
  const Requests r(*count, requests, MPI_F_STATUSES_IGNORE);
  if (!r.ok()) return Return(ierror, MPI_ERR_NO_MEM);
  Status s(status);
  int c_index = MPI_UNDEFINED;
  const int rc = MPI_Waitany(*count, r.c(), &c_index, s.c());
  r.Return(0);
  *index = FortranIndex(c_index);
  Return(ierror, rc);
}

MERIDIAN_FORTRAN(mpi_testany, MPI_TESTANY,
                 (MPI_Fint * count, MPI_Fint* requests, MPI_Fint* index,
                  MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierror)) {
  const Requests r(*count, requests, MPI_F_STATUSES_IGNORE);
  if (!r.ok()) return Return(ierror, MPI_ERR_NO_MEM);
  Status s(status);
  int c_index = MPI_UNDEFINED, c_flag = 0;
  const int rc = MPI_Testany(*count, r.c(), &c_index, &c_flag, s.c());
  r.Return(0);
  *index = FortranIndex(c_index);
  *flag = c_flag;
  Return(ierror, rc);
}

#define MERIDIAN_FORTRAN_SOME(lower, UPPER, Name)                          \
  MERIDIAN_FORTRAN(                                                        \
      lower, UPPER,                                                        \
      (MPI_Fint * incount, MPI_Fint * requests, MPI_Fint * outcount,       \
       MPI_Fint * indices, MPI_Fint * statuses, MPI_Fint * ierror)) {      \
    const Requests r(*incount, requests, statuses);                        \
    if (!r.ok()) return Return(ierror, MPI_ERR_NO_MEM);                    \
    int c_outcount = MPI_UNDEFINED;                                        \
    const int rc =                                                         \
        MPI_##Name(*incount, r.c(), &c_outcount, indices, r.c_statuses()); \
    const int done = c_outcount == MPI_UNDEFINED ? 0 : c_outcount;         \
    r.Return(done);                                                        \
    for (int i = 0; i < done; ++i) indices[i] = FortranIndex(indices[i]);  \
    *outcount = c_outcount;                                                \
    Return(ierror, rc);                                                    \
  }
MERIDIAN_FORTRAN_SOME(mpi_waitsome, MPI_WAITSOME, Waitsome)
MERIDIAN_FORTRAN_SOME(mpi_testsome, MPI_TESTSOME, Testsome)
#undef MERIDIAN_FORTRAN_SOME

// ---- Blocking and non-blocking collectives ----------------------------------

// Each collective comes as NAME and INAME, the latter with a request before
// ierror. PARAMS are the Fortran parameters both share, in parentheses, and
// ARGS the C wrapper's arguments made from them.
#define MERIDIAN_UNPAREN(...) __VA_ARGS__
#define MERIDIAN_FORTRAN_COLLECTIVE(lower, UPPER, Name, IName, PARAMS, ARGS) \
  MERIDIAN_FORTRAN(mpi_##lower, MPI_##UPPER,                                 \
                   (MERIDIAN_UNPAREN PARAMS, MPI_Fint * ierror)) {           \
    Return(ierror, MPI_##Name(MERIDIAN_UNPAREN ARGS));                       \
  }                                                                          \
  MERIDIAN_FORTRAN(                                                          \
      mpi_i##lower, MPI_I##UPPER,                                            \
      (MERIDIAN_UNPAREN PARAMS, MPI_Fint * request, MPI_Fint * ierror)) {    \
    NewRequest r(request);                                                   \
    Return(ierror, MPI_##IName(MERIDIAN_UNPAREN ARGS, r.c()));               \
  }

MERIDIAN_FORTRAN_COLLECTIVE(barrier, BARRIER, Barrier, Ibarrier,
                            (MPI_Fint * comm), (Comm(comm)))

MERIDIAN_FORTRAN_COLLECTIVE(bcast, BCAST, Bcast, Ibcast,
                            (void* buf, MPI_Fint* count, MPI_Fint* type,
                             MPI_Fint* root, MPI_Fint* comm),
                            (Buffer(buf), *count, Type(type), *root,
                             Comm(comm)))

MERIDIAN_FORTRAN_COLLECTIVE(reduce, REDUCE, Reduce, Ireduce,
                            (void* sendbuf, void* recvbuf, MPI_Fint* count,
                             MPI_Fint* type, MPI_Fint* op, MPI_Fint* root,
                             MPI_Fint* comm),
                            (Buffer(sendbuf), Buffer(recvbuf), *count,
                             Type(type), Op(op), *root, Comm(comm)))

// Allreduce, Scan and Exscan.
#define MERIDIAN_FORTRAN_REDUCTION(lower, UPPER, Name, IName)                 \
  MERIDIAN_FORTRAN_COLLECTIVE(lower, UPPER, Name, IName,                      \
                              (void* sendbuf, void* recvbuf, MPI_Fint* count, \
                               MPI_Fint* type, MPI_Fint* op, MPI_Fint* comm), \
                              (Buffer(sendbuf), Buffer(recvbuf), *count,      \
                               Type(type), Op(op), Comm(comm)))
MERIDIAN_FORTRAN_REDUCTION(allreduce, ALLREDUCE, Allreduce, Iallreduce)
MERIDIAN_FORTRAN_REDUCTION(scan, SCAN, Scan, Iscan)
MERIDIAN_FORTRAN_REDUCTION(exscan, EXSCAN, Exscan, Iexscan)
#undef MERIDIAN_FORTRAN_REDUCTION

MERIDIAN_FORTRAN_COLLECTIVE(reduce_scatter, REDUCE_SCATTER, Reduce_scatter,
                            Ireduce_scatter,
                            (void* sendbuf, void* recvbuf, MPI_Fint* recvcounts,
                             MPI_Fint* type, MPI_Fint* op, MPI_Fint* comm),
                            (Buffer(sendbuf), Buffer(recvbuf), recvcounts,
                             Type(type), Op(op), Comm(comm)))

MERIDIAN_FORTRAN_COLLECTIVE(reduce_scatter_block, REDUCE_SCATTER_BLOCK,
                            Reduce_scatter_block, Ireduce_scatter_block,
                            (void* sendbuf, void* recvbuf, MPI_Fint* recvcount,
                             MPI_Fint* type, MPI_Fint* op, MPI_Fint* comm),
                            (Buffer(sendbuf), Buffer(recvbuf), *recvcount,
                             Type(type), Op(op), Comm(comm)))

// Allgather and Alltoall.
#define MERIDIAN_FORTRAN_EXCHANGE(lower, UPPER, Name, IName)                  \
  MERIDIAN_FORTRAN_COLLECTIVE(                                                \
      lower, UPPER, Name, IName,                                              \
      (void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, void* recvbuf, \
       MPI_Fint* recvcount, MPI_Fint* recvtype, MPI_Fint* comm),              \
      (Buffer(sendbuf), *sendcount, Type(sendtype), Buffer(recvbuf),          \
       *recvcount, Type(recvtype), Comm(comm)))
MERIDIAN_FORTRAN_EXCHANGE(allgather, ALLGATHER, Allgather, Iallgather)
MERIDIAN_FORTRAN_EXCHANGE(alltoall, ALLTOALL, Alltoall, Ialltoall)
#undef MERIDIAN_FORTRAN_EXCHANGE

MERIDIAN_FORTRAN_COLLECTIVE(allgatherv, ALLGATHERV, Allgatherv, Iallgatherv,
                            (void* sendbuf, MPI_Fint* sendcount,
                             MPI_Fint* sendtype, void* recvbuf,
                             MPI_Fint* recvcounts, MPI_Fint* displs,
                             MPI_Fint* recvtype, MPI_Fint* comm),
                            (Buffer(sendbuf), *sendcount, Type(sendtype),
                             Buffer(recvbuf), recvcounts, displs,
                             Type(recvtype), Comm(comm)))

MERIDIAN_FORTRAN_COLLECTIVE(
    alltoallv, ALLTOALLV, Alltoallv, Ialltoallv,
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype,
     void* recvbuf, MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype,
     MPI_Fint* comm),
    (Buffer(sendbuf), sendcounts, sdispls, Type(sendtype), Buffer(recvbuf),
     recvcounts, rdispls, Type(recvtype), Comm(comm)))

// Gather and Scatter.
#define MERIDIAN_FORTRAN_ROOTED(lower, UPPER, Name, IName)                    \
  MERIDIAN_FORTRAN_COLLECTIVE(                                                \
      lower, UPPER, Name, IName,                                              \
      (void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, void* recvbuf, \
       MPI_Fint* recvcount, MPI_Fint* recvtype, MPI_Fint* root,               \
       MPI_Fint* comm),                                                       \
      (Buffer(sendbuf), *sendcount, Type(sendtype), Buffer(recvbuf),          \
       *recvcount, Type(recvtype), *root, Comm(comm)))
MERIDIAN_FORTRAN_ROOTED(gather, GATHER, Gather, Igather)
MERIDIAN_FORTRAN_ROOTED(scatter, SCATTER, Scatter, Iscatter)
#undef MERIDIAN_FORTRAN_ROOTED

MERIDIAN_FORTRAN_COLLECTIVE(
    gatherv, GATHERV, Gatherv, Igatherv,
    (void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, void* recvbuf,
     MPI_Fint* recvcounts, MPI_Fint* displs, MPI_Fint* recvtype, MPI_Fint* root,
     MPI_Fint* comm),
    (Buffer(sendbuf), *sendcount, Type(sendtype), Buffer(recvbuf), recvcounts,
     displs, Type(recvtype), *root, Comm(comm)))

MERIDIAN_FORTRAN_COLLECTIVE(
    scatterv, SCATTERV, Scatterv, Iscatterv,
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* displs, MPI_Fint* sendtype,
     void* recvbuf, MPI_Fint* recvcount, MPI_Fint* recvtype, MPI_Fint* root,
     MPI_Fint* comm),
    (Buffer(sendbuf), sendcounts, displs, Type(sendtype), Buffer(recvbuf),
     *recvcount, Type(recvtype), *root, Comm(comm)))
#undef MERIDIAN_FORTRAN_COLLECTIVE
#undef MERIDIAN_UNPAREN

// ---- Communicators ----------------------------------------------------------

// A call that makes *newcomm: the new handle converted back.
#define MERIDIAN_FORTRAN_COMM(lower, UPPER, Name, PARAMS, ...) \
  MERIDIAN_FORTRAN(lower, UPPER, PARAMS) {                     \
    MPI_Comm c_newcomm = MPI_COMM_NULL;                        \
    const int rc = MPI_##Name(__VA_ARGS__, &c_newcomm);        \
    *newcomm = PMPI_Comm_c2f(c_newcomm);                       \
    Return(ierror, rc);                                        \
  }
MERIDIAN_FORTRAN_COMM(mpi_comm_dup, MPI_COMM_DUP, Comm_dup,
                      (MPI_Fint * comm, MPI_Fint* newcomm, MPI_Fint* ierror),
                      Comm(comm))
MERIDIAN_FORTRAN_COMM(mpi_comm_split, MPI_COMM_SPLIT, Comm_split,
                      (MPI_Fint * comm, MPI_Fint* color, MPI_Fint* key,
                       MPI_Fint* newcomm, MPI_Fint* ierror),
                      Comm(comm), *color, *key)
MERIDIAN_FORTRAN_COMM(mpi_comm_split_type, MPI_COMM_SPLIT_TYPE, Comm_split_type,
                      (MPI_Fint * comm, MPI_Fint* split_type, MPI_Fint* key,
                       MPI_Fint* info, MPI_Fint* newcomm, MPI_Fint* ierror),
                      Comm(comm), *split_type, *key, PMPI_Info_f2c(*info))
MERIDIAN_FORTRAN_COMM(mpi_comm_create, MPI_COMM_CREATE, Comm_create,
                      (MPI_Fint * comm, MPI_Fint* group, MPI_Fint* newcomm,
                       MPI_Fint* ierror),
                      Comm(comm), PMPI_Group_f2c(*group))
MERIDIAN_FORTRAN_COMM(mpi_comm_create_group, MPI_COMM_CREATE_GROUP,
                      Comm_create_group,
                      (MPI_Fint * comm, MPI_Fint* group, MPI_Fint* tag,
                       MPI_Fint* newcomm, MPI_Fint* ierror),
                      Comm(comm), PMPI_Group_f2c(*group), *tag)
#undef MERIDIAN_FORTRAN_COMM

// periods and reorder are LOGICALs: converted to C ints.
MERIDIAN_FORTRAN(mpi_cart_create, MPI_CART_CREATE,
                 (MPI_Fint * comm, MPI_Fint* ndims, MPI_Fint* dims,
                  MPI_Fint* periods, MPI_Fint* reorder, MPI_Fint* newcomm,
                  MPI_Fint* ierror)) {
  const int n = *ndims > 0 ? *ndims : 0;
  int* c_periods = new (std::nothrow) int[n > 0 ? n : 1];
  if (c_periods == nullptr) return Return(ierror, MPI_ERR_NO_MEM);
  for (int i = 0; i < n; ++i) c_periods[i] = periods[i] != 0;
  MPI_Comm c_newcomm = MPI_COMM_NULL;
  const int rc = MPI_Cart_create(Comm(comm), *ndims, dims, c_periods,
                                 *reorder != 0, &c_newcomm);
  delete[] c_periods;
  *newcomm = PMPI_Comm_c2f(c_newcomm);
  Return(ierror, rc);
}

MERIDIAN_FORTRAN(mpi_comm_free, MPI_COMM_FREE,
                 (MPI_Fint * comm, MPI_Fint* ierror)) {
  MPI_Comm c_comm = Comm(comm);
  const int rc = MPI_Comm_free(&c_comm);
  *comm = PMPI_Comm_c2f(c_comm);
  Return(ierror, rc);
}

}  // extern "C"

namespace meridian {
namespace mpi {

// Every Fortran name in the family table (mpi_family.cc), each checked
// against mpi_family_abi.h's list.
void FillFortranEntries(void** entries) {
#define MERIDIAN_F_ENTRY(name, lower, UPPER, count) \
  MERIDIAN_MPI_FAMILY_ENTRY(entries, name, count, void);
#define MERIDIAN_F_ENTRIES(lower, UPPER, count) \
  MERIDIAN_MPI_FORTRAN_NAMES(MERIDIAN_F_ENTRY, lower, UPPER, count)
  MERIDIAN_MPI_FORTRAN_FUNCTIONS(MERIDIAN_F_ENTRIES)
#undef MERIDIAN_F_ENTRIES
#undef MERIDIAN_F_ENTRY
}

}  // namespace mpi
}  // namespace meridian
