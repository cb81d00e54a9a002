// Fortran collectives (blocking, non-blocking, persistent),
// communicators, and the queries mpitrace counts.
//
// Part of mpi_fortran.cc's translation unit, included there only (and by
// the parts after it), as mpi_wrappers.cc's parts are.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_FORTRAN_COLLECTIVES_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_FORTRAN_COLLECTIVES_H_

#include "capture/probe/mpi_fortran_point_to_point.h"

extern "C" {

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

}  // extern "C"

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_FORTRAN_COLLECTIVES_H_
