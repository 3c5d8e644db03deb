! A Fortran test program for libparsched_mpi: rank 0 computes for about the
! given milliseconds (first argument), then sends rank 1 one integer; rank 1
! waits in MPI_RECV and prints the wall time it waited.
program wait_probe_f
  use mpi
  implicit none
  integer :: ierr, rank, v, status(MPI_STATUS_SIZE)
  integer(8) :: t0, t1, rate
  double precision :: delay, x
  character(len=32) :: arg
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  delay = 1.0d0
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read(arg, *) delay
    delay = delay * 1.0d-3
  end if
  v = 42
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call system_clock(t0, rate)
    x = 0
    do
      x = x + 1.0d0
      call system_clock(t1)
      if (dble(t1 - t0) / dble(rate) >= delay) exit
    end do
    call MPI_SEND(v, 1, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    call system_clock(t0, rate)
    call MPI_RECV(v, 1, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, status, ierr)
    call system_clock(t1)
    print '(a,f8.4,a,i0)', 'waited wall ', dble(t1 - t0) / dble(rate), ' got ', v
  end if
  call MPI_FINALIZE(ierr)
end program
