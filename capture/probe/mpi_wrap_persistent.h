// Persistent requests, probes and matched receives, Alltoallw and the
// neighbor collectives.
//
// Part of mpi_wrappers.cc's translation unit, included there only (and by
// the parts after it): the wrappers' state and helpers stay in one
// translation unit's anonymous namespace, where the compiler inlines them
// into every wrapper, as the MPI call path needs.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_WRAP_PERSISTENT_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_WRAP_PERSISTENT_H_

#include "capture/probe/mpi_wrap_collectives.h"

extern "C" {

// ---- Persistent requests ----------------------------------------------------

#define MERIDIAN_INIT(Name, op)                                              \
  int MPI_##Name(const void* buf, int count, MPI_Datatype type, int peer,    \
                 int tag, MPI_Comm comm, MPI_Request* request) {             \
    const int rc = PMPI_##Name(buf, count, type, peer, tag, comm, request);  \
    if (rc == MPI_SUCCESS && probe::g_event.enabled && request != nullptr && \
        *request != MPI_REQUEST_NULL) {                                      \
      const CommInfo* info = Comm(comm);                                     \
      g_persistent.Insert(                                                   \
          Key(*request),                                                     \
          Pending{PointToPointRecord(op, 0, 0, info, peer, tag,              \
                                     TypeBytes(count, type)),                \
                  info, peer == MPI_ANY_SOURCE, tag == MPI_ANY_TAG});        \
    }                                                                        \
    return rc;                                                               \
  }
MERIDIAN_INIT(Send_init, kSend_init)
MERIDIAN_INIT(Ssend_init, kSsend_init)
MERIDIAN_INIT(Rsend_init, kRsend_init)
MERIDIAN_INIT(Bsend_init, kBsend_init)
#undef MERIDIAN_INIT

int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag,
                  MPI_Comm comm, MPI_Request* request) {
  const int rc = PMPI_Recv_init(buf, count, type, source, tag, comm, request);
  if (rc == MPI_SUCCESS && probe::g_event.enabled && request != nullptr &&
      *request != MPI_REQUEST_NULL) {
    const CommInfo* info = Comm(comm);
    g_persistent.Insert(
        Key(*request),
        Pending{PointToPointRecord(kRecv_init, 0, 0, info, source, tag,
                                   TypeBytes(count, type)),
                info, source == MPI_ANY_SOURCE, tag == MPI_ANY_TAG});
  }
  return rc;
}

int MPI_Start(MPI_Request* request) {
  if (!probe::g_event.enabled) return PMPI_Start(request);
  const uint64_t key =
      (request == nullptr || *request == MPI_REQUEST_NULL) ? 0 : Key(*request);
  if (!probe::Recording()) {
    CountUnrecordedStart(key);
    return PMPI_Start(request);
  }
  const int64_t start = probe::Now();
  const int rc = PMPI_Start(request);
  if (rc == MPI_SUCCESS) StartPersistent(key, start, probe::Now(), 1);
  return rc;
}

int MPI_Startall(int count, MPI_Request requests[]) {
  if (!probe::g_event.enabled || requests == nullptr) {
    return PMPI_Startall(count, requests);
  }
  if (!probe::Recording()) {
    for (int i = 0; i < count; ++i) {
      if (requests[i] != MPI_REQUEST_NULL) {
        CountUnrecordedStart(Key(requests[i]));
      }
    }
    return PMPI_Startall(count, requests);
  }
  const int64_t start = probe::Now();
  const int rc = PMPI_Startall(count, requests);
  const int64_t end = probe::Now();
  // Persistent requests keep their handles when started.
  for (int i = 0; rc == MPI_SUCCESS && i < count; ++i) {
    if (requests[i] != MPI_REQUEST_NULL) {
      StartPersistent(Key(requests[i]), start, end, count);
    }
  }
  return rc;
}

