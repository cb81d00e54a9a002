#include "abi/launch_env.h"

#include <cstdlib>
#include <cstring>

namespace meridian {
namespace {

using Getenv = const char* (*)(const char*);

// One row of the table in launch_env.h; null: the launcher sets none.
struct RankVariables {
  const char* launcher;
  const char* rank;
  const char* local_rank;
  const char* world_size;
  // The rank counts only with the world size: torchrun's RANK (the
  // torch.distributed env:// contract) is a name anybody may use alone.
  bool needs_world_size = false;
};

constexpr RankVariables kRankVariables[] = {
    {"meridian", "MERIDIAN_RANK", "MERIDIAN_LOCAL_RANK", "MERIDIAN_WORLD_SIZE"},
    {"torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE", true},
    {"open-mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_SIZE"},
    {"hydra", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},
    {"pmix", "PMIX_RANK", nullptr, nullptr},
    {"flux", "FLUX_TASK_RANK", "FLUX_TASK_LOCAL_ID", "FLUX_JOB_SIZE"},
    {"lsf", "JSM_NAMESPACE_RANK", "JSM_NAMESPACE_LOCAL_RANK",
     "JSM_NAMESPACE_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
};

// $name as an integer in [min, 2^30), else -1.
int IntVariable(Getenv getenv_fn, const char* name, long min) {
  if (name == nullptr) return -1;
  const char* value = getenv_fn(name);
  if (value == nullptr || *value < '0' || *value > '9') return -1;
  char* end;
  const long n = strtol(value, &end, 10);
  if (*end != '\0' || n < min || n >= (1L << 30)) return -1;
  return static_cast<int>(n);
}

std::string Text(Getenv getenv_fn, const char* name) {
  const char* value = getenv_fn(name);
  return value == nullptr ? "" : value;
}

bool Applies(Getenv getenv_fn, const RankVariables& row) {
  return IntVariable(getenv_fn, row.rank, 0) >= 0 &&
         (!row.needs_world_size ||
          IntVariable(getenv_fn, row.world_size, 1) > 0);
}

void ResolveRank(Getenv getenv_fn, LaunchIdentity* id) {
  for (const RankVariables& row : kRankVariables) {
    if (!Applies(getenv_fn, row)) continue;
    id->rank_source = row.launcher;
    id->rank = IntVariable(getenv_fn, row.rank, 0);
    id->local_rank = IntVariable(getenv_fn, row.local_rank, 0);
    const int size = IntVariable(getenv_fn, row.world_size, 1);
    id->world_size = size > id->rank ? size : 0;
    return;
  }
}

void ResolveJob(Getenv getenv_fn, LaunchIdentity* id) {
  struct {
    const char* launcher;
    const char* variable;
    const char* prefix;
    const char* suffix;      // its value appended after '.', if set
    const char* not_a_name;  // a default every job has: as if unset
  } constexpr kJobVariables[] = {
      {"meridian", "MERIDIAN_JOB", "", nullptr, nullptr},
      {"torchrun", "TORCHELASTIC_RUN_ID", "torchrun-", nullptr, "none"},
      {"slurm", "SLURM_JOB_ID", "slurm-", "SLURM_STEP_ID", nullptr},
      {"flux", "FLUX_JOB_ID", "flux-", nullptr, nullptr},
      {"lsf", "LSB_JOBID", "lsf-", "LSB_JOBINDEX", nullptr},
      {"pbs", "PBS_JOBID", "pbs-", nullptr, nullptr},
      {"open-mpi", "OMPI_MCA_ess_base_jobid", "ompi-", nullptr, nullptr},
      {"pmix", "PMIX_NAMESPACE", "pmix-", nullptr, nullptr},
  };
  for (const auto& row : kJobVariables) {
    const std::string value = Text(getenv_fn, row.variable);
    if (value.empty() || (row.not_a_name && value == row.not_a_name)) continue;
    id->job = row.prefix + value;
    if (row.suffix != nullptr) {
      if (std::string suffix = Text(getenv_fn, row.suffix); !suffix.empty()) {
        id->job += "." + suffix;
      }
    }
    id->job_source = row.launcher;
    return;
  }
}

const char* SystemGetenv(const char* name) { return getenv(name); }

}  // namespace

LaunchIdentity IdentityFromEnvironment(Getenv getenv_fn) {
  LaunchIdentity id;
  ResolveRank(getenv_fn, &id);
  ResolveJob(getenv_fn, &id);
  return id;
}

LaunchIdentity IdentityFromEnvironment() {
  return IdentityFromEnvironment(SystemGetenv);
}

bool InsideLauncher(Getenv getenv_fn) {
  const LaunchIdentity id = IdentityFromEnvironment(getenv_fn);
  if (*id.rank_source == '\0') return false;
  // sbatch's batch script has SLURM_PROCID=0 too; a task of srun has a step.
  if (strcmp(id.rank_source, "slurm") == 0) {
    return !Text(getenv_fn, "SLURM_STEP_ID").empty();
  }
  return true;
}

}  // namespace meridian
