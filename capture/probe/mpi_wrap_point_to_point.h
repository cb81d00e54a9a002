// MPI_Init and MPI_Finalize; point-to-point calls, blocking and not, and
// their completion (Wait, Test and their array forms).
//
// Part of mpi_wrappers.cc's translation unit, included there only (and by
// the parts after it): the wrappers' state and helpers stay in one
// translation unit's anonymous namespace, where the compiler inlines them
// into every wrapper, as the MPI call path needs.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_WRAP_POINT_TO_POINT_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_WRAP_POINT_TO_POINT_H_

#include "capture/probe/mpi_wrap_objects.h"

extern "C" {

// ---- Init and Finalize ------------------------------------------------------

int MPI_Init(int* argc, char*** argv) {
  const int64_t start = probe::Now();
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) AfterInit(start, kInit);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int64_t start = probe::Now();
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) AfterInit(start, kInit_thread);
  return rc;
}

// The resource use counters come first: mpitrace reads them at
// MPI_Finalize, before MPI tears down.
int MPI_Finalize(void) {
  probe::EmitResourceUse();
  const int64_t start = probe::Now();
  const int rc = PMPI_Finalize();
  if (probe::Recording()) {
    probe::Emit(Base(kFinalize, start, probe::Now(), nullptr));
  }
  return rc;
}

// ---- Blocking point-to-point ------------------------------------------------

// Point-to-point calls outside the tracing window go straight to PMPI:
// no clock read, no lookup.
#define MERIDIAN_SEND(Name, op)                                           \
  int MPI_##Name(const void* buf, int count, MPI_Datatype type, int dest, \
                 int tag, MPI_Comm comm) {                                \
    if (!probe::Recording())                                              \
      return PMPI_##Name(buf, count, type, dest, tag, comm);              \
    ProbeRecord r = PointToPointRecord(op, 0, 0, Comm(comm), dest, tag,   \
                                       TypeBytes(count, type));           \
    StartBlocking(&r);                                                    \
    const int rc = PMPI_##Name(buf, count, type, dest, tag, comm);        \
    FinishBlocking(&r);                                                   \
    return rc;                                                            \
  }
MERIDIAN_SEND(Send, kSend)
MERIDIAN_SEND(Ssend, kSsend)
MERIDIAN_SEND(Rsend, kRsend)
MERIDIAN_SEND(Bsend, kBsend)
#undef MERIDIAN_SEND

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag,
             MPI_Comm comm, MPI_Status* status) {
  if (!probe::Recording()) {
    return PMPI_Recv(buf, count, type, source, tag, comm, status);
  }
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const CommInfo* info = Comm(comm);
  ProbeRecord r = PointToPointRecord(kRecv, 0, 0, info, source, tag,
                                     TypeBytes(count, type));
  StartBlocking(&r);
  const int rc = PMPI_Recv(buf, count, type, source, tag, comm, s);
  SetReceived(&r, info, source, tag, s);
  FinishBlocking(&r);
  return rc;
}

// Sendrecv: peer and tag of the send, source and tag of the receive (as
// received); bytes of both buffers.
int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 int dest, int sendtag, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                 MPI_Status* status) {
  if (!probe::Recording()) {
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                         recvcount, recvtype, source, recvtag, comm, status);
  }
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const CommInfo* info = Comm(comm);
  const int64_t sent = TypeBytes(sendcount, sendtype);
  ProbeRecord r = PointToPointRecord(kSendrecv, 0, 0, info, dest, sendtag,
                                     sent + TypeBytes(recvcount, recvtype));
  StartBlocking(&r);
  const int rc =
      PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                    recvcount, recvtype, source, recvtag, comm, s);
  SetSendReceive(&r, info, source == MPI_ANY_SOURCE ? s->MPI_SOURCE : source,
                 recvtag == MPI_ANY_TAG ? s->MPI_TAG : recvtag, sent);
  FinishBlocking(&r);
  return rc;
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest,
                         int sendtag, int source, int recvtag, MPI_Comm comm,
                         MPI_Status* status) {
  if (!probe::Recording()) {
    return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source,
                                 recvtag, comm, status);
  }
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const CommInfo* info = Comm(comm);
  ProbeRecord r = PointToPointRecord(kSendrecv_replace, 0, 0, info, dest,
                                     sendtag, 2 * TypeBytes(count, type));
  StartBlocking(&r);
  const int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source,
                                       recvtag, comm, s);
  SetSendReceive(&r, info, source == MPI_ANY_SOURCE ? s->MPI_SOURCE : source,
                 recvtag == MPI_ANY_TAG ? s->MPI_TAG : recvtag,
                 TypeBytes(count, type));
  FinishBlocking(&r);
  return rc;
}

// ---- Non-blocking point-to-point --------------------------------------------

// Issued while recording is off: a shared completed request still takes its
// place in this thread's order (SharedRequests), so that its completion
// ends nothing recorded.
int Unrecorded(int rc, const MPI_Request* request) {
  if (rc == MPI_SUCCESS && probe::g_event.enabled && request != nullptr &&
      SharedCompleted(*request)) {
    tls_shared.Skip();
  }
  return rc;
}

