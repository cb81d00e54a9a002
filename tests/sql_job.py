"""An mpi4py job for tests/sql_test.sh: known MPI_Allreduce calls per rank.

Each of the 4 ranks makes 12 steps; in step s every rank calls
MPI_Allreduce on 8 bytes, and on 4096 bytes in every third step (s % 3 ==
0: 4 of the 12), and rank r sends 64 * (r + 1) bytes to rank (r + 1) % 4
with MPI_Sendrecv. Per rank: 16 MPI_Allreduce calls of 8 * 12 + 4096 * 4 =
16,480 bytes, 12 MPI_Sendrecv.
"""
import sys

import numpy
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
size = comm.Get_size()
small = numpy.ones(1, dtype=numpy.float64)
large = numpy.ones(512, dtype=numpy.float64)
for step in range(12):
    out = numpy.empty_like(small)
    comm.Allreduce(small, out, op=MPI.SUM)
    if step % 3 == 0:
        big = numpy.empty_like(large)
        comm.Allreduce(large, big, op=MPI.SUM)
    send = numpy.zeros(8 * (rank + 1), dtype=numpy.float64)
    recv = numpy.empty(8 * (((rank - 1) % size) + 1), dtype=numpy.float64)
    comm.Sendrecv(send, dest=(rank + 1) % size, recvbuf=recv,
                  source=(rank - 1) % size)
comm.Barrier()
if rank == 0:
    print("sql_job: done", file=sys.stderr)
