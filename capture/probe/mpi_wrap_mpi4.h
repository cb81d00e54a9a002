// MPI-4: persistent collectives and partitioned point-to-point.
//
// Part of mpi_wrappers.cc's translation unit, included there only (and by
// the parts after it): the wrappers' state and helpers stay in one
// translation unit's anonymous namespace, where the compiler inlines them
// into every wrapper, as the MPI call path needs.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_WRAP_MPI4_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_WRAP_MPI4_H_

#include "capture/probe/mpi_wrap_rma_io.h"

extern "C" {

// ---- Persistent collectives (MPI-4)
// -------------------------------------------

// MPI_Bcast_init & co (Open MPI 4.1: its extension's MPIX_Bcast_init...,
// recorded under the MPI-4 names): each MPI_Start/Startall performs the
// collective once, recorded like the non-blocking form from start to
// completion, under the init call's name, with the next sequence number of
// the communicator at the start (members start their persistent
// collectives in the same order, as they must call collectives).
#if defined(OPEN_MPI)
#define MERIDIAN_MPI4(name) MPIX_##name
#define MERIDIAN_PMPI4(name) PMPIX_##name
#else
#define MERIDIAN_MPI4(name) MPI_##name
#define MERIDIAN_PMPI4(name) PMPI_##name
#endif

#define MERIDIAN_COLLECTIVE_INIT(op, comm, bytes_expr, root, request, call) \
  const int rc = call;                                                      \
  if (rc == MPI_SUCCESS) {                                                  \
    MakePersistentCollective(request, op, comm, bytes_expr, root);          \
  }                                                                         \
  return rc;

int MERIDIAN_MPI4(Barrier_init)(MPI_Comm comm, MPI_Info info,
                                MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(kBarrier_init, comm, 0, -1, request,
                           MERIDIAN_PMPI4(Barrier_init)(comm, info, request))
}

int MERIDIAN_MPI4(Bcast_init)(void* buf, int count, MPI_Datatype type, int root,
                              MPI_Comm comm, MPI_Info info,
                              MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kBcast_init, comm, TypeBytes(count, type), root, request,
      MERIDIAN_PMPI4(Bcast_init)(buf, count, type, root, comm, info, request))
}

int MERIDIAN_MPI4(Reduce_init)(const void* sendbuf, void* recvbuf, int count,
                               MPI_Datatype type, MPI_Op op, int root,
                               MPI_Comm comm, MPI_Info info,
                               MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kReduce_init, comm, TypeBytes(count, type), root, request,
      MERIDIAN_PMPI4(Reduce_init)(sendbuf, recvbuf, count, type, op, root, comm,
                                  info, request))
}

int MERIDIAN_MPI4(Allreduce_init)(const void* sendbuf, void* recvbuf, int count,
                                  MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                  MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kAllreduce_init, comm, TypeBytes(count, type), -1, request,
      MERIDIAN_PMPI4(Allreduce_init)(sendbuf, recvbuf, count, type, op, comm,
                                     info, request))
}

int MERIDIAN_MPI4(Allgather_init)(const void* sendbuf, int sendcount,
                                  MPI_Datatype sendtype, void* recvbuf,
                                  int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kAllgather_init, comm,
      BlockBytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
      request,
      MERIDIAN_PMPI4(Allgather_init)(sendbuf, sendcount, sendtype, recvbuf,
                                     recvcount, recvtype, comm, info, request))
}

int MERIDIAN_MPI4(Allgatherv_init)(const void* sendbuf, int sendcount,
                                   MPI_Datatype sendtype, void* recvbuf,
                                   const int recvcounts[], const int displs[],
                                   MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kAllgatherv_init, comm, SumBytes(recvcounts, CountsSize(comm), recvtype),
      -1, request,
      MERIDIAN_PMPI4(Allgatherv_init)(sendbuf, sendcount, sendtype, recvbuf,
                                      recvcounts, displs, recvtype, comm, info,
                                      request))
}

int MERIDIAN_MPI4(Alltoall_init)(const void* sendbuf, int sendcount,
                                 MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kAlltoall_init, comm,
      BlockBytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
      request,
      MERIDIAN_PMPI4(Alltoall_init)(sendbuf, sendcount, sendtype, recvbuf,
                                    recvcount, recvtype, comm, info, request))
}

int MERIDIAN_MPI4(Alltoallv_init)(const void* sendbuf, const int sendcounts[],
                                  const int sdispls[], MPI_Datatype sendtype,
                                  void* recvbuf, const int recvcounts[],
                                  const int rdispls[], MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kAlltoallv_init, comm,
      BlocksBytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm),
      -1, request,
      MERIDIAN_PMPI4(Alltoallv_init)(sendbuf, sendcounts, sdispls, sendtype,
                                     recvbuf, recvcounts, rdispls, recvtype,
                                     comm, info, request))
}

