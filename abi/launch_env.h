// LaunchIdentity: which job, rank, local rank and world size a process is,
// as its launchers' environment tells it. Shared by the probe and
// `meridian run`; the table is documented in docs/launchers.md.
//
// Launchers nest (srun starts torchrun, which starts the workers; sbatch's
// mpirun starts its daemons with srun, which start the ranks), and each
// sets its own variables, which the processes below inherit. Only the
// innermost launcher's say which process this is: under `srun torchrun`
// SLURM_PROCID is the node's index for every worker of the node. So the
// rank, local rank and world size all come from ONE launcher, the first of
// these whose rank variable is set:
//
//   launcher     rank                  local rank                  world size
//   meridian     MERIDIAN_RANK         MERIDIAN_LOCAL_RANK MERIDIAN_WORLD_SIZE
//   torchrun     RANK (with WORLD_SIZE) LOCAL_RANK                 WORLD_SIZE
//   open-mpi     OMPI_COMM_WORLD_RANK  OMPI_COMM_WORLD_LOCAL_RANK
//   OMPI_COMM_WORLD_SIZE hydra        PMI_RANK              MPI_LOCALRANKID
//   PMI_SIZE pmix         PMIX_RANK             -                           -
//   flux         FLUX_TASK_RANK        FLUX_TASK_LOCAL_ID FLUX_JOB_SIZE lsf
//   JSM_NAMESPACE_RANK    JSM_NAMESPACE_LOCAL_RANK    JSM_NAMESPACE_SIZE slurm
//   SLURM_PROCID          SLURM_LOCALID               SLURM_NTASKS
//
// torchrun (and every launcher of torch.distributed's env:// contract) is
// the innermost wherever it runs. The MPI launchers (Open MPI's mpirun,
// MPICH/Intel MPI's Hydra, PMIx) come before Slurm, Flux and LSF because an
// mpirun inside an allocation starts its daemons through the resource
// manager: its ranks inherit the daemon's SLURM_PROCID. When none is set, the
// probe takes MPI_COMM_WORLD's rank and size at MPI_Init.
//
// The job is named by the launcher that spans every node, outermost first
// so that all ranks agree: MERIDIAN_JOB, else torchrun's rendezvous id
// (TORCHELASTIC_RUN_ID, unless torchrun's default "none"), Slurm
// (SLURM_JOB_ID[.SLURM_STEP_ID]), Flux (FLUX_JOB_ID), LSF
// (LSB_JOBID[.LSB_JOBINDEX]), PBS (PBS_JOBID), Open MPI
// (OMPI_MCA_ess_base_jobid), PMIx (PMIX_NAMESPACE); else empty (the caller
// chooses one). MPICH's Hydra puts no job id in its ranks' environment
// (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, PMI_FD, as MPICH 4.0 sets them).
// `meridian run` exports MERIDIAN_JOB, so its children never reach the rest.
#ifndef MERIDIAN_ABI_LAUNCH_ENV_H_
#define MERIDIAN_ABI_LAUNCH_ENV_H_

#include <string>

namespace meridian {

struct LaunchIdentity {
  std::string job;
  int rank = -1;        // -1: unknown
  int local_rank = -1;  // -1: unknown
  int world_size = 0;   // 0: unknown
  // The launcher the rank came from ("torchrun", "slurm", ... as in the
  // table above), "" if none.
  const char* rank_source = "";
  // The launcher the job id came from ("slurm", ...), "" if none.
  const char* job_source = "";
};

// `getenv_fn` is getenv in production; tests pass their own. Values that
// are not decimal integers in range (ranks below 2^30, rank < world size
// when both are set) are ignored, as if unset.
LaunchIdentity IdentityFromEnvironment(const char* (*getenv_fn)(const char*));
LaunchIdentity IdentityFromEnvironment();

// Whether this process was started by a per-process launcher (the table
// above, Slurm only inside a job step): `meridian run` inside `mpirun -np 4`
// is one of 4 and leaves job-wide checks to the one outside.
bool InsideLauncher(const char* (*getenv_fn)(const char*));

}  // namespace meridian

#endif  // MERIDIAN_ABI_LAUNCH_ENV_H_
