// Collectives, blocking and not; communicators and topologies made; the
// queries mpitrace counts, and MPI_Pcontrol.
//
// Part of mpi_wrappers.cc's translation unit, included there only (and by
// the parts after it): the wrappers' state and helpers stay in one
// translation unit's anonymous namespace, where the compiler inlines them
// into every wrapper, as the MPI call path needs.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_WRAP_COLLECTIVES_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_WRAP_COLLECTIVES_H_

#include "capture/probe/mpi_wrap_point_to_point.h"

extern "C" {

// ---- Blocking collectives ---------------------------------------------------

int MPI_Barrier(MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(kBarrier, comm, 0, -1, PMPI_Barrier(comm))
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root,
              MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(kBcast, comm, TypeBytes(count, type), root,
                      PMPI_Bcast(buf, count, type, root, comm))
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
               MPI_Op op, int root, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kReduce, comm, TypeBytes(count, type), root,
      PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm))
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                  MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(kAllreduce, comm, TypeBytes(count, type), -1,
                      PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm))
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kAllgather, comm,
      BlockBytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
      PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                     comm))
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int displs[],
                   MPI_Datatype recvtype, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(kAllgatherv, comm,
                      SumBytes(recvcounts, CountsSize(comm), recvtype), -1,
                      PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                      recvcounts, displs, recvtype, comm))
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kAlltoall, comm,
      BlockBytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
      PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                    comm))
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[],
                  const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kAlltoallv, comm,
      BlocksBytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm),
      -1,
      PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm))
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
               void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
               MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kGather, comm,
      GatherBytes(comm, root, sendcount, sendtype, recvcount, recvtype), root,
      PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  root, comm))
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, const int recvcounts[], const int displs[],
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kGatherv, comm,
      GathervBytes(comm, root, sendcount, sendtype, recvcounts, recvtype), root,
      PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                   recvtype, root, comm))
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kScatter, comm,
      ScatterBytes(comm, root, sendcount, sendtype, recvcount, recvtype), root,
      PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                   root, comm))
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[],
                 const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kScatterv, comm,
      ScattervBytes(comm, root, sendcounts, sendtype, recvcount, recvtype),
      root,
      PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                    recvtype, root, comm))
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf,
                       const int recvcounts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kReduce_scatter, comm, SumBytes(recvcounts, CommSize(comm), type), -1,
      PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm))
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kReduce_scatter_block, comm, TypeBytes(recvcount, type), -1,
      PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm))
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
             MPI_Op op, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(kScan, comm, TypeBytes(count, type), -1,
                      PMPI_Scan(sendbuf, recvbuf, count, type, op, comm))
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
               MPI_Op op, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(kExscan, comm, TypeBytes(count, type), -1,
                      PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm))
}

// ---- Non-blocking collectives -----------------------------------------------

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(kIbarrier, comm, 0, -1, request,
                       PMPI_Ibarrier(comm, request))
}

int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(kIbcast, comm, TypeBytes(count, type), root, request,
                       PMPI_Ibcast(buf, count, type, root, comm, request))
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIreduce, comm, TypeBytes(count, type), root, request,
      PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request))
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIallreduce, comm, TypeBytes(count, type), -1, request,
      PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request))
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIallgather, comm,
      BlockBytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
      request,
      PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                      recvtype, comm, request))
}

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIallgatherv, comm, SumBytes(recvcounts, CountsSize(comm), recvtype), -1,
      request,
      PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                       displs, recvtype, comm, request))
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIalltoall, comm,
      BlockBytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
      request,
      PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                     comm, request))
}

int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int rdispls[],
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIalltoallv, comm,
      BlocksBytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm),
      -1, request,
      PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                      recvcounts, rdispls, recvtype, comm, request))
}

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIgather, comm,
      GatherBytes(comm, root, sendcount, sendtype, recvcount, recvtype), root,
      request,
      PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                   root, comm, request))
}

int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIgatherv, comm,
      GathervBytes(comm, root, sendcount, sendtype, recvcounts, recvtype), root,
      request,
      PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                    recvtype, root, comm, request))
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIscatter, comm,
      ScatterBytes(comm, root, sendcount, sendtype, recvcount, recvtype), root,
      request,
      PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                    root, comm, request))
}

int MPI_Iscatterv(const void* sendbuf, const int sendcounts[],
                  const int displs[], MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIscatterv, comm,
      ScattervBytes(comm, root, sendcounts, sendtype, recvcount, recvtype),
      root, request,
      PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                     recvtype, root, comm, request))
}

int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf,
                        const int recvcounts[], MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(kIreduce_scatter, comm,
                       SumBytes(recvcounts, CommSize(comm), type), -1, request,
                       PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type,
                                            op, comm, request))
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                              MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(kIreduce_scatter_block, comm, TypeBytes(recvcount, type),
                       -1, request,
                       PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount,
                                                  type, op, comm, request))
}

