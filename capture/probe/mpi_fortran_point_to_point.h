// Fortran MPI_Init and MPI_Finalize, point-to-point calls, persistent
// requests, probes and completion.
//
// Part of mpi_fortran.cc's translation unit, included there only (and by
// the parts after it), as mpi_wrappers.cc's parts are.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_FORTRAN_POINT_TO_POINT_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_FORTRAN_POINT_TO_POINT_H_

#include "capture/probe/mpi_fortran_convert.h"

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

}  // extern "C"

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_FORTRAN_POINT_TO_POINT_H_
