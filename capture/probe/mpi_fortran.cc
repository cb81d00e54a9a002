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
#include <limits.h>
#include <mpi.h>

#include <cstring>
#include <new>

#include "capture/probe/fortran_string.h"
#include "capture/probe/mpi_family_abi.h"

#if !defined(OPEN_MPI)
#error "Open MPI's Fortran ABI: build this file against Open MPI's mpi.h"
#endif

// After mpi.h, whose types it uses.
#include <mpi-ext.h>  // MPIX_Bcast_init & co (the pcollreq extension)

extern "C" {
// Open MPI's Fortran sentinels (weak: a build without Fortran has none).
extern char mpi_fortran_in_place_ __attribute__((weak));
extern char mpi_fortran_bottom_ __attribute__((weak));
extern char mpi_fortran_unweighted_ __attribute__((weak));
extern char mpi_fortran_weights_empty_ __attribute__((weak));
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
MPI_Info Info(const MPI_Fint* f) { return PMPI_Info_f2c(*f); }
MPI_Group Group(const MPI_Fint* f) { return PMPI_Group_f2c(*f); }
MPI_Win Win(const MPI_Fint* f) { return PMPI_Win_f2c(*f); }
MPI_File File(const MPI_Fint* f) { return PMPI_File_f2c(*f); }

// A C flag as a Fortran LOGICAL (gfortran's .TRUE. is 1).
MPI_Fint Logical(int flag) { return flag != 0; }

// A topology's weights: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are common
// blocks in Fortran, as MPI_IN_PLACE is.
const int* Weights(const MPI_Fint* fortran) {
  if (fortran != nullptr &&
      fortran == static_cast<const void*>(&mpi_fortran_unweighted_)) {
    return MPI_UNWEIGHTED;
  }
  if (fortran != nullptr &&
      fortran == static_cast<const void*>(&mpi_fortran_weights_empty_)) {
    return MPI_WEIGHTS_EMPTY;
  }
  return fortran;
}

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

// A handle argument the call may change: converted to C, and back after
// the call (a completed request becomes MPI_REQUEST_NULL, a received
// message MPI_MESSAGE_NULL).
template <typename Handle, Handle (*kToC)(MPI_Fint),
          MPI_Fint (*kToFortran)(Handle)>
class InOut {
 public:
  explicit InOut(MPI_Fint* fortran) : fortran_(fortran), c_(kToC(*fortran)) {}
  ~InOut() { *fortran_ = kToFortran(c_); }
  Handle* c() { return &c_; }

 private:
  MPI_Fint* fortran_;
  Handle c_;
};
using Request = InOut<MPI_Request, PMPI_Request_f2c, PMPI_Request_c2f>;
// A matched message (Mrecv, Imrecv).
using Message = InOut<MPI_Message, PMPI_Message_f2c, PMPI_Message_c2f>;

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

// The datatype arrays of a w-form collective (Alltoallw,
// Neighbor_alltoallw and their I forms) in C, in per-thread scratch that
// grows to the largest count seen, as Requests keeps its arrays. MPI reads
// them during the call only, the I forms' too: Open MPI's own Fortran
// bindings free theirs when the call returns.
class TypeArrays {
 public:
  // `sends` send types (sendtypes null: none, the send buffer is
  // MPI_IN_PLACE) and `receives` receive types.
  TypeArrays(const MPI_Fint* sendtypes, int sends, const MPI_Fint* recvtypes,
             int receives) {
    sends = sendtypes != nullptr && sends > 0 ? sends : 0;
    receives = receives > 0 ? receives : 0;
    if (sends + receives > tls_capacity) Grow(sends + receives);
    ok_ = sends + receives <= tls_capacity;
    for (int i = 0; ok_ && i < sends; ++i) {
      tls_types[i] = PMPI_Type_f2c(sendtypes[i]);
    }
    for (int i = 0; ok_ && i < receives; ++i) {
      tls_types[sends + i] = PMPI_Type_f2c(recvtypes[i]);
    }
    send_ = sendtypes != nullptr ? tls_types : nullptr;
    recv_ = tls_types != nullptr ? tls_types + sends : nullptr;
  }
  bool ok() const { return ok_; }
  const MPI_Datatype* send() const { return send_; }
  const MPI_Datatype* recv() const { return recv_; }

 private:
  static void Grow(int count) {
    MPI_Datatype* types = new (std::nothrow) MPI_Datatype[count];
    if (types == nullptr) return;
    delete[] tls_types;
    tls_types = types;
    tls_capacity = count;
  }
  static thread_local MPI_Datatype* tls_types;
  static thread_local int tls_capacity;

  bool ok_;
  const MPI_Datatype* send_;
  const MPI_Datatype* recv_;
};
thread_local MPI_Datatype* TypeArrays::tls_types = nullptr;
thread_local int TypeArrays::tls_capacity = 0;

// Alltoallw's: one per rank of `comm`, or of its remote group if it is an
// intercommunicator; no send types when sending in place.
TypeArrays AlltoallwTypes(void* sendbuf, const MPI_Fint* sendtypes,
                          const MPI_Fint* recvtypes, MPI_Comm comm) {
  int inter = 0, n = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) {
    PMPI_Comm_remote_size(comm, &n);
  } else {
    PMPI_Comm_size(comm, &n);
  }
  return TypeArrays(Buffer(sendbuf) == MPI_IN_PLACE ? nullptr : sendtypes, n,
                    recvtypes, n);
}