int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
              MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIscan, comm, TypeBytes(count, type), -1, request,
      PMPI_Iscan(sendbuf, recvbuf, count, type, op, comm, request))
}

int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIexscan, comm, TypeBytes(count, type), -1, request,
      PMPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, request))
}

// ---- Communicators ----------------------------------------------------------

#define MERIDIAN_COMM_CREATE(op, parent, out, salt, call)   \
  if (!probe::g_event.enabled) return call;                 \
  const int64_t start = probe::Now();                       \
  const int rc = call;                                      \
  const int64_t end = probe::Now();                         \
  if (rc == MPI_SUCCESS) RegisterChild(parent, *out, salt); \
  if (probe::Recording()) {                                 \
    probe::Emit(Base(op, start, end, Comm(parent)));        \
  }                                                         \
  return rc;

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(kComm_dup, comm, newcomm, 0,
                       PMPI_Comm_dup(comm, newcomm))
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(kComm_split, comm, newcomm, 0,
                       PMPI_Comm_split(comm, color, key, newcomm))
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(
      kComm_split_type, comm, newcomm, 0,
      PMPI_Comm_split_type(comm, split_type, key, info, newcomm))
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(kComm_create, comm, newcomm, 0,
                       PMPI_Comm_create(comm, group, newcomm))
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[],
                    const int periods[], int reorder, MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(
      kCart_create, comm, newcomm, 0,
      PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm))
}

// Collective over `group` only, not the parent: the members' ordinals may
// differ, so the id comes from the members (as a lazily registered one) and
// the tag.
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                          MPI_Comm* newcomm) {
  const int64_t start = probe::Now();
  const int rc = PMPI_Comm_create_group(comm, group, tag, newcomm);
  if (!probe::g_event.enabled) return rc;
  const int64_t end = probe::Now();
  if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL) {
    std::lock_guard<std::mutex> lock(g_comm_mutex);
    const int size = CommSize(*newcomm);
    const int32_t* world = WorldRanks(*newcomm, size);
    Register(*newcomm,
             IdOfMembers(Mix(0x47525550 /* "GRUP" */, tag, size), world, size),
             size, world);
  }
  if (probe::Recording()) {
    probe::Emit(Base(kComm_create_group, start, end, Comm(comm)));
  }
  return rc;
}

int MPI_Comm_free(MPI_Comm* comm) {
  if (probe::g_event.enabled && comm != nullptr)
    g_comms.Take(Key(*comm), nullptr);
  return PMPI_Comm_free(comm);
}

// ---- Topologies -------------------------------------------------------------

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[],
                     const int edges[], int reorder, MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(
      kGraph_create, comm, newcomm, 0,
      PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm))
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[],
                          const int degrees[], const int destinations[],
                          const int weights[], MPI_Info info, int reorder,
                          MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(
      kDist_graph_create, comm, newcomm, 0,
      PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights,
                             info, reorder, newcomm))
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree,
                                   const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[],
                                   const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(kDist_graph_create_adjacent, comm, newcomm, 0,
                       PMPI_Dist_graph_create_adjacent(
                           comm, indegree, sources, sourceweights, outdegree,
                           destinations, destweights, info, reorder, newcomm))
}

// ---- Queries mpitrace counts, and MPI_Pcontrol ------------------------------

int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  if (!probe::Recording()) return PMPI_Comm_rank(comm, rank);
  const int64_t start = probe::Now();
  const int rc = PMPI_Comm_rank(comm, rank);
  probe::Emit(Base(kComm_rank, start, probe::Now(), Comm(comm)));
  return rc;
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  if (!probe::Recording()) return PMPI_Comm_size(comm, size);
  const int64_t start = probe::Now();
  const int rc = PMPI_Comm_size(comm, size);
  probe::Emit(Base(kComm_size, start, probe::Now(), Comm(comm)));
  return rc;
}

// Level 0 pauses recording, any other resumes it (probe_runtime.h). The
// call is recorded as an instant with its level ("level" arg) whether or
// not recording is on, so that the windows show in the timeline.
int MPI_Pcontrol(const int level, ...) {
  if (probe::g_event.enabled) {
    if (level != 0) probe::SetPcontrol(level);
    const int64_t now = probe::Now();
    ProbeRecord r = Base(kPcontrol, now, now, nullptr);
    r.kind = 1;  // v1::SPAN_KIND_INSTANT
    // One string per level: a program uses a handful.
    char args[24];
    snprintf(args, sizeof(args), "level=%d", level);
    r.args = probe::Intern(args);
    probe::Emit(r);
    if (level == 0) probe::SetPcontrol(0);
  }
  return PMPI_Pcontrol(level);
}

}  // extern "C"

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_WRAP_COLLECTIVES_H_
