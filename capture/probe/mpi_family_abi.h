// The interface between libmeridian_probe.so's MPI dispatcher
// (mpi_dispatch.h) and the MPI family libraries (libmeridian_mpi_openmpi.so,
// libmeridian_mpi_mpich.so: mpi_wrappers.cc, and for Open MPI mpi_fortran.cc,
// built against one family's mpi.h: mpi_family.cc). Both sides are
// generated from the one list below, so they cannot disagree on which
// symbols exist, in which order, or with how many arguments.
//
// Why arguments can be forwarded without knowing their types: on x86-64
// (System V) and AArch64 (LP64) every argument of these functions is an
// integer or a pointer (MPICH's handles are ints, Open MPI's are pointers;
// none is floating point or a struct by value), and each such argument takes
// one general register, or one 8-byte stack slot past the registers. So the
// dispatcher's stub for MPI_Send takes six pointer-sized integers and passes
// them unchanged to the family library's MPI_Send, whose int parameters read
// the low 32 bits, as they would from the program's own call. Each family
// library checks at compile time that its wrapper's parameter count equals
// the count here and that every parameter is an integer or a pointer
// (MERIDIAN_MPI_FAMILY_ENTRY below). One Fortran function has a CHARACTER
// argument, MPI_FILE_OPEN (below); its hidden length is listed.
//
// The list holds every MPI function the probe records, C names with their
// parameter count, Fortran ones as (lower, UPPER, parameter count including
// ierror); each Fortran function is exported under five names (mpi_send,
// mpi_send_, mpi_send__, MPI_SEND, mpi_send_f08_), so the table has one
// entry per name. MPI_FILE_OPEN's count includes the hidden length that
// gfortran passes after the last parameter for its CHARACTER(*) filename
// (an integer, forwarded like the others); the stubs take up to 14.
// Fortran's MPI_PCONTROL(level) has no ierror. One per line by hand:
// clang-format reflows X-macro lists unstably.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_FAMILY_ABI_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_FAMILY_ABI_H_

#include <cstdint>
#include <type_traits>

#if !defined(__x86_64__) && !defined(__aarch64__)
#error \
    "MPI dispatch forwards arguments as pointer-sized integers: x86-64 and AArch64 only"
#endif