int MPI_Request_free(MPI_Request* request) {
  if (probe::g_event.enabled && request != nullptr &&
      *request != MPI_REQUEST_NULL) {
    if (SharedCompleted(*request)) {
      // An Isend freed rather than waited for (a common pattern): it ended
      // in its call, where MPI completed it.
      tls_shared.EndInCall();
    } else {
      g_persistent.Take(Key(*request), nullptr);
      // Freed before a Wait or Test saw it complete: it is recorded as
      // ending here, where the program let it go.
      Pending pending;
      if (g_requests.Take(Key(*request), &pending)) {
        pending.record.dur_ns = probe::Now() - pending.record.start_ns;
        probe::Emit(pending.record);
      }
    }
  }
  return PMPI_Request_free(request);
}

// ---- Probes and matched receives --------------------------------------------

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!probe::Recording()) return PMPI_Probe(source, tag, comm, status);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const CommInfo* info = Comm(comm);
  ProbeRecord r = PointToPointRecord(kProbe, 0, 0, info, source, tag, 0);
  StartBlocking(&r);
  const int rc = PMPI_Probe(source, tag, comm, s);
  SetReceived(&r, info, source, tag, s);
  FinishBlocking(&r);
  return rc;
}

// Every call is recorded (mpitrace counts them all), with the matched
// source and tag when a message was there.
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag,
               MPI_Status* status) {
  if (!probe::Recording()) return PMPI_Iprobe(source, tag, comm, flag, status);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc = PMPI_Iprobe(source, tag, comm, flag, s);
  const bool found = rc == MPI_SUCCESS && *flag;
  const int64_t end = probe::Now();
  probe::Emit(PointToPointRecord(
      kIprobe, start, end, Comm(comm),
      found && source == MPI_ANY_SOURCE ? s->MPI_SOURCE : source,
      found && tag == MPI_ANY_TAG ? s->MPI_TAG : tag, 0));
  return rc;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
               MPI_Status* status) {
  if (!probe::g_event.enabled) {
    return PMPI_Mprobe(source, tag, comm, message, status);
  }
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc = PMPI_Mprobe(source, tag, comm, message, s);
  const CommInfo* info = Comm(comm);
  if (rc == MPI_SUCCESS) KeepMessage(message, info);
  if (probe::Recording()) {
    probe::Emit(
        PointToPointRecord(kMprobe, start, probe::Now(), info,
                           source == MPI_ANY_SOURCE ? s->MPI_SOURCE : source,
                           tag == MPI_ANY_TAG ? s->MPI_TAG : tag, 0));
  }
  return rc;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag,
                MPI_Message* message, MPI_Status* status) {
  if (!probe::g_event.enabled) {
    return PMPI_Improbe(source, tag, comm, flag, message, status);
  }
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc = PMPI_Improbe(source, tag, comm, flag, message, s);
  const bool found = rc == MPI_SUCCESS && *flag;
  const CommInfo* info = Comm(comm);
  if (found) KeepMessage(message, info);
  if (probe::Recording()) {
    probe::Emit(PointToPointRecord(
        kImprobe, start, probe::Now(), info,
        found && source == MPI_ANY_SOURCE ? s->MPI_SOURCE : source,
        found && tag == MPI_ANY_TAG ? s->MPI_TAG : tag, 0));
  }
  return rc;
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
              MPI_Status* status) {
  if (!probe::g_event.enabled) {
    return PMPI_Mrecv(buf, count, type, message, status);
  }
  const uint64_t key = MessageKey(message);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc = PMPI_Mrecv(buf, count, type, message, s);
  const CommInfo* info = TakeMessage(key);
  if (probe::Recording()) {
    probe::Emit(PointToPointRecord(kMrecv, start, probe::Now(), info,
                                   s->MPI_SOURCE, s->MPI_TAG,
                                   TypeBytes(count, type)));
  }
  return rc;
}

int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
               MPI_Request* request) {
  if (!probe::g_event.enabled) {
    return PMPI_Imrecv(buf, count, type, message, request);
  }
  const uint64_t key = MessageKey(message);
  const int64_t start = probe::Now();
  const int rc = PMPI_Imrecv(buf, count, type, message, request);
  const CommInfo* info = TakeMessage(key);
  if (rc == MPI_SUCCESS && probe::Recording()) {
    // Source and tag from the completing status.
    Issue(request,
          PointToPointRecord(kImrecv, start, start, info, -1, -1,
                             TypeBytes(count, type)),
          info, true, true);
  }
  return rc;
}