int MERIDIAN_MPI4(Alltoallw_init)(const void* sendbuf, const int sendcounts[],
                                  const int sdispls[],
                                  const MPI_Datatype sendtypes[], void* recvbuf,
                                  const int recvcounts[], const int rdispls[],
                                  const MPI_Datatype recvtypes[], MPI_Comm comm,
                                  MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kAlltoallw_init, comm,
      TypedBlocksBytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes,
                       comm),
      -1, request,
      MERIDIAN_PMPI4(Alltoallw_init)(sendbuf, sendcounts, sdispls, sendtypes,
                                     recvbuf, recvcounts, rdispls, recvtypes,
                                     comm, info, request))
}

int MERIDIAN_MPI4(Gather_init)(const void* sendbuf, int sendcount,
                               MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, int root,
                               MPI_Comm comm, MPI_Info info,
                               MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kGather_init, comm,
      GatherBytes(comm, root, sendcount, sendtype, recvcount, recvtype), root,
      request,
      MERIDIAN_PMPI4(Gather_init)(sendbuf, sendcount, sendtype, recvbuf,
                                  recvcount, recvtype, root, comm, info,
                                  request))
}

int MERIDIAN_MPI4(Gatherv_init)(const void* sendbuf, int sendcount,
                                MPI_Datatype sendtype, void* recvbuf,
                                const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, int root, MPI_Comm comm,
                                MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kGatherv_init, comm,
      GathervBytes(comm, root, sendcount, sendtype, recvcounts, recvtype), root,
      request,
      MERIDIAN_PMPI4(Gatherv_init)(sendbuf, sendcount, sendtype, recvbuf,
                                   recvcounts, displs, recvtype, root, comm,
                                   info, request))
}

int MERIDIAN_MPI4(Scatter_init)(const void* sendbuf, int sendcount,
                                MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype, int root,
                                MPI_Comm comm, MPI_Info info,
                                MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kScatter_init, comm,
      ScatterBytes(comm, root, sendcount, sendtype, recvcount, recvtype), root,
      request,
      MERIDIAN_PMPI4(Scatter_init)(sendbuf, sendcount, sendtype, recvbuf,
                                   recvcount, recvtype, root, comm, info,
                                   request))
}

int MERIDIAN_MPI4(Scatterv_init)(const void* sendbuf, const int sendcounts[],
                                 const int displs[], MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount,
                                 MPI_Datatype recvtype, int root, MPI_Comm comm,
                                 MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kScatterv_init, comm,
      ScattervBytes(comm, root, sendcounts, sendtype, recvcount, recvtype),
      root, request,
      MERIDIAN_PMPI4(Scatterv_init)(sendbuf, sendcounts, displs, sendtype,
                                    recvbuf, recvcount, recvtype, root, comm,
                                    info, request))
}

int MERIDIAN_MPI4(Reduce_scatter_init)(const void* sendbuf, void* recvbuf,
                                       const int recvcounts[],
                                       MPI_Datatype type, MPI_Op op,
                                       MPI_Comm comm, MPI_Info info,
                                       MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kReduce_scatter_init, comm, SumBytes(recvcounts, CommSize(comm), type),
      -1, request,
      MERIDIAN_PMPI4(Reduce_scatter_init)(sendbuf, recvbuf, recvcounts, type,
                                          op, comm, info, request))
}

int MERIDIAN_MPI4(Reduce_scatter_block_init)(const void* sendbuf, void* recvbuf,
                                             int recvcount, MPI_Datatype type,
                                             MPI_Op op, MPI_Comm comm,
                                             MPI_Info info,
                                             MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kReduce_scatter_block_init, comm, TypeBytes(recvcount, type), -1, request,
      MERIDIAN_PMPI4(Reduce_scatter_block_init)(sendbuf, recvbuf, recvcount,
                                                type, op, comm, info, request))
}

int MERIDIAN_MPI4(Scan_init)(const void* sendbuf, void* recvbuf, int count,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                             MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kScan_init, comm, TypeBytes(count, type), -1, request,
      MERIDIAN_PMPI4(Scan_init)(sendbuf, recvbuf, count, type, op, comm, info,
                                request))
}

int MERIDIAN_MPI4(Exscan_init)(const void* sendbuf, void* recvbuf, int count,
                               MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                               MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kExscan_init, comm, TypeBytes(count, type), -1, request,
      MERIDIAN_PMPI4(Exscan_init)(sendbuf, recvbuf, count, type, op, comm, info,
                                  request))
}

int MERIDIAN_MPI4(Neighbor_allgather_init)(const void* sendbuf, int sendcount,
                                           MPI_Datatype sendtype, void* recvbuf,
                                           int recvcount, MPI_Datatype recvtype,
                                           MPI_Comm comm, MPI_Info info,
                                           MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(kNeighbor_allgather_init, comm,
                           TypeBytes(sendcount, sendtype), -1, request,
                           MERIDIAN_PMPI4(Neighbor_allgather_init)(
                               sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm, info, request))
}

