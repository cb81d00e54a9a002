// LaunchIdentity: which job, rank and local rank a process is, as its
// launcher's environment tells it. Shared by the probe and `meridian run`.
//
// Rank: MERIDIAN_RANK, else Open MPI (OMPI_COMM_WORLD_RANK), MPICH/PMI
// (PMI_RANK, PMIX_RANK), Slurm (SLURM_PROCID), torchrun (RANK); local rank
// likewise (MERIDIAN_LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
// SLURM_LOCALID, LOCAL_RANK). -1 when none is set.
// Job: MERIDIAN_JOB, else the launcher's job id ("ompi-<jobid>" from
// OMPI_MCA_ess_base_jobid, "slurm-<job>.<step>", "torchrun-<run id>"), else
// empty (the caller chooses one).
#ifndef MERIDIAN_AGENT_PROBE_LAUNCH_ENV_H_
#define MERIDIAN_AGENT_PROBE_LAUNCH_ENV_H_

#include <string>

namespace meridian {

struct LaunchIdentity {
  std::string job;
  int rank = -1;
  int local_rank = -1;
};

// `getenv_fn` is getenv in production; tests pass their own.
LaunchIdentity IdentityFromEnvironment(const char* (*getenv_fn)(const char*));
LaunchIdentity IdentityFromEnvironment();

}  // namespace meridian

#endif  // MERIDIAN_AGENT_PROBE_LAUNCH_ENV_H_