// Neighbor_alltoallw's: one per neighbor this rank sends to, and one per
// neighbor it receives from, as `comm`'s topology gives them.
TypeArrays NeighborTypes(void*, const MPI_Fint* sendtypes,
                         const MPI_Fint* recvtypes, MPI_Comm comm) {
  int kind = MPI_UNDEFINED, in = 0, out = 0;
  PMPI_Topo_test(comm, &kind);
  if (kind == MPI_CART) {
    int ndims = 0;
    PMPI_Cartdim_get(comm, &ndims);
    in = out = 2 * ndims;
  } else if (kind == MPI_GRAPH) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Graph_neighbors_count(comm, rank, &in);
    out = in;
  } else if (kind == MPI_DIST_GRAPH) {
    int weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
  }
  return TypeArrays(sendtypes, out, recvtypes, in);
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

// ---- Persistent requests ----------------------------------------------------

// The init calls take what the I calls take.
MERIDIAN_FORTRAN_ISEND(mpi_send_init, MPI_SEND_INIT, Send_init)
MERIDIAN_FORTRAN_ISEND(mpi_ssend_init, MPI_SSEND_INIT, Ssend_init)
MERIDIAN_FORTRAN_ISEND(mpi_rsend_init, MPI_RSEND_INIT, Rsend_init)
MERIDIAN_FORTRAN_ISEND(mpi_bsend_init, MPI_BSEND_INIT, Bsend_init)
MERIDIAN_FORTRAN_ISEND(mpi_recv_init, MPI_RECV_INIT, Recv_init)
#undef MERIDIAN_FORTRAN_ISEND

MERIDIAN_FORTRAN(mpi_start, MPI_START, (MPI_Fint * request, MPI_Fint* ierror)) {
  Request r(request);
  Return(ierror, MPI_Start(r.c()));
}

MERIDIAN_FORTRAN(mpi_startall, MPI_STARTALL,
                 (MPI_Fint * count, MPI_Fint* requests, MPI_Fint* ierror)) {
  const Requests r(*count, requests, MPI_F_STATUSES_IGNORE);
  if (!r.ok()) return Return(ierror, MPI_ERR_NO_MEM);
  const int rc = MPI_Startall(*count, r.c());
  r.Return(0);
  Return(ierror, rc);
}

MERIDIAN_FORTRAN(mpi_request_free, MPI_REQUEST_FREE,
                 (MPI_Fint * request, MPI_Fint* ierror)) {
  Request r(request);
  Return(ierror, MPI_Request_free(r.c()));
}

// ---- Probes and matched receives --------------------------------------------

MERIDIAN_FORTRAN(mpi_probe, MPI_PROBE,
                 (MPI_Fint * source, MPI_Fint* tag, MPI_Fint* comm,
                  MPI_Fint* status, MPI_Fint* ierror)) {
  Status s(status);
  Return(ierror, MPI_Probe(*source, *tag, Comm(comm), s.c()));
}