// ---- Alltoallw and neighbor collectives -------------------------------------

int MPI_Alltoallw(const void* sendbuf, const int sendcounts[],
                  const int sdispls[], const MPI_Datatype sendtypes[],
                  void* recvbuf, const int recvcounts[], const int rdispls[],
                  const MPI_Datatype recvtypes[], MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kAlltoallw, comm,
      TypedBlocksBytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes,
                       comm),
      -1,
      PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                     recvcounts, rdispls, recvtypes, comm))
}

int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], const MPI_Datatype sendtypes[],
                   void* recvbuf, const int recvcounts[], const int rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIalltoallw, comm,
      TypedBlocksBytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes,
                       comm),
      -1, request,
      PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                      recvcounts, rdispls, recvtypes, comm, request))
}

// Neighbor collectives: the bytes this rank sends, to each neighbor for
// allgather(v) and alltoall (as Allgather and Alltoall record them), summed
// over its out-neighbors for alltoallv and alltoallw.
int MPI_Neighbor_allgather(const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
  MERIDIAN_NEIGHBOR(kNeighbor_allgather, comm, TypeBytes(sendcount, sendtype),
                    PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype,
                                            recvbuf, recvcount, recvtype, comm))
}

int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm) {
  MERIDIAN_NEIGHBOR(
      kNeighbor_allgatherv, comm, TypeBytes(sendcount, sendtype),
      PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                               recvcounts, displs, recvtype, comm))
}

int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount,
                          MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm) {
  MERIDIAN_NEIGHBOR(kNeighbor_alltoall, comm, TypeBytes(sendcount, sendtype),
                    PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype,
                                           recvbuf, recvcount, recvtype, comm))
}

int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                           const int sdispls[], MPI_Datatype sendtype,
                           void* recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm) {
  MERIDIAN_NEIGHBOR(
      kNeighbor_alltoallv, comm,
      SumBytes(sendcounts, OutDegree(comm), sendtype),
      PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                              recvcounts, rdispls, recvtype, comm))
}

int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                           const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf,
                           const int recvcounts[], const MPI_Aint rdispls[],
                           const MPI_Datatype recvtypes[], MPI_Comm comm) {
  MERIDIAN_NEIGHBOR(
      kNeighbor_alltoallw, comm,
      SumTypedBytes(sendcounts, sendtypes, OutDegree(comm)),
      PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                              recvcounts, rdispls, recvtypes, comm))
}

int MPI_Ineighbor_allgather(const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  MERIDIAN_INEIGHBOR(
      kIneighbor_allgather, comm, TypeBytes(sendcount, sendtype), request,
      PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm, request))
}

int MPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount,
                             MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  MERIDIAN_INEIGHBOR(
      kIneighbor_allgatherv, comm, TypeBytes(sendcount, sendtype), request,
      PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                recvcounts, displs, recvtype, comm, request))
}

int MPI_Ineighbor_alltoall(const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request* request) {
  MERIDIAN_INEIGHBOR(
      kIneighbor_alltoall, comm, TypeBytes(sendcount, sendtype), request,
      PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                              recvtype, comm, request))
}

int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                            const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_INEIGHBOR(
      kIneighbor_alltoallv, comm,
      SumBytes(sendcounts, OutDegree(comm), sendtype), request,
      PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                               recvcounts, rdispls, recvtype, comm, request))
}

int MPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf,
                            const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request* request) {
  MERIDIAN_INEIGHBOR(
      kIneighbor_alltoallw, comm,
      SumTypedBytes(sendcounts, sendtypes, OutDegree(comm)), request,
      PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                               recvcounts, rdispls, recvtypes, comm, request))
}

}  // extern "C"

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_WRAP_PERSISTENT_H_