// clang-format off
#define MERIDIAN_MPI_C_COMMON(X) \
  X(MPI_Init, 2) \
  X(MPI_Init_thread, 4) \
  X(MPI_Finalize, 0) \
  X(MPI_Send, 6) \
  X(MPI_Ssend, 6) \
  X(MPI_Rsend, 6) \
  X(MPI_Bsend, 6) \
  X(MPI_Recv, 7) \
  X(MPI_Sendrecv, 12) \
  X(MPI_Sendrecv_replace, 9) \
  X(MPI_Isend, 7) \
  X(MPI_Issend, 7) \
  X(MPI_Irsend, 7) \
  X(MPI_Ibsend, 7) \
  X(MPI_Irecv, 7) \
  X(MPI_Wait, 2) \
  X(MPI_Test, 3) \
  X(MPI_Waitall, 3) \
  X(MPI_Testall, 4) \
  X(MPI_Waitany, 4) \
  X(MPI_Testany, 5) \
  X(MPI_Waitsome, 5) \
  X(MPI_Testsome, 5) \
  X(MPI_Barrier, 1) \
  X(MPI_Bcast, 5) \
  X(MPI_Reduce, 7) \
  X(MPI_Allreduce, 6) \
  X(MPI_Allgather, 7) \
  X(MPI_Allgatherv, 8) \
  X(MPI_Alltoall, 7) \
  X(MPI_Alltoallv, 9) \
  X(MPI_Gather, 8) \
  X(MPI_Gatherv, 9) \
  X(MPI_Scatter, 8) \
  X(MPI_Scatterv, 9) \
  X(MPI_Reduce_scatter, 6) \
  X(MPI_Reduce_scatter_block, 6) \
  X(MPI_Scan, 6) \
  X(MPI_Exscan, 6) \
  X(MPI_Ibarrier, 2) \
  X(MPI_Ibcast, 6) \
  X(MPI_Ireduce, 8) \
  X(MPI_Iallreduce, 7) \
  X(MPI_Iallgather, 8) \
  X(MPI_Iallgatherv, 9) \
  X(MPI_Ialltoall, 8) \
  X(MPI_Ialltoallv, 10) \
  X(MPI_Igather, 9) \
  X(MPI_Igatherv, 10) \
  X(MPI_Iscatter, 9) \
  X(MPI_Iscatterv, 10) \
  X(MPI_Ireduce_scatter, 7) \
  X(MPI_Ireduce_scatter_block, 7) \
  X(MPI_Iscan, 7) \
  X(MPI_Iexscan, 7) \
  X(MPI_Comm_dup, 2) \
  X(MPI_Comm_split, 4) \
  X(MPI_Comm_split_type, 5) \
  X(MPI_Comm_create, 3) \
  X(MPI_Comm_create_group, 4) \
  X(MPI_Cart_create, 6) \
  X(MPI_Comm_free, 1) \
  X(MPI_Graph_create, 6) \
  X(MPI_Dist_graph_create, 9) \
  X(MPI_Dist_graph_create_adjacent, 10) \
  X(MPI_Comm_rank, 2) \
  X(MPI_Comm_size, 2) \
  X(MPI_Pcontrol, 1) \
  X(MPI_Send_init, 7) \
  X(MPI_Ssend_init, 7) \
  X(MPI_Rsend_init, 7) \
  X(MPI_Bsend_init, 7) \
  X(MPI_Recv_init, 7) \
  X(MPI_Start, 1) \
  X(MPI_Startall, 2) \
  X(MPI_Request_free, 1) \
  X(MPI_Probe, 4) \
  X(MPI_Iprobe, 5) \
  X(MPI_Mprobe, 5) \
  X(MPI_Improbe, 6) \
  X(MPI_Mrecv, 5) \
  X(MPI_Imrecv, 5) \
  X(MPI_Alltoallw, 9) \
  X(MPI_Ialltoallw, 10) \
  X(MPI_Neighbor_allgather, 7) \
  X(MPI_Neighbor_allgatherv, 8) \
  X(MPI_Neighbor_alltoall, 7) \
  X(MPI_Neighbor_alltoallv, 9) \
  X(MPI_Neighbor_alltoallw, 9) \
  X(MPI_Ineighbor_allgather, 8) \
  X(MPI_Ineighbor_allgatherv, 9) \
  X(MPI_Ineighbor_alltoall, 8) \
  X(MPI_Ineighbor_alltoallv, 10) \
  X(MPI_Ineighbor_alltoallw, 10) \
  X(MPI_Win_create, 6) \
  X(MPI_Win_allocate, 6) \
  X(MPI_Win_allocate_shared, 6) \
  X(MPI_Win_create_dynamic, 3) \
  X(MPI_Win_free, 1) \
  X(MPI_Win_fence, 2) \
  X(MPI_Put, 8) \
  X(MPI_Get, 8) \
  X(MPI_Accumulate, 9) \
  X(MPI_Get_accumulate, 12) \
  X(MPI_Fetch_and_op, 7) \
  X(MPI_Compare_and_swap, 7) \
  X(MPI_Rput, 9) \
  X(MPI_Rget, 9) \
  X(MPI_Raccumulate, 10) \
  X(MPI_Rget_accumulate, 13) \
  X(MPI_Win_lock, 4) \
  X(MPI_Win_unlock, 2) \
  X(MPI_Win_lock_all, 2) \
  X(MPI_Win_unlock_all, 1) \
  X(MPI_Win_flush, 2) \
  X(MPI_Win_flush_all, 1) \
  X(MPI_Win_flush_local, 2) \
  X(MPI_Win_flush_local_all, 1) \
  X(MPI_Win_post, 3) \
  X(MPI_Win_start, 3) \
  X(MPI_Win_complete, 1) \
  X(MPI_Win_wait, 1) \
  X(MPI_File_open, 5) \
  X(MPI_File_close, 1) \
  X(MPI_File_read, 5) \
  X(MPI_File_write, 5) \
  X(MPI_File_read_at, 6) \
  X(MPI_File_write_at, 6) \
  X(MPI_File_read_all, 5) \
  X(MPI_File_write_all, 5) \
  X(MPI_File_read_at_all, 6) \
  X(MPI_File_write_at_all, 6) \
  X(MPI_File_iread, 5) \
  X(MPI_File_iwrite, 5) \
  X(MPI_File_iread_at, 6) \
  X(MPI_File_iwrite_at, 6) \
  X(MPI_File_iread_all, 5) \
  X(MPI_File_iwrite_all, 5) \
  X(MPI_File_iread_at_all, 6) \
  X(MPI_File_iwrite_at_all, 6)