MERIDIAN_FORTRAN(mpi_iprobe, MPI_IPROBE,
                 (MPI_Fint * source, MPI_Fint* tag, MPI_Fint* comm,
                  MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierror)) {
  Status s(status);
  int c_flag = 0;
  const int rc = MPI_Iprobe(*source, *tag, Comm(comm), &c_flag, s.c());
  *flag = Logical(c_flag);
  Return(ierror, rc);
}

MERIDIAN_FORTRAN(mpi_mprobe, MPI_MPROBE,
                 (MPI_Fint * source, MPI_Fint* tag, MPI_Fint* comm,
                  MPI_Fint* message, MPI_Fint* status, MPI_Fint* ierror)) {
  Status s(status);
  MPI_Message c_message = MPI_MESSAGE_NULL;
  const int rc = MPI_Mprobe(*source, *tag, Comm(comm), &c_message, s.c());
  *message = PMPI_Message_c2f(c_message);
  Return(ierror, rc);
}

MERIDIAN_FORTRAN(mpi_improbe, MPI_IMPROBE,
                 (MPI_Fint * source, MPI_Fint* tag, MPI_Fint* comm,
                  MPI_Fint* flag, MPI_Fint* message, MPI_Fint* status,
                  MPI_Fint* ierror)) {
  Status s(status);
  MPI_Message c_message = MPI_MESSAGE_NULL;
  int c_flag = 0;
  const int rc =
      MPI_Improbe(*source, *tag, Comm(comm), &c_flag, &c_message, s.c());
  *flag = Logical(c_flag);
  if (c_flag) *message = PMPI_Message_c2f(c_message);
  Return(ierror, rc);
}

MERIDIAN_FORTRAN(mpi_mrecv, MPI_MRECV,
                 (void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* message,
                  MPI_Fint* status, MPI_Fint* ierror)) {
  Message m(message);
  Status s(status);
  Return(ierror, MPI_Mrecv(Buffer(buf), *count, Type(type), m.c(), s.c()));
}

MERIDIAN_FORTRAN(mpi_imrecv, MPI_IMRECV,
                 (void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* message,
                  MPI_Fint* request, MPI_Fint* ierror)) {
  Message m(message);
  NewRequest r(request);
  Return(ierror, MPI_Imrecv(Buffer(buf), *count, Type(type), m.c(), r.c()));
}

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

// ---- Blocking, non-blocking and persistent collectives ----------------------

