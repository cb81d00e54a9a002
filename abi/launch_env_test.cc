#include "abi/launch_env.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

// Each test's environment: what a launcher sets in the process it starts
// (Open MPI's as printed by `mpirun -np 2 env` on Open MPI 4.1; the others
// as their documentation names them).
using Environment = std::map<std::string, std::string>;
Environment* env;

const char* FakeGetenv(const char* name) {
  auto it = env->find(name);
  return it == env->end() ? nullptr : it->second.c_str();
}

LaunchIdentity With(Environment vars) {
  env = &vars;
  return IdentityFromEnvironment(FakeGetenv);
}

bool Inside(Environment vars) {
  env = &vars;
  return InsideLauncher(FakeGetenv);
}

void ExpectIdentity(const LaunchIdentity& id, const std::string& job, int rank,
                    int local_rank, int world_size,
                    const std::string& rank_source) {
  EXPECT_EQ(id.job, job);
  EXPECT_EQ(id.rank, rank);
  EXPECT_EQ(id.local_rank, local_rank);
  EXPECT_EQ(id.world_size, world_size);
  EXPECT_EQ(std::string(id.rank_source), rank_source);
}

const Environment kOpenMpiRank1 = {{"OMPI_COMM_WORLD_RANK", "1"},
                                   {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                   {"OMPI_COMM_WORLD_SIZE", "2"},
                                   {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                                   {"OMPI_MCA_ess_base_jobid", "302907393"},
                                   {"PMIX_NAMESPACE", "302907393"},
                                   {"PMIX_RANK", "1"}};

TEST(LaunchEnvTest, OpenMpi) {
  ExpectIdentity(With(kOpenMpiRank1), "ompi-302907393", 1, 1, 2, "open-mpi");
  EXPECT_TRUE(Inside(kOpenMpiRank1));
}

TEST(LaunchEnvTest, MpichHydra) {
  const Environment hydra = {
      {"PMI_RANK", "5"},        {"PMI_SIZE", "8"}, {"MPI_LOCALRANKID", "1"},
      {"MPI_LOCALNRANKS", "4"}, {"PMI_FD", "6"},   {"HYDI_CONTROL_FD", "7"}};
  // As MPICH 4.0's mpiexec sets them: no job id (`meridian run` names it).
  ExpectIdentity(With(hydra), "", 5, 1, 8, "hydra");
  EXPECT_TRUE(Inside(hydra));
}

const Environment kSrunTask = {{"SLURM_JOB_ID", "991"}, {"SLURM_STEP_ID", "0"},
                               {"SLURM_PROCID", "12"},  {"SLURM_LOCALID", "4"},
                               {"SLURM_NTASKS", "16"},  {"SLURM_NODEID", "1"}};

TEST(LaunchEnvTest, SlurmSrun) {
  ExpectIdentity(With(kSrunTask), "slurm-991.0", 12, 4, 16, "slurm");
  EXPECT_TRUE(Inside(kSrunTask));
}

TEST(LaunchEnvTest, SbatchScriptIsNotInsideALauncher) {
  // The batch script itself has SLURM_PROCID=0 but no step: `meridian run`
  // there wraps srun or mpirun, it is not one of their ranks.
  const Environment batch = {{"SLURM_JOB_ID", "991"},
                             {"SLURM_PROCID", "0"},
                             {"SLURM_LOCALID", "0"},
                             {"SLURM_NTASKS", "16"}};
  ExpectIdentity(With(batch), "slurm-991", 0, 0, 16, "slurm");
  EXPECT_FALSE(Inside(batch));
}

TEST(LaunchEnvTest, MpirunInsideAnAllocationTakesOpenMpisRank) {
  // mpirun started its daemons with srun: every rank of a node inherits the
  // daemon's SLURM_PROCID (the node's index). Open MPI's own variables say
  // which rank this is; the job is still the Slurm job, as on every node.
  Environment vars = kOpenMpiRank1;
  vars.insert({{"SLURM_JOB_ID", "991"},
               {"SLURM_STEP_ID", "1"},
               {"SLURM_PROCID", "0"},
               {"SLURM_LOCALID", "0"},
               {"SLURM_NTASKS", "2"}});
  ExpectIdentity(With(vars), "slurm-991.1", 1, 1, 2, "open-mpi");
}

const Environment kTorchrunWorker = {
    {"RANK", "5"},           {"LOCAL_RANK", "1"},
    {"WORLD_SIZE", "8"},     {"LOCAL_WORLD_SIZE", "4"},
    {"GROUP_RANK", "1"},     {"TORCHELASTIC_RUN_ID", "resnet-42"},
    {"MASTER_PORT", "29500"}};

TEST(LaunchEnvTest, TorchrunSingleAndMultiNode) {
  ExpectIdentity(With(kTorchrunWorker), "torchrun-resnet-42", 5, 1, 8,
                 "torchrun");
  // Without --rdzv-id every torchrun job's id is "none": not a name.
  Environment standalone = kTorchrunWorker;
  standalone["TORCHELASTIC_RUN_ID"] = "none";
  ExpectIdentity(With(standalone), "", 5, 1, 8, "torchrun");
  EXPECT_TRUE(Inside(kTorchrunWorker));
}

TEST(LaunchEnvTest, SrunPlusTorchrunTakesTorchrunsRank) {
  // srun starts one torchrun per node; each worker inherits the node's
  // SLURM_PROCID. The job is the Slurm job: the same on every node.
  Environment vars = kTorchrunWorker;
  vars["TORCHELASTIC_RUN_ID"] = "none";
  vars.insert({{"SLURM_JOB_ID", "991"},
               {"SLURM_STEP_ID", "0"},
               {"SLURM_PROCID", "1"},
               {"SLURM_LOCALID", "0"},
               {"SLURM_NTASKS", "2"}});
  ExpectIdentity(With(vars), "slurm-991.0", 5, 1, 8, "torchrun");
}

TEST(LaunchEnvTest, PbsLsfAndFlux) {
  // PBS starts the batch script; ranks come from the MPI launcher in it.
  Environment pbs = kOpenMpiRank1;
  pbs["PBS_JOBID"] = "4711.pbs-server";
  ExpectIdentity(With(pbs), "pbs-4711.pbs-server", 1, 1, 2, "open-mpi");
  const Environment lsf = {{"LSB_JOBID", "3182"},
                           {"JSM_NAMESPACE_RANK", "7"},
                           {"JSM_NAMESPACE_LOCAL_RANK", "3"},
                           {"JSM_NAMESPACE_SIZE", "12"}};
  ExpectIdentity(With(lsf), "lsf-3182", 7, 3, 12, "lsf");
  Environment lsf_array = lsf;
  lsf_array["LSB_JOBINDEX"] = "4";
  EXPECT_EQ(With(lsf_array).job, "lsf-3182.4");
  const Environment flux = {{"FLUX_JOB_ID", "f2Jt5Uk9h"},
                            {"FLUX_TASK_RANK", "2"},
                            {"FLUX_TASK_LOCAL_ID", "0"},
                            {"FLUX_JOB_SIZE", "3"}};
  ExpectIdentity(With(flux), "flux-f2Jt5Uk9h", 2, 0, 3, "flux");
}

TEST(LaunchEnvTest, MeridianVariablesWin) {
  Environment vars = kTorchrunWorker;
  vars.insert({{"MERIDIAN_JOB", "resnet-7"},
               {"MERIDIAN_RANK", "2"},
               {"MERIDIAN_WORLD_SIZE", "3"}});
  ExpectIdentity(With(vars), "resnet-7", 2, -1, 3, "meridian");
}

TEST(LaunchEnvTest, BadValuesAreIgnored) {
  // Not a number, negative, beyond 2^30, a rank outside the world.
  ExpectIdentity(With({{"MERIDIAN_RANK", "x2"}, {"PMI_RANK", "6"}}), "", 6, -1,
                 0, "hydra");
  ExpectIdentity(With({{"OMPI_COMM_WORLD_RANK", "-1"}}), "", -1, -1, 0, "");
  ExpectIdentity(With({{"SLURM_PROCID", "1073741824"}}), "", -1, -1, 0, "");
  ExpectIdentity(With({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}}), "", 4,
                 -1, 0, "slurm");
  // A lone RANK is anybody's variable, not torchrun's.
  ExpectIdentity(With({{"RANK", "3"}}), "", -1, -1, 0, "");
  ExpectIdentity(With({}), "", -1, -1, 0, "");
  EXPECT_FALSE(Inside({}));
}

}  // namespace
}  // namespace meridian
