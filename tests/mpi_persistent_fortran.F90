! tests/mpi_persistent.cc's persistent collectives from Fortran, through
! Open MPI 4.1's pcollreq extension (MPIX_ALLREDUCE_INIT...), built twice
! like mpi_known_fortran.F90: with mpif.h (the mpix_allreduce_init_
! symbols) and, with -DF08, with the mpi_f08 and mpi_f08_ext modules (the
! mpix_allreduce_init_f08_ symbols). Open MPI's bindings of these call
! PMPIX_* directly, so the records come from the probe's Fortran wrappers.
! MpiCaptureTest.FortranPersistentCollectivesAreRecordedLikeC runs it on 4
! ranks and checks each rank's records as it checks the C program's. Every
! result is checked here too, so a wrong conversion of a handle or of the
! info argument fails the job (MPI_Abort, exit 3).
!
! On MPI_COMM_WORLD, in order (the sequence numbers the test expects):
!   seq 0-2  an Allreduce_init of 8 integers, started 3 times (MPI_Start)
!   seq 3    MPI_Barrier
!   seq 4-5  a Bcast_init of 16 doubles from rank 2, started twice
!            (MPI_Startall)
!   seq 6    the Allreduce again, started while MPI_Pcontrol(0) stops
!            recording: not recorded, but counted
!   seq 7    a Barrier_init, started once
program mpi_persistent_fortran
#ifdef F08
  use mpi_f08
  use mpi_f08_ext
  implicit none
  type(MPI_Request) :: allreduce, bcast(1), barrier
#else
  implicit none
  include 'mpif.h'
  integer :: allreduce, bcast(1), barrier
#endif
  ! MPI reads and writes these when a start runs, after the init call that
  ! names them returned: without ASYNCHRONOUS, gfortran may assume the
  ! calls that complete them leave them unchanged.
  integer, asynchronous :: in(8), out(8)
  double precision, asynchronous :: values(16)
  integer :: rank, nranks, round, i, ierr

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call check(nranks == 4, '4 ranks')

  in = [(rank + i, i = 0, 7)]
  call MPIX_Allreduce_init(in, out, 8, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                           MPI_INFO_NULL, allreduce, ierr)
  call check(ierr == MPI_SUCCESS .and. allreduce /= MPI_REQUEST_NULL, &
             'allreduce_init')
  do round = 1, 3
    call MPI_Start(allreduce, ierr)
    call MPI_Wait(allreduce, MPI_STATUS_IGNORE, ierr)
  end do
  call check(out(2) == nranks * (nranks - 1) / 2 + nranks, 'allreduce')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)

  call MPIX_Bcast_init(values, 16, MPI_DOUBLE_PRECISION, 2, MPI_COMM_WORLD, &
                       MPI_INFO_NULL, bcast(1), ierr)
  call check(ierr == MPI_SUCCESS .and. bcast(1) /= MPI_REQUEST_NULL, &
             'bcast_init')
  do round = 0, 1
    if (rank == 2) then
      values = [(dble(round + i), i = 0, 15)]
    else
      values = -1
    end if
    call MPI_Startall(1, bcast, ierr)
    call MPI_Waitall(1, bcast, MPI_STATUSES_IGNORE, ierr)
    call check(values(4) == round + 3, 'bcast')
  end do

  call MPI_Pcontrol(0)
  call MPI_Start(allreduce, ierr)
  call MPI_Wait(allreduce, MPI_STATUS_IGNORE, ierr)
  call MPI_Pcontrol(1)

  call MPIX_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, barrier, ierr)
  call check(ierr == MPI_SUCCESS .and. barrier /= MPI_REQUEST_NULL, &
             'barrier_init')
  call MPI_Start(barrier, ierr)
  call MPI_Wait(barrier, MPI_STATUS_IGNORE, ierr)

  call MPI_Request_free(allreduce, ierr)
  call MPI_Request_free(bcast(1), ierr)
  call MPI_Request_free(barrier, ierr)
  call check(allreduce == MPI_REQUEST_NULL .and. &
             bcast(1) == MPI_REQUEST_NULL .and. &
             barrier == MPI_REQUEST_NULL, 'request_free')
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      print *, 'mpi_persistent_fortran: rank ', rank, ': wrong result: ', what
      call MPI_Abort(MPI_COMM_WORLD, 3, e)
    end if
  end subroutine check

end program mpi_persistent_fortran
