#include "capture/probe/launch_env.h"

#include <cstdlib>

namespace meridian {
namespace {

// The first of `names` that is set to a non-negative integer, else -1.
int FirstInt(const char* (*getenv_fn)(const char*),
             std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* value = getenv_fn(name);
    if (value == nullptr || *value == '\0') continue;
    char* end;
    long n = strtol(value, &end, 10);
    if (*end == '\0' && n >= 0 && n < (1L << 30)) return static_cast<int>(n);
  }
  return -1;
}

std::string Get(const char* (*getenv_fn)(const char*), const char* name) {
  const char* value = getenv_fn(name);
  return value == nullptr ? "" : value;
}

const char* SystemGetenv(const char* name) { return getenv(name); }

}  // namespace

LaunchIdentity IdentityFromEnvironment(const char* (*getenv_fn)(const char*)) {
  LaunchIdentity id;
  id.rank =
      FirstInt(getenv_fn, {"MERIDIAN_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                           "PMIX_RANK", "SLURM_PROCID", "RANK"});
  id.local_rank =
      FirstInt(getenv_fn, {"MERIDIAN_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                           "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK"});
  id.job = Get(getenv_fn, "MERIDIAN_JOB");
  if (!id.job.empty()) return id;
  if (std::string ompi = Get(getenv_fn, "OMPI_MCA_ess_base_jobid");
      !ompi.empty()) {
    id.job = "ompi-" + ompi;
  } else if (std::string slurm = Get(getenv_fn, "SLURM_JOB_ID");
             !slurm.empty()) {
    std::string step = Get(getenv_fn, "SLURM_STEP_ID");
    id.job = "slurm-" + slurm + (step.empty() ? "" : "." + step);
  } else if (std::string run = Get(getenv_fn, "TORCHELASTIC_RUN_ID");
             !run.empty()) {
    id.job = "torchrun-" + run;
  }
  return id;
}

LaunchIdentity IdentityFromEnvironment() {
  return IdentityFromEnvironment(SystemGetenv);
}

}  // namespace meridian