// MPI-4 functions only some families have: MPICH 4 (persistent collectives
// and partitioned communication), and Open MPI 4.1's extension holding the
// persistent collectives as MPIX_*. Each family library fills its own group
// (mpi_family.cc); the other group's entries stay null.
#define MERIDIAN_MPI_C_MPI4(X) \
  X(MPI_Barrier_init, 3) \
  X(MPI_Bcast_init, 7) \
  X(MPI_Reduce_init, 9) \
  X(MPI_Allreduce_init, 8) \
  X(MPI_Allgather_init, 9) \
  X(MPI_Allgatherv_init, 10) \
  X(MPI_Alltoall_init, 9) \
  X(MPI_Alltoallv_init, 11) \
  X(MPI_Alltoallw_init, 11) \
  X(MPI_Gather_init, 10) \
  X(MPI_Gatherv_init, 11) \
  X(MPI_Scatter_init, 10) \
  X(MPI_Scatterv_init, 11) \
  X(MPI_Reduce_scatter_init, 8) \
  X(MPI_Reduce_scatter_block_init, 8) \
  X(MPI_Scan_init, 8) \
  X(MPI_Exscan_init, 8) \
  X(MPI_Neighbor_allgather_init, 9) \
  X(MPI_Neighbor_allgatherv_init, 10) \
  X(MPI_Neighbor_alltoall_init, 9) \
  X(MPI_Neighbor_alltoallv_init, 11) \
  X(MPI_Neighbor_alltoallw_init, 11) \
  X(MPI_Psend_init, 9) \
  X(MPI_Precv_init, 9) \
  X(MPI_Pready, 2) \
  X(MPI_Pready_range, 3) \
  X(MPI_Pready_list, 3)

#define MERIDIAN_MPI_C_MPIX(X) \
  X(MPIX_Barrier_init, 3) \
  X(MPIX_Bcast_init, 7) \
  X(MPIX_Reduce_init, 9) \
  X(MPIX_Allreduce_init, 8) \
  X(MPIX_Allgather_init, 9) \
  X(MPIX_Allgatherv_init, 10) \
  X(MPIX_Alltoall_init, 9) \
  X(MPIX_Alltoallv_init, 11) \
  X(MPIX_Alltoallw_init, 11) \
  X(MPIX_Gather_init, 10) \
  X(MPIX_Gatherv_init, 11) \
  X(MPIX_Scatter_init, 10) \
  X(MPIX_Scatterv_init, 11) \
  X(MPIX_Reduce_scatter_init, 8) \
  X(MPIX_Reduce_scatter_block_init, 8) \
  X(MPIX_Scan_init, 8) \
  X(MPIX_Exscan_init, 8) \
  X(MPIX_Neighbor_allgather_init, 9) \
  X(MPIX_Neighbor_allgatherv_init, 10) \
  X(MPIX_Neighbor_alltoall_init, 9) \
  X(MPIX_Neighbor_alltoallv_init, 11) \
  X(MPIX_Neighbor_alltoallw_init, 11)

#define MERIDIAN_MPI_C_FUNCTIONS(X) \
  MERIDIAN_MPI_C_COMMON(X) \
  MERIDIAN_MPI_C_MPI4(X) \
  MERIDIAN_MPI_C_MPIX(X)

