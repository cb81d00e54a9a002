// MPI capture through the profiling interface: each MPI_X of the parts
// listed below records a ProbeRecord around PMPI_X. Built once per MPI
// family, against its mpi.h (mpi_family.cc: libmeridian_mpi_openmpi.so,
// libmeridian_mpi_mpich.so), and reached through libmeridian_probe.so's
// dispatcher (mpi_dispatch.h). Calls into MPI go to PMPI_* only: an MPI_*
// call would go back through the dispatcher.
//
// What a record holds (docs/architecture.md has the full table):
//   bytes      count x type size of the call's primary buffer, summed over
//              the counts of v-variants; rooted collectives count the root's
//              buffer at the root (Gather recv, Scatter send).
//   peer       destination, source (as received, for MPI_ANY_SOURCE) or
//              root, as a rank of MPI_COMM_WORLD.
//   comm       an id equal on every member: MPI_COMM_WORLD is 1,
//              MPI_COMM_SELF 2, and a communicator made by dup, split,
//              split_type, create or cart_create is Mix(parent id, how many
//              communicators the parent made before, world rank of the new
//              rank 0). Every member counts the same because those calls are
//              collective over the parent.
//   seq        for collectives, the instance number on that communicator
//              (0, 1, 2...), counted even outside the tracing window so that
//              it matches across ranks.
//   callsite   with MERIDIAN_CALLSITES=1, where the program made the call
//              (callsite.h); a persistent request's start names MPI_Start's.
//   args       a neighbor collective's in-neighbors, "sources=A,B,C" (world
//              ranks; NeighborSourcesArg), an MPI_Win_lock's lock type,
//              "lock_type=exclusive" or "lock_type=shared" (LockArgs), and
//              an MPI_Win_post's or MPI_Win_start's group, "group=A,B,C"
//              (world ranks; EpochGroupArg): what the dependency graph
//              needs (query/ops/mpi_args.h).
// Non-blocking calls are recorded from issue to completion (the Wait or
// Test that completes them); the Wait calls are recorded as well, the Test
// calls (usually polled) are not. MPI may return one completed request for
// many calls (Open MPI's small sends, MPICH's built-in completed requests):
// such requests are kept per thread in issue order, and each completion of
// the shared handle on that thread ends the oldest (SharedRequests).
//
// The wrappers and their state are one translation unit in parts, in this
// order (each includes the one before it):
//   mpi_wrap_comms.h           operations, communicators, record builders
//   mpi_wrap_requests.h        requests from issue to completion, helpers
//   mpi_wrap_objects.h         windows, files, topologies, persistent
//                              requests, matched probes
//   mpi_wrap_point_to_point.h  Init, Finalize, point-to-point, completion
//   mpi_wrap_collectives.h     collectives, communicators, topologies
//   mpi_wrap_persistent.h      persistent requests, probes, neighbor
//                              collectives
//   mpi_wrap_rma_io.h          one-sided communication, MPI-IO
//   mpi_wrap_mpi4.h            MPI-4 persistent collectives, partitioned
#include "capture/probe/mpi_wrap_mpi4.h"
