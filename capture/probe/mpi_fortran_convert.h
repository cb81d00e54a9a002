// The Fortran bindings' conversions (handles, sentinels, statuses,
// arrays) and the macro that defines a function under every Fortran name.
//
// Part of mpi_fortran.cc's translation unit, included there only (and by
// the parts after it), as mpi_wrappers.cc's parts are.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_FORTRAN_CONVERT_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_FORTRAN_CONVERT_H_

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

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_FORTRAN_CONVERT_H_
