! A known sequence of MPI calls from Fortran, built twice: with mpif.h
! (the mpi_send_ symbols) and, with -DF08, with the mpi_f08 module (the
! mpi_send_f08_ symbols). mpi_capture_fortran_test runs it on 4 ranks and checks
! each rank's records. Every result is checked here too, so a wrong
! conversion of a handle or sentinel fails the job (MPI_Abort, exit 3).
!
! Per rank: Init, Isend (20 B to the right), Recv (MPI_ANY_SOURCE,
! STATUS_IGNORE: 20 B from the left), Wait, Allreduce (IN_PLACE, 16 B,
! seq 0), Bcast (12 B, root 1, seq 1), Comm_split (even/odd), Iallreduce
! (4 B on the half, seq 0) completed by Waitall, Barrier (the half, seq 1),
! Comm_free (not recorded), Finalize: 11 records.
program mpi_known_fortran
#ifdef F08
  use mpi_f08
  implicit none
  type(MPI_Comm) :: half
  type(MPI_Request) :: request, requests(1)
  type(MPI_Status) :: status
#else
  implicit none
  include 'mpif.h'
  integer :: half
  integer :: request, requests(1)
  integer :: status(MPI_STATUS_SIZE)
#endif
  integer :: rank, nranks, right, left, ierr, i, y
  integer :: sent(5), received(5), b(3)
  double precision :: x(2)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)

  sent = [(100 * rank + i, i = 1, 5)]
  call MPI_Isend(sent, 5, MPI_INTEGER, right, 7, MPI_COMM_WORLD, request, ierr)
  call MPI_Recv(received, 5, MPI_INTEGER, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &
                MPI_STATUS_IGNORE, ierr)
  call MPI_Wait(request, status, ierr)
  call check(all(received == [(100 * left + i, i = 1, 5)]), 'recv')
  call check(request == MPI_REQUEST_NULL, 'wait request')

  x = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, x, 2, MPI_DOUBLE_PRECISION, MPI_SUM, &
                     MPI_COMM_WORLD, ierr)
  call check(all(x == 10d0), 'allreduce')

  b = 0
  if (rank == 1) b = [4, 5, 6]
  call MPI_Bcast(b, 3, MPI_INTEGER, 1, MPI_COMM_WORLD, ierr)
  call check(all(b == [4, 5, 6]), 'bcast')

  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
  y = rank
  call MPI_Iallreduce(MPI_IN_PLACE, y, 1, MPI_INTEGER, MPI_SUM, half, &
                      requests(1), ierr)
  call MPI_Waitall(1, requests, MPI_STATUSES_IGNORE, ierr)
  call check(y == 2 * mod(rank, 2) + 2, 'iallreduce')
  call MPI_Barrier(half, ierr)
  call MPI_Comm_free(half, ierr)
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      print *, 'mpi_known_fortran: wrong result: ', what
      call MPI_Abort(MPI_COMM_WORLD, 3, e)
    end if
  end subroutine check

end program mpi_known_fortran