// The Fortran names of the common functions: Open MPI's library fills
// them all (mpi_fortran.cc), MPICH's none (its bindings call the C ones).
#define MERIDIAN_MPI_FORTRAN_COMMON(X) \
  X(mpi_init, MPI_INIT, 1) \
  X(mpi_init_thread, MPI_INIT_THREAD, 3) \
  X(mpi_finalize, MPI_FINALIZE, 1) \
  X(mpi_send, MPI_SEND, 7) \
  X(mpi_ssend, MPI_SSEND, 7) \
  X(mpi_rsend, MPI_RSEND, 7) \
  X(mpi_bsend, MPI_BSEND, 7) \
  X(mpi_recv, MPI_RECV, 8) \
  X(mpi_sendrecv, MPI_SENDRECV, 13) \
  X(mpi_sendrecv_replace, MPI_SENDRECV_REPLACE, 10) \
  X(mpi_isend, MPI_ISEND, 8) \
  X(mpi_issend, MPI_ISSEND, 8) \
  X(mpi_irsend, MPI_IRSEND, 8) \
  X(mpi_ibsend, MPI_IBSEND, 8) \
  X(mpi_irecv, MPI_IRECV, 8) \
  X(mpi_wait, MPI_WAIT, 3) \
  X(mpi_test, MPI_TEST, 4) \
  X(mpi_waitall, MPI_WAITALL, 4) \
  X(mpi_testall, MPI_TESTALL, 5) \
  X(mpi_waitany, MPI_WAITANY, 5) \
  X(mpi_testany, MPI_TESTANY, 6) \
  X(mpi_waitsome, MPI_WAITSOME, 6) \
  X(mpi_testsome, MPI_TESTSOME, 6) \
  X(mpi_barrier, MPI_BARRIER, 2) \
  X(mpi_ibarrier, MPI_IBARRIER, 3) \
  X(mpi_bcast, MPI_BCAST, 6) \
  X(mpi_ibcast, MPI_IBCAST, 7) \
  X(mpi_reduce, MPI_REDUCE, 8) \
  X(mpi_ireduce, MPI_IREDUCE, 9) \
  X(mpi_allreduce, MPI_ALLREDUCE, 7) \
  X(mpi_iallreduce, MPI_IALLREDUCE, 8) \
  X(mpi_scan, MPI_SCAN, 7) \
  X(mpi_iscan, MPI_ISCAN, 8) \
  X(mpi_exscan, MPI_EXSCAN, 7) \
  X(mpi_iexscan, MPI_IEXSCAN, 8) \
  X(mpi_reduce_scatter, MPI_REDUCE_SCATTER, 7) \
  X(mpi_ireduce_scatter, MPI_IREDUCE_SCATTER, 8) \
  X(mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, 7) \
  X(mpi_ireduce_scatter_block, MPI_IREDUCE_SCATTER_BLOCK, 8) \
  X(mpi_allgather, MPI_ALLGATHER, 8) \
  X(mpi_iallgather, MPI_IALLGATHER, 9) \
  X(mpi_alltoall, MPI_ALLTOALL, 8) \
  X(mpi_ialltoall, MPI_IALLTOALL, 9) \
  X(mpi_allgatherv, MPI_ALLGATHERV, 9) \
  X(mpi_iallgatherv, MPI_IALLGATHERV, 10) \
  X(mpi_alltoallv, MPI_ALLTOALLV, 10) \
  X(mpi_ialltoallv, MPI_IALLTOALLV, 11) \
  X(mpi_gather, MPI_GATHER, 9) \
  X(mpi_igather, MPI_IGATHER, 10) \
  X(mpi_scatter, MPI_SCATTER, 9) \
  X(mpi_iscatter, MPI_ISCATTER, 10) \
  X(mpi_gatherv, MPI_GATHERV, 10) \
  X(mpi_igatherv, MPI_IGATHERV, 11) \
  X(mpi_scatterv, MPI_SCATTERV, 10) \
  X(mpi_iscatterv, MPI_ISCATTERV, 11) \
  X(mpi_comm_dup, MPI_COMM_DUP, 3) \
  X(mpi_comm_split, MPI_COMM_SPLIT, 5) \
  X(mpi_comm_split_type, MPI_COMM_SPLIT_TYPE, 6) \
  X(mpi_comm_create, MPI_COMM_CREATE, 4) \
  X(mpi_comm_create_group, MPI_COMM_CREATE_GROUP, 5) \
  X(mpi_cart_create, MPI_CART_CREATE, 7) \
  X(mpi_comm_free, MPI_COMM_FREE, 2) \
  X(mpi_graph_create, MPI_GRAPH_CREATE, 7) \
  X(mpi_dist_graph_create, MPI_DIST_GRAPH_CREATE, 10) \
  X(mpi_dist_graph_create_adjacent, MPI_DIST_GRAPH_CREATE_ADJACENT, 11) \
  X(mpi_comm_rank, MPI_COMM_RANK, 3) \
  X(mpi_comm_size, MPI_COMM_SIZE, 3) \
  X(mpi_pcontrol, MPI_PCONTROL, 1) \
  X(mpi_send_init, MPI_SEND_INIT, 8) \
  X(mpi_ssend_init, MPI_SSEND_INIT, 8) \
  X(mpi_rsend_init, MPI_RSEND_INIT, 8) \
  X(mpi_bsend_init, MPI_BSEND_INIT, 8) \
  X(mpi_recv_init, MPI_RECV_INIT, 8) \
  X(mpi_start, MPI_START, 2) \
  X(mpi_startall, MPI_STARTALL, 3) \
  X(mpi_request_free, MPI_REQUEST_FREE, 2) \
  X(mpi_probe, MPI_PROBE, 5) \
  X(mpi_iprobe, MPI_IPROBE, 6) \
  X(mpi_mprobe, MPI_MPROBE, 6) \
  X(mpi_improbe, MPI_IMPROBE, 7) \
  X(mpi_mrecv, MPI_MRECV, 6) \
  X(mpi_imrecv, MPI_IMRECV, 6) \
  X(mpi_alltoallw, MPI_ALLTOALLW, 10) \
  X(mpi_ialltoallw, MPI_IALLTOALLW, 11) \
  X(mpi_neighbor_allgather, MPI_NEIGHBOR_ALLGATHER, 8) \
  X(mpi_neighbor_allgatherv, MPI_NEIGHBOR_ALLGATHERV, 9) \
  X(mpi_neighbor_alltoall, MPI_NEIGHBOR_ALLTOALL, 8) \
  X(mpi_neighbor_alltoallv, MPI_NEIGHBOR_ALLTOALLV, 10) \
  X(mpi_neighbor_alltoallw, MPI_NEIGHBOR_ALLTOALLW, 10) \
  X(mpi_ineighbor_allgather, MPI_INEIGHBOR_ALLGATHER, 9) \
  X(mpi_ineighbor_allgatherv, MPI_INEIGHBOR_ALLGATHERV, 10) \
  X(mpi_ineighbor_alltoall, MPI_INEIGHBOR_ALLTOALL, 9) \
  X(mpi_ineighbor_alltoallv, MPI_INEIGHBOR_ALLTOALLV, 11) \
  X(mpi_ineighbor_alltoallw, MPI_INEIGHBOR_ALLTOALLW, 11) \
  X(mpi_win_create, MPI_WIN_CREATE, 7) \
  X(mpi_win_allocate, MPI_WIN_ALLOCATE, 7) \
  X(mpi_win_allocate_shared, MPI_WIN_ALLOCATE_SHARED, 7) \
  X(mpi_win_create_dynamic, MPI_WIN_CREATE_DYNAMIC, 4) \
  X(mpi_win_free, MPI_WIN_FREE, 2) \
  X(mpi_win_fence, MPI_WIN_FENCE, 3) \
  X(mpi_put, MPI_PUT, 9) \
  X(mpi_get, MPI_GET, 9) \
  X(mpi_accumulate, MPI_ACCUMULATE, 10) \
  X(mpi_get_accumulate, MPI_GET_ACCUMULATE, 13) \
  X(mpi_fetch_and_op, MPI_FETCH_AND_OP, 8) \
  X(mpi_compare_and_swap, MPI_COMPARE_AND_SWAP, 8) \
  X(mpi_rput, MPI_RPUT, 10) \
  X(mpi_rget, MPI_RGET, 10) \
  X(mpi_raccumulate, MPI_RACCUMULATE, 11) \
  X(mpi_rget_accumulate, MPI_RGET_ACCUMULATE, 14) \
  X(mpi_win_lock, MPI_WIN_LOCK, 5) \
  X(mpi_win_unlock, MPI_WIN_UNLOCK, 3) \
  X(mpi_win_lock_all, MPI_WIN_LOCK_ALL, 3) \
  X(mpi_win_unlock_all, MPI_WIN_UNLOCK_ALL, 2) \
  X(mpi_win_flush, MPI_WIN_FLUSH, 3) \
  X(mpi_win_flush_all, MPI_WIN_FLUSH_ALL, 2) \
  X(mpi_win_flush_local, MPI_WIN_FLUSH_LOCAL, 3) \
  X(mpi_win_flush_local_all, MPI_WIN_FLUSH_LOCAL_ALL, 2) \
  X(mpi_win_post, MPI_WIN_POST, 4) \
  X(mpi_win_start, MPI_WIN_START, 4) \
  X(mpi_win_complete, MPI_WIN_COMPLETE, 2) \
  X(mpi_win_wait, MPI_WIN_WAIT, 2) \
  X(mpi_file_open, MPI_FILE_OPEN, 7) \
  X(mpi_file_close, MPI_FILE_CLOSE, 2) \
  X(mpi_file_read, MPI_FILE_READ, 6) \
  X(mpi_file_write, MPI_FILE_WRITE, 6) \
  X(mpi_file_read_at, MPI_FILE_READ_AT, 7) \
  X(mpi_file_write_at, MPI_FILE_WRITE_AT, 7) \
  X(mpi_file_read_all, MPI_FILE_READ_ALL, 6) \
  X(mpi_file_write_all, MPI_FILE_WRITE_ALL, 6) \
  X(mpi_file_read_at_all, MPI_FILE_READ_AT_ALL, 7) \
  X(mpi_file_write_at_all, MPI_FILE_WRITE_AT_ALL, 7) \
  X(mpi_file_iread, MPI_FILE_IREAD, 6) \
  X(mpi_file_iwrite, MPI_FILE_IWRITE, 6) \
  X(mpi_file_iread_at, MPI_FILE_IREAD_AT, 7) \
  X(mpi_file_iwrite_at, MPI_FILE_IWRITE_AT, 7) \
  X(mpi_file_iread_all, MPI_FILE_IREAD_ALL, 6) \
  X(mpi_file_iwrite_all, MPI_FILE_IWRITE_ALL, 6) \
  X(mpi_file_iread_at_all, MPI_FILE_IREAD_AT_ALL, 7) \
  X(mpi_file_iwrite_at_all, MPI_FILE_IWRITE_AT_ALL, 7)