int MERIDIAN_MPI4(Neighbor_allgatherv_init)(
    const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
    MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kNeighbor_allgatherv_init, comm, TypeBytes(sendcount, sendtype), -1,
      request,
      MERIDIAN_PMPI4(Neighbor_allgatherv_init)(sendbuf, sendcount, sendtype,
                                               recvbuf, recvcounts, displs,
                                               recvtype, comm, info, request))
}

int MERIDIAN_MPI4(Neighbor_alltoall_init)(const void* sendbuf, int sendcount,
                                          MPI_Datatype sendtype, void* recvbuf,
                                          int recvcount, MPI_Datatype recvtype,
                                          MPI_Comm comm, MPI_Info info,
                                          MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(kNeighbor_alltoall_init, comm,
                           TypeBytes(sendcount, sendtype), -1, request,
                           MERIDIAN_PMPI4(Neighbor_alltoall_init)(
                               sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm, info, request))
}

int MERIDIAN_MPI4(Neighbor_alltoallv_init)(
    const void* sendbuf, const int sendcounts[], const int sdispls[],
    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
    MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kNeighbor_alltoallv_init, comm,
      SumBytes(sendcounts, OutDegree(comm), sendtype), -1, request,
      MERIDIAN_PMPI4(Neighbor_alltoallv_init)(
          sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
          recvtype, comm, info, request))
}

int MERIDIAN_MPI4(Neighbor_alltoallw_init)(
    const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
    MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kNeighbor_alltoallw_init, comm,
      SumTypedBytes(sendcounts, sendtypes, OutDegree(comm)), -1, request,
      MERIDIAN_PMPI4(Neighbor_alltoallw_init)(
          sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
          recvtypes, comm, info, request))
}
#undef MERIDIAN_COLLECTIVE_INIT
#undef MERIDIAN_MPI4
#undef MERIDIAN_PMPI4

// ---- Partitioned point-to-point (MPI-4; MPICH)
// ---------------------------------

#if !defined(OPEN_MPI)
// Psend_init/Precv_init make persistent requests, recorded as Send_init's
// are: each start from MPI_Start to completion, under the init call's name,
// with the whole buffer's bytes (partitions x count x type size). The
// MPI_Pready* calls that release partitions are recorded as calls of their
// own; MPI_Parrived, polled like MPI_Test, is not.
#define MERIDIAN_PARTITIONED_INIT(Name, op, buf_type, peer_is_source)         \
  int MPI_##Name(buf_type buf, int partitions, MPI_Count count,               \
                 MPI_Datatype type, int peer, int tag, MPI_Comm comm,         \
                 MPI_Info info, MPI_Request* request) {                       \
    const int rc = PMPI_##Name(buf, partitions, count, type, peer, tag, comm, \
                               info, request);                                \
    if (rc == MPI_SUCCESS && probe::g_event.enabled && request != nullptr &&  \
        *request != MPI_REQUEST_NULL) {                                       \
      const CommInfo* info_of_comm = Comm(comm);                              \
      g_persistent.Insert(                                                    \
          Key(*request),                                                      \
          Pending{PointToPointRecord(op, 0, 0, info_of_comm, peer, tag,       \
                                     TypeBytes(partitions * count, type)),    \
                  info_of_comm, peer_is_source && peer == MPI_ANY_SOURCE,     \
                  peer_is_source && tag == MPI_ANY_TAG});                     \
    }                                                                         \
    return rc;                                                                \
  }
MERIDIAN_PARTITIONED_INIT(Psend_init, kPsend_init, const void*, false)
MERIDIAN_PARTITIONED_INIT(Precv_init, kPrecv_init, void*, true)
#undef MERIDIAN_PARTITIONED_INIT

#define MERIDIAN_PREADY(op, call)                      \
  if (!probe::Recording()) return call;                \
  const int64_t start = probe::Now();                  \
  const int rc = call;                                 \
  probe::Emit(Base(op, start, probe::Now(), nullptr)); \
  return rc;

int MPI_Pready(int partition, MPI_Request request) {
  MERIDIAN_PREADY(kPready, PMPI_Pready(partition, request))
}

int MPI_Pready_range(int partition_low, int partition_high,
                     MPI_Request request) {
  MERIDIAN_PREADY(kPready_range,
                  PMPI_Pready_range(partition_low, partition_high, request))
}

int MPI_Pready_list(int length, int partitions[], MPI_Request request) {
  MERIDIAN_PREADY(kPready_list, PMPI_Pready_list(length, partitions, request))
}
#undef MERIDIAN_PREADY
#endif  // !OPEN_MPI

}  // extern "C"

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_WRAP_MPI4_H_
