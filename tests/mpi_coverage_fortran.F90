! The probe's wider coverage called from Fortran, built twice like
! mpi_known_fortran.F90: with mpif.h and, with -DF08, with the mpi_f08
! module. MpiCaptureTest.FortranNewCallsAreRecordedLikeC runs it on 4 ranks
! of a ring (rank r's right is r+1, its left r-1, its partner r xor 1) and
! checks each rank's records (MpichFortranNewCallsAreRecordedLikeC: built
! with MPICH's mpif.h); every result is checked here too, so a wrong
! conversion of a handle, sentinel, LOGICAL or INTEGER(KIND=...) argument
! fails the job (MPI_Abort, exit 3).
!
!   mpi_coverage_mpifh FILE
!   mpi_coverage_f08 FILE       FILE: a path for the MPI-IO calls (created)
!
! Per rank, in order:
!   Comm_rank x5, Comm_size x3
!   Send_init (16 integers right, tag 3), Recv_init (from the left),
!     Startall + Waitall twice, Start x2 + Waitall, Request_free x2
!   even ranks: Send x3 (5 doubles to the partner, tags 11, 12, 13);
!   odd ranks: Probe (MPI_ANY_SOURCE, tag 11), Iprobe, Recv; Mprobe (tag
!     12), Mrecv; Improbe (until found, tag 13), Imrecv, Wait
!   Sendrecv (3 integers right, from the left)
!   Alltoallw (i+1 integers to rank i), Ialltoallw + Wait: world seq 0, 1
!   Cart_create (a periodic ring), Neighbor_allgather (2 integers),
!     Neighbor_alltoallv (1 integer left, 2 right), Ineighbor_allgather +
!     Wait: the ring's seq 0 to 2
!   Dist_graph_create_adjacent (the same ring, MPI_UNWEIGHTED: checked
!     with Dist_graph_neighbors_count, which is not recorded),
!     Neighbor_allgather, Neighbor_alltoallw (as the alltoallv): seq 0, 1
!   Win_allocate (8 integers; world seq 2), Win_fence, Put (1 integer
!     right), Get (2 integers from the left), Win_fence, Win_lock (right),
!     Rput (1 integer), Wait, Rget_accumulate (1 integer, MPI_NO_OP), Wait,
!     Win_unlock, Win_fence, Win_free: the window's seq 0 to 3
!   File_open (world seq 3), File_write_at (16 integers),
!     File_read_at (8), File_write_at_all (4), File_iread_at_all (16) +
!     Wait, File_close: the file's seq 0 to 2
!   Barrier (world seq 3), Pcontrol(0), Barrier (seq 4, not recorded),
!   Pcontrol(1), Barrier (seq 5)
program mpi_coverage_fortran
  use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer, c_null_ptr
#ifdef F08
  use mpi_f08
  implicit none
  type(MPI_Request) :: requests(2), request
  type(MPI_Status) :: status
  type(MPI_Message) :: message
  type(MPI_Comm) :: ring, graph
  type(MPI_Win) :: win
  type(MPI_File) :: file
  type(MPI_Datatype) :: types(4)
  type(c_ptr) :: baseptr
#define SOURCE(s) s%MPI_SOURCE
#else
  implicit none
  include 'mpif.h'
  integer :: requests(2), request
  integer :: status(MPI_STATUS_SIZE)
  integer :: message, ring, graph, win, file
  integer :: types(4)
  integer(kind=MPI_ADDRESS_KIND) :: baseptr
#define SOURCE(s) s(MPI_SOURCE)
#endif
  integer(kind=MPI_ADDRESS_KIND) :: bytes, disp, wdispls(2), wrdispls(2)
  integer(kind=MPI_OFFSET_KIND) :: block
  integer, pointer :: base(:)
  integer :: rank, nranks, right, left, partner, ierr, i, j
  integer :: counts(4), displs(4), rcounts(4), rdispls(4), dims(1)
  integer :: vcounts(2), vdispls(2), vrcounts(2), vrdispls(2), neighbors(2)
  logical :: periods(1), flag
  ! Buffers MPI reads or writes after the call that names them returns
  ! (persistent, non-blocking and one-sided calls): without ASYNCHRONOUS,
  ! gfortran may assume the calls that complete them leave them unchanged.
  integer, asynchronous :: sent(16), received(16), out(10), in(16), two(2)
  integer, asynchronous :: four(4), three(3), values(3), got(2), fetched(1)
  double precision, asynchronous :: doubles(5)
  character(len=4096) :: path

  call MPI_Init(ierr)
  do i = 1, 5
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  end do
  do i = 1, 3
    call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  end do
  call check(nranks == 4, '4 ranks')
  right = mod(rank + 1, 4)
  left = mod(rank + 3, 4)
  partner = ieor(rank, 1)

  ! Persistent requests.
  sent = [(100 * rank + i, i = 1, 16)]
  call MPI_Send_init(sent, 16, MPI_INTEGER, right, 3, MPI_COMM_WORLD, &
                     requests(1), ierr)
  call MPI_Recv_init(received, 16, MPI_INTEGER, left, 3, MPI_COMM_WORLD, &
                     requests(2), ierr)
  do j = 1, 2
    call MPI_Startall(2, requests, ierr)
    call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
  end do
  received = 0
  call MPI_Start(requests(1), ierr)
  call MPI_Start(requests(2), ierr)
  call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
  call check(received(6) == 100 * left + 6, 'persistent receive')
  call check(requests(1) /= MPI_REQUEST_NULL, 'persistent request kept')
  call MPI_Request_free(requests(1), ierr)
  call MPI_Request_free(requests(2), ierr)
  call check(requests(1) == MPI_REQUEST_NULL, 'request_free')

  ! Probes and matched receives.
  doubles = [1d0, 2d0, 3d0, 4d0, 5d0]
  if (mod(rank, 2) == 0) then
    do j = 11, 13
      call MPI_Send(doubles, 5, MPI_DOUBLE_PRECISION, partner, j, &
                    MPI_COMM_WORLD, ierr)
    end do
  else
    call MPI_Probe(MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, status, ierr)
    call check(SOURCE(status) == partner, 'probe source')
    flag = .false.
    call MPI_Iprobe(partner, 11, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
    call check(flag, 'iprobe of a probed message')
    call MPI_Recv(doubles, 5, MPI_DOUBLE_PRECISION, partner, 11, &
                  MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Mprobe(MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, message, &
                    MPI_STATUS_IGNORE, ierr)
    doubles = 0
    call MPI_Mrecv(doubles, 5, MPI_DOUBLE_PRECISION, message, status, ierr)
    call check(SOURCE(status) == partner .and. doubles(5) == 5d0, 'mrecv')
    call check(message == MPI_MESSAGE_NULL, 'mrecv message')
    flag = .false.
    do while (.not. flag)
      call MPI_Improbe(MPI_ANY_SOURCE, 13, MPI_COMM_WORLD, flag, message, &
                       MPI_STATUS_IGNORE, ierr)
    end do
    doubles = 0
    call MPI_Imrecv(doubles, 5, MPI_DOUBLE_PRECISION, message, request, ierr)
    call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
    call check(doubles(3) == 3d0, 'imrecv')
  end if

  three = rank
  values = -1
  call MPI_Sendrecv(three, 3, MPI_INTEGER, right, 5, values, 3, MPI_INTEGER, &
                    left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(all(values == left), 'sendrecv')

  ! Alltoallw: i+1 integers to rank i (displacements in bytes), so rank+1
  ! from each rank.
  do i = 0, 3
    counts(i + 1) = i + 1
    displs(i + 1) = 4 * i * (i + 1) / 2
    rcounts(i + 1) = rank + 1
    rdispls(i + 1) = 4 * i * (rank + 1)
    types(i + 1) = MPI_INTEGER
  end do
  out = rank
  in = -1
  call MPI_Alltoallw(out, counts, displs, types, in, rcounts, rdispls, types, &
                     MPI_COMM_WORLD, ierr)
  call check(in(3 * (rank + 1) + 1) == 3, 'alltoallw')
  in = -1
  call MPI_Ialltoallw(out, counts, displs, types, in, rcounts, rdispls, &
                      types, MPI_COMM_WORLD, request, ierr)
  call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  call check(in(1) == 0 .and. in(4 * (rank + 1)) == 3, 'ialltoallw')

  ! Neighbor collectives on a periodic ring (neighbors left, then right).
  dims = 4
  periods = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., ring, ierr)
  two = rank
  four = -1
  call MPI_Neighbor_allgather(two, 2, MPI_INTEGER, four, 2, MPI_INTEGER, &
                              ring, ierr)
  call check(four(1) == left .and. four(3) == right, 'neighbor_allgather')
  vcounts = [1, 2]
  vdispls = [0, 1]
  vrcounts = [2, 1]
  vrdispls = [0, 2]
  four = -1
  call MPI_Neighbor_alltoallv(three, vcounts, vdispls, MPI_INTEGER, four, &
                              vrcounts, vrdispls, MPI_INTEGER, ring, ierr)
  call check(four(1) == left .and. four(2) == left .and. four(3) == right, &
             'neighbor_alltoallv')
  four = -1
  call MPI_Ineighbor_allgather(two, 2, MPI_INTEGER, four, 2, MPI_INTEGER, &
                               ring, request, ierr)
  call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  call check(four(2) == left .and. four(4) == right, 'ineighbor_allgather')
  call MPI_Comm_free(ring, ierr)

  ! The same ring as a distributed graph, unweighted.
  neighbors = [left, right]
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, neighbors, &
                                      MPI_UNWEIGHTED, 2, neighbors, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, &
                                      .false., graph, ierr)
  call MPI_Dist_graph_neighbors_count(graph, i, j, flag, ierr)
  call check(i == 2 .and. j == 2 .and. .not. flag, 'unweighted graph')
  four = -1
  call MPI_Neighbor_allgather(two, 2, MPI_INTEGER, four, 2, MPI_INTEGER, &
                              graph, ierr)
  call check(four(1) == left .and. four(3) == right, 'graph allgather')
  wdispls = [0, 4]
  wrdispls = [0, 8]
  four = -1
  call MPI_Neighbor_alltoallw(three, vcounts, wdispls, types, four, vrcounts, &
                              wrdispls, types, graph, ierr)
  call check(four(1) == left .and. four(2) == left .and. four(3) == right, &
             'neighbor_alltoallw')
  call MPI_Comm_free(graph, ierr)

  ! One-sided: a window of 8 integers per rank.
  bytes = 32
  call MPI_Win_allocate(bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, &
                        win, ierr)
#ifdef F08
  call c_f_pointer(baseptr, base, [8])
#else
  call c_f_pointer(transfer(baseptr, c_null_ptr), base, [8])
#endif
  base = rank
  values = rank
  got = -1
  call MPI_Win_fence(0, win, ierr)
  disp = 0
  call MPI_Put(values, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, ierr)
  disp = 1
  call MPI_Get(got, 2, MPI_INTEGER, left, disp, 2, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call check(base(1) == left .and. all(got == left), 'fence put and get')
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win, ierr)
  disp = 4
  call MPI_Rput(values, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, &
                request, ierr)
  call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  disp = 7
  call MPI_Rget_accumulate(values, 1, MPI_INTEGER, fetched, 1, MPI_INTEGER, &
                           right, disp, 1, MPI_INTEGER, MPI_NO_OP, win, &
                           request, ierr)
  call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  call MPI_Win_unlock(right, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call check(base(5) == left, 'lock and rput')
  call check(fetched(1) == right, 'rget_accumulate')
  call MPI_Win_free(win, ierr)
  call check(win == MPI_WIN_NULL, 'win_free')

  ! MPI-IO: one shared file, each rank in its own 256-byte block.
  call get_command_argument(1, path)
  call check(len_trim(path) > 0, 'usage: mpi_coverage_fortran FILE')
  call MPI_File_open(MPI_COMM_WORLD, trim(path), &
                     MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, file, ierr)
  call check(ierr == MPI_SUCCESS, 'file_open')
  block = 256 * rank
  call MPI_File_write_at(file, block, sent, 16, MPI_INTEGER, &
                         MPI_STATUS_IGNORE, ierr)
  received = -1
  call MPI_File_read_at(file, block, received, 8, MPI_INTEGER, &
                        MPI_STATUS_IGNORE, ierr)
  call check(received(8) == sent(8) .and. received(9) == -1, 'file_read_at')
  call MPI_File_write_at_all(file, block + 64, sent, 4, MPI_INTEGER, &
                             MPI_STATUS_IGNORE, ierr)
  received = -1
  call MPI_File_iread_at_all(file, block, received, 16, MPI_INTEGER, &
                             request, ierr)
  call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  call check(all(received == sent), 'file_iread_at_all')
  call MPI_File_close(file, ierr)
  call check(file == MPI_FILE_NULL, 'file_close')

  ! Recording paused around the second of three barriers.
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Pcontrol(0)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Pcontrol(1)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      print *, 'mpi_coverage_fortran: rank ', rank, ': wrong result: ', what
      call MPI_Abort(MPI_COMM_WORLD, 3, e)
    end if
  end subroutine check

end program mpi_coverage_fortran