// Open MPI 4.1's Fortran persistent collectives (the pcollreq extension:
// mpix_allreduce_init_, mpix_allreduce_init_f08_...), which, like its other
// Fortran bindings, call PMPIX_* directly. Only Open MPI's library fills
// them (mpi_fortran.cc); MPICH has none, its Fortran MPI-4 calls reach the
// C wrappers.
#define MERIDIAN_MPI_FORTRAN_MPIX(X) \
  X(mpix_barrier_init, MPIX_BARRIER_INIT, 4) \
  X(mpix_bcast_init, MPIX_BCAST_INIT, 8) \
  X(mpix_reduce_init, MPIX_REDUCE_INIT, 10) \
  X(mpix_allreduce_init, MPIX_ALLREDUCE_INIT, 9) \
  X(mpix_allgather_init, MPIX_ALLGATHER_INIT, 10) \
  X(mpix_allgatherv_init, MPIX_ALLGATHERV_INIT, 11) \
  X(mpix_alltoall_init, MPIX_ALLTOALL_INIT, 10) \
  X(mpix_alltoallv_init, MPIX_ALLTOALLV_INIT, 12) \
  X(mpix_alltoallw_init, MPIX_ALLTOALLW_INIT, 12) \
  X(mpix_gather_init, MPIX_GATHER_INIT, 11) \
  X(mpix_gatherv_init, MPIX_GATHERV_INIT, 12) \
  X(mpix_scatter_init, MPIX_SCATTER_INIT, 11) \
  X(mpix_scatterv_init, MPIX_SCATTERV_INIT, 12) \
  X(mpix_reduce_scatter_init, MPIX_REDUCE_SCATTER_INIT, 9) \
  X(mpix_reduce_scatter_block_init, MPIX_REDUCE_SCATTER_BLOCK_INIT, 9) \
  X(mpix_scan_init, MPIX_SCAN_INIT, 9) \
  X(mpix_exscan_init, MPIX_EXSCAN_INIT, 9) \
  X(mpix_neighbor_allgather_init, MPIX_NEIGHBOR_ALLGATHER_INIT, 10) \
  X(mpix_neighbor_allgatherv_init, MPIX_NEIGHBOR_ALLGATHERV_INIT, 11) \
  X(mpix_neighbor_alltoall_init, MPIX_NEIGHBOR_ALLTOALL_INIT, 10) \
  X(mpix_neighbor_alltoallv_init, MPIX_NEIGHBOR_ALLTOALLV_INIT, 12) \
  X(mpix_neighbor_alltoallw_init, MPIX_NEIGHBOR_ALLTOALLW_INIT, 12)