#define MERIDIAN_ISEND(Name, op)                                             \
  int MPI_##Name(const void* buf, int count, MPI_Datatype type, int dest,    \
                 int tag, MPI_Comm comm, MPI_Request* request) {             \
    if (!probe::Recording())                                                 \
      return Unrecorded(                                                     \
          PMPI_##Name(buf, count, type, dest, tag, comm, request), request); \
    const int64_t start = probe::Now();                                      \
    const int rc = PMPI_##Name(buf, count, type, dest, tag, comm, request);  \
    if (rc == MPI_SUCCESS) {                                                 \
      IssuePointToPoint(op, start, comm, dest, tag, TypeBytes(count, type),  \
                        request);                                            \
    }                                                                        \
    return rc;                                                               \
  }
MERIDIAN_ISEND(Isend, kIsend)
MERIDIAN_ISEND(Issend, kIssend)
MERIDIAN_ISEND(Irsend, kIrsend)
MERIDIAN_ISEND(Ibsend, kIbsend)
#undef MERIDIAN_ISEND

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
              MPI_Comm comm, MPI_Request* request) {
  if (!probe::Recording()) {
    return Unrecorded(PMPI_Irecv(buf, count, type, source, tag, comm, request),
                      request);
  }
  const int64_t start = probe::Now();
  const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, request);
  if (rc == MPI_SUCCESS) {
    IssuePointToPoint(kIrecv, start, comm, source, tag, TypeBytes(count, type),
                      request);
  }
  return rc;
}

// ---- Completion -------------------------------------------------------------

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!probe::g_event.enabled) return PMPI_Wait(request, status);
  const uint32_t ticket = MarkRequest(request);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const bool recording = probe::Recording();
  const int64_t start = probe::Now();
  if (recording) EnterWaitFor(ticket, start);
  const int rc = PMPI_Wait(request, s);
  const int64_t end = probe::Now();
  Complete(ticket, end, s);
  if (recording) {
    probe::LeaveCall();
    probe::Emit(Base(kWait, start, end, nullptr));
  }
  return rc;
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!probe::g_event.enabled) return PMPI_Test(request, flag, status);
  const uint32_t ticket = MarkRequest(request);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int rc = PMPI_Test(request, flag, s);
  if (*flag) {
    Complete(ticket, probe::Now(), s);
  } else {
    g_requests.Unmark(ticket);
  }
  return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!probe::g_event.enabled) return PMPI_Waitall(count, requests, statuses);
  SavedRequests saved(count, requests, statuses);
  const bool recording = probe::Recording();
  const int64_t start = probe::Now();
  if (recording) probe::EnterCall(OpName(kWaitall), kCategoryMpi, start);
  const int rc = PMPI_Waitall(count, requests, saved.statuses());
  const int64_t end = probe::Now();
  saved.CompleteAll(end);
  if (recording) {
    probe::LeaveCall();
    probe::Emit(Base(kWaitall, start, end, nullptr));
  }
  return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int* flag,
                MPI_Status statuses[]) {
  if (!probe::g_event.enabled)
    return PMPI_Testall(count, requests, flag, statuses);
  SavedRequests saved(count, requests, statuses);
  const int rc = PMPI_Testall(count, requests, flag, saved.statuses());
  if (*flag) saved.CompleteAll(probe::Now());
  return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index,
                MPI_Status* status) {
  if (!probe::g_event.enabled)
    return PMPI_Waitany(count, requests, index, status);
  SavedRequests saved(count, requests, MPI_STATUSES_IGNORE);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const bool recording = probe::Recording();
  const int64_t start = probe::Now();
  if (recording) probe::EnterCall(OpName(kWaitany), kCategoryMpi, start);
  const int rc = PMPI_Waitany(count, requests, index, s);
  const int64_t end = probe::Now();
  saved.Complete(*index, end, s);
  if (recording) {
    probe::LeaveCall();
    probe::Emit(Base(kWaitany, start, end, nullptr));
  }
  return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                MPI_Status* status) {
  if (!probe::g_event.enabled) {
    return PMPI_Testany(count, requests, index, flag, status);
  }
  SavedRequests saved(count, requests, MPI_STATUSES_IGNORE);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int rc = PMPI_Testany(count, requests, index, flag, s);
  if (*flag) saved.Complete(*index, probe::Now(), s);
  return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount,
                 int indices[], MPI_Status statuses[]) {
  if (!probe::g_event.enabled) {
    return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  }
  SavedRequests saved(incount, requests, statuses);
  const bool recording = probe::Recording();
  const int64_t start = probe::Now();
  if (recording) probe::EnterCall(OpName(kWaitsome), kCategoryMpi, start);
  const int rc =
      PMPI_Waitsome(incount, requests, outcount, indices, saved.statuses());
  const int64_t end = probe::Now();
  saved.CompleteSome(*outcount, indices, end);
  if (recording) {
    probe::LeaveCall();
    probe::Emit(Base(kWaitsome, start, end, nullptr));
  }
  return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount,
                 int indices[], MPI_Status statuses[]) {
  if (!probe::g_event.enabled) {
    return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  }
  SavedRequests saved(incount, requests, statuses);
  const int rc =
      PMPI_Testsome(incount, requests, outcount, indices, saved.statuses());
  saved.CompleteSome(*outcount, indices, probe::Now());
  return rc;
}

}  // extern "C"

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_WRAP_POINT_TO_POINT_H_