// Each collective comes in three forms: NAME; INAME, with a request before
// ierror; and the persistent MPIX_NAME_INIT of Open MPI 4.1's extension,
// with an info and a request before ierror, whose C wrapper
// (MPIX_Name_init) records each start as it does a C program's. PARAMS are
// the Fortran parameters the three share, in parentheses, and ARGS the C
// wrapper's arguments made from them.
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
  }                                                                          \
  MERIDIAN_FORTRAN(mpix_##lower##_init, MPIX_##UPPER##_INIT,                 \
                   (MERIDIAN_UNPAREN PARAMS, MPI_Fint * info,                \
                    MPI_Fint * request, MPI_Fint * ierror)) {                \
    NewRequest r(request);                                                   \
    Return(ierror,                                                           \
           MPIX_##Name##_init(MERIDIAN_UNPAREN ARGS, Info(info), r.c()));    \
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

// Allgather and Alltoall, and their neighbor forms.
#define MERIDIAN_FORTRAN_EXCHANGE(lower, UPPER, Name, IName)                  \
  MERIDIAN_FORTRAN_COLLECTIVE(                                                \
      lower, UPPER, Name, IName,                                              \
      (void* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, void* recvbuf, \
       MPI_Fint* recvcount, MPI_Fint* recvtype, MPI_Fint* comm),              \
      (Buffer(sendbuf), *sendcount, Type(sendtype), Buffer(recvbuf),          \
       *recvcount, Type(recvtype), Comm(comm)))
MERIDIAN_FORTRAN_EXCHANGE(allgather, ALLGATHER, Allgather, Iallgather)
MERIDIAN_FORTRAN_EXCHANGE(alltoall, ALLTOALL, Alltoall, Ialltoall)
MERIDIAN_FORTRAN_EXCHANGE(neighbor_allgather, NEIGHBOR_ALLGATHER,
                          Neighbor_allgather, Ineighbor_allgather)
MERIDIAN_FORTRAN_EXCHANGE(neighbor_alltoall, NEIGHBOR_ALLTOALL,
                          Neighbor_alltoall, Ineighbor_alltoall)
#undef MERIDIAN_FORTRAN_EXCHANGE

MERIDIAN_FORTRAN_COLLECTIVE(allgatherv, ALLGATHERV, Allgatherv, Iallgatherv,
                            (void* sendbuf, MPI_Fint* sendcount,
                             MPI_Fint* sendtype, void* recvbuf,
                             MPI_Fint* recvcounts, MPI_Fint* displs,
                             MPI_Fint* recvtype, MPI_Fint* comm),
                            (Buffer(sendbuf), *sendcount, Type(sendtype),
                             Buffer(recvbuf), recvcounts, displs,
                             Type(recvtype), Comm(comm)))

MERIDIAN_FORTRAN_COLLECTIVE(neighbor_allgatherv, NEIGHBOR_ALLGATHERV,
                            Neighbor_allgatherv, Ineighbor_allgatherv,
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

MERIDIAN_FORTRAN_COLLECTIVE(
    neighbor_alltoallv, NEIGHBOR_ALLTOALLV, Neighbor_alltoallv,
    Ineighbor_alltoallv,
    (void* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype,
     void* recvbuf, MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype,
     MPI_Fint* comm),
    (Buffer(sendbuf), sendcounts, sdispls, Type(sendtype), Buffer(recvbuf),
     recvcounts, rdispls, Type(recvtype), Comm(comm)))

// Alltoallw and Neighbor_alltoallw (whose displacements are MPI_Aint:
// INTEGER(KIND=MPI_ADDRESS_KIND) in Fortran), and their I and persistent
// forms: the datatype arrays converted by TYPES, AlltoallwTypes or
// NeighborTypes (the init calls read them during the call only, as Open
// MPI's own bindings, which free theirs on return, assume).
#define MERIDIAN_FORTRAN_W_PARAMS(Displ)                                    \
  void *sendbuf, MPI_Fint *sendcounts, Displ *sdispls, MPI_Fint *sendtypes, \
      void *recvbuf, MPI_Fint *recvcounts, Displ *rdispls,                  \
      MPI_Fint *recvtypes, MPI_Fint *comm
#define MERIDIAN_FORTRAN_W_ARGS                                                \
  Buffer(sendbuf), sendcounts, sdispls, t.send(), Buffer(recvbuf), recvcounts, \
      rdispls, t.recv(), c_comm
#define MERIDIAN_FORTRAN_W(lower, UPPER, Name, IName, Displ, TYPES)         \
  MERIDIAN_FORTRAN(mpi_##lower, MPI_##UPPER,                                \
                   (MERIDIAN_FORTRAN_W_PARAMS(Displ), MPI_Fint * ierror)) { \
    const MPI_Comm c_comm = Comm(comm);                                     \
    const TypeArrays t = TYPES(sendbuf, sendtypes, recvtypes, c_comm);      \
    if (!t.ok()) return Return(ierror, MPI_ERR_NO_MEM);                     \
    Return(ierror, MPI_##Name(MERIDIAN_FORTRAN_W_ARGS));                    \
  }                                                                         \
  MERIDIAN_FORTRAN(mpi_i##lower, MPI_I##UPPER,                              \
                   (MERIDIAN_FORTRAN_W_PARAMS(Displ), MPI_Fint * request,   \
                    MPI_Fint * ierror)) {                                   \
    const MPI_Comm c_comm = Comm(comm);                                     \
    const TypeArrays t = TYPES(sendbuf, sendtypes, recvtypes, c_comm);      \
    NewRequest r(request);                                                  \
    if (!t.ok()) return Return(ierror, MPI_ERR_NO_MEM);                     \
    Return(ierror, MPI_##IName(MERIDIAN_FORTRAN_W_ARGS, r.c()));            \
  }                                                                         \
  MERIDIAN_FORTRAN(mpix_##lower##_init, MPIX_##UPPER##_INIT,                \
                   (MERIDIAN_FORTRAN_W_PARAMS(Displ), MPI_Fint * info,      \
                    MPI_Fint * request, MPI_Fint * ierror)) {               \
    const MPI_Comm c_comm = Comm(comm);                                     \
    const TypeArrays t = TYPES(sendbuf, sendtypes, recvtypes, c_comm);      \
    NewRequest r(request);                                                  \
    if (!t.ok()) return Return(ierror, MPI_ERR_NO_MEM);                     \
    Return(ierror,                                                          \
           MPIX_##Name##_init(MERIDIAN_FORTRAN_W_ARGS, Info(info), r.c())); \
  }
MERIDIAN_FORTRAN_W(alltoallw, ALLTOALLW, Alltoallw, Ialltoallw, MPI_Fint,
                   AlltoallwTypes)
MERIDIAN_FORTRAN_W(neighbor_alltoallw, NEIGHBOR_ALLTOALLW, Neighbor_alltoallw,
                   Ineighbor_alltoallw, MPI_Aint, NeighborTypes)
#undef MERIDIAN_FORTRAN_W
#undef MERIDIAN_FORTRAN_W_ARGS
#undef MERIDIAN_FORTRAN_W_PARAMS

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

// Topologies: reorder is a LOGICAL.
MERIDIAN_FORTRAN_COMM(mpi_graph_create, MPI_GRAPH_CREATE, Graph_create,
                      (MPI_Fint * comm, MPI_Fint* nnodes, MPI_Fint* index,
                       MPI_Fint* edges, MPI_Fint* reorder, MPI_Fint* newcomm,
                       MPI_Fint* ierror),
                      Comm(comm), *nnodes, index, edges, *reorder != 0)
MERIDIAN_FORTRAN_COMM(mpi_dist_graph_create, MPI_DIST_GRAPH_CREATE,
                      Dist_graph_create,
                      (MPI_Fint * comm, MPI_Fint* n, MPI_Fint* sources,
                       MPI_Fint* degrees, MPI_Fint* destinations,
                       MPI_Fint* weights, MPI_Fint* info, MPI_Fint* reorder,
                       MPI_Fint* newcomm, MPI_Fint* ierror),
                      Comm(comm), *n, sources, degrees, destinations,
                      Weights(weights), Info(info), *reorder != 0)
MERIDIAN_FORTRAN_COMM(mpi_dist_graph_create_adjacent,
                      MPI_DIST_GRAPH_CREATE_ADJACENT,
                      Dist_graph_create_adjacent,
                      (MPI_Fint * comm, MPI_Fint* indegree, MPI_Fint* sources,
                       MPI_Fint* sourceweights, MPI_Fint* outdegree,
                       MPI_Fint* destinations, MPI_Fint* destweights,
                       MPI_Fint* info, MPI_Fint* reorder, MPI_Fint* newcomm,
                       MPI_Fint* ierror),
                      Comm(comm), *indegree, sources, Weights(sourceweights),
                      *outdegree, destinations, Weights(destweights),
                      Info(info), *reorder != 0)
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

// ---- Queries mpitrace counts, and MPI_Pcontrol ------------------------------

MERIDIAN_FORTRAN(mpi_comm_rank, MPI_COMM_RANK,
                 (MPI_Fint * comm, MPI_Fint* rank, MPI_Fint* ierror)) {
  Return(ierror, MPI_Comm_rank(Comm(comm), rank));
}

MERIDIAN_FORTRAN(mpi_comm_size, MPI_COMM_SIZE,
                 (MPI_Fint * comm, MPI_Fint* size, MPI_Fint* ierror)) {
  Return(ierror, MPI_Comm_size(Comm(comm), size));
}

// MPI_PCONTROL(LEVEL): one argument, no ierror, in every Fortran binding.
MERIDIAN_FORTRAN(mpi_pcontrol, MPI_PCONTROL, (MPI_Fint * level)) {
  MPI_Pcontrol(*level);
}

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