// MPICH 4's Fortran MPI-4 calls without a buffer. Its mpif.h and `use mpi`
// bindings call the C functions (MPI_Pready), so their entries stay null;
// its mpi_f08 ones (mpi_pready_f08_) call PMPI_* directly and are filled by
// mpi_fortran_f08_mpich.cc. Open MPI 4.1 has none of them.
#define MERIDIAN_MPI_FORTRAN_MPI4(X) \
  X(mpi_barrier_init, MPI_BARRIER_INIT, 4) \
  X(mpi_pready, MPI_PREADY, 3) \
  X(mpi_pready_range, MPI_PREADY_RANGE, 4) \
  X(mpi_pready_list, MPI_PREADY_LIST, 4)

#define MERIDIAN_MPI_FORTRAN_FUNCTIONS(X) \
  MERIDIAN_MPI_FORTRAN_COMMON(X) \
  MERIDIAN_MPI_FORTRAN_MPIX(X) \
  MERIDIAN_MPI_FORTRAN_MPI4(X)

// The five exported names of one Fortran function, as F(name, lower, UPPER,
// count): mpif.h and `use mpi` (gfortran's mpi_send_, other compilers'
// mpi_send, mpi_send__, MPI_SEND) and `use mpi_f08` (Open MPI's
// mpi_send_f08_). Open MPI names its extension's the same way
// (mpix_bcast_init_, MPIX_BCAST_INIT, mpix_bcast_init_f08_...).
#define MERIDIAN_MPI_FORTRAN_NAMES(F, lower, UPPER, count) \
  F(lower, lower, UPPER, count) \
  F(lower##_, lower, UPPER, count) \
  F(lower##__, lower, UPPER, count) \
  F(UPPER, lower, UPPER, count) \
  F(lower##_f08_, lower, UPPER, count)
// clang-format on

namespace meridian {
namespace mpi {

// The table's index of each name: kSym_MPI_Send, kSym_mpi_send_...
enum MpiSymbol : int {
#define MERIDIAN_C_INDEX(name, count) kSym_##name,
#define MERIDIAN_F_INDEX(name, lower, UPPER, count) kSym_##name,
#define MERIDIAN_F_NAMES(lower, UPPER, count) \
  MERIDIAN_MPI_FORTRAN_NAMES(MERIDIAN_F_INDEX, lower, UPPER, count)
  MERIDIAN_MPI_C_FUNCTIONS(MERIDIAN_C_INDEX)
      MERIDIAN_MPI_FORTRAN_FUNCTIONS(MERIDIAN_F_NAMES) kMpiSymbolCount
#undef MERIDIAN_F_NAMES
#undef MERIDIAN_F_INDEX
#undef MERIDIAN_C_INDEX
};

// Every name and count of the list, in order: "MPI_Init/2;...". Its hash
// identifies the list, so that a family library built from another
// version of it is refused rather than called with the wrong arguments.
#define MERIDIAN_C_TEXT(name, count) #name "/" #count ";"
#define MERIDIAN_F_TEXT(lower, UPPER, count) #lower "/" #count ";"
inline constexpr char kMpiSymbolList[] =
    MERIDIAN_MPI_C_FUNCTIONS(MERIDIAN_C_TEXT)
        MERIDIAN_MPI_FORTRAN_FUNCTIONS(MERIDIAN_F_TEXT);
#undef MERIDIAN_F_TEXT
#undef MERIDIAN_C_TEXT

constexpr uint64_t HashOfList(const char* text) {
  uint64_t h = 14695981039346656037ULL;  // FNV-1a
  for (; *text != '\0'; ++text) {
    h = (h ^ static_cast<unsigned char>(*text)) * 1099511628211ULL;
  }
  return h;
}
inline constexpr uint64_t kMpiSymbolListHash = HashOfList(kMpiSymbolList);

// What a family library exports, through one function (kFamilyEntryPoint).
// entries[i] is the function for MpiSymbol i, or null where the family has
// none (MPICH's Fortran bindings call the C functions, so its library wraps
// only those and the mpi_f08 calls that call PMPI_* instead): the dispatcher
// then calls the MPI library's own symbol.
struct MpiFamilyTable {
  uint64_t list_hash;  // kMpiSymbolListHash of the library's build
  uint32_t count;      // kMpiSymbolCount
  const char* family;  // "openmpi", "mpich"
  void* const* entries;
};

// extern "C" const MpiFamilyTable* meridian_mpi_family_v1(void);
inline constexpr char kFamilyEntryPoint[] = "meridian_mpi_family_v1";

// For the family libraries: a function's parameter count and whether the
// stubs can pass its arguments (each an integer or a pointer of at most 8
// bytes).
template <typename F>
struct ForwardedSignature;
template <typename R, typename... Args>
struct ForwardedSignature<R (*)(Args...)> {
  using Result = R;
  static constexpr int kCount = sizeof...(Args);
  static constexpr bool kForwardable =
      (((std::is_integral_v<Args> || std::is_pointer_v<Args>)&&sizeof(Args) <=
        sizeof(intptr_t)) &&
       ...);
};

// MPI_Pcontrol(int level, ...): only its first argument is read, and none
// is floating point, so it is forwarded like a function of its named ones.
template <typename R, typename... Args>
struct ForwardedSignature<R (*)(Args..., ...)>
    : ForwardedSignature<R (*)(Args...)> {};

// entries[kSym_NAME] = NAME, once NAME is checked against the list: `count`
// parameters that the stubs can pass, returning `result_type` (int in C, void
// in Fortran) as its stub does.
#define MERIDIAN_MPI_FAMILY_ENTRY(entries, name, count, result_type)          \
  do {                                                                        \
    using Signature = ::meridian::mpi::ForwardedSignature<decltype(&name)>;   \
    static_assert(Signature::kCount == count,                                 \
                  #name ": parameter count differs from mpi_family_abi.h");   \
    static_assert(Signature::kForwardable,                                    \
                  #name ": a parameter is not an integer or a pointer");      \
    static_assert(std::is_same_v<Signature::Result, result_type>,             \
                  #name ": returns another type than its stub");              \
    (entries)[::meridian::mpi::kSym_##name] = reinterpret_cast<void*>(&name); \
  } while (0)

}  // namespace mpi
}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_FAMILY_ABI_H_
