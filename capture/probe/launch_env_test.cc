#include "capture/probe/launch_env.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

std::map<std::string, std::string>* env;

const char* FakeGetenv(const char* name) {
  auto it = env->find(name);
  return it == env->end() ? nullptr : it->second.c_str();
}

LaunchIdentity With(std::map<std::string, std::string> vars) {
  env = &vars;
  return IdentityFromEnvironment(FakeGetenv);
}

TEST(LaunchEnvTest, OpenMpi) {
  LaunchIdentity id = With({{"OMPI_COMM_WORLD_RANK", "3"},
                            {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                            {"OMPI_MCA_ess_base_jobid", "2749038593"}});
  EXPECT_EQ(id.rank, 3);
  EXPECT_EQ(id.local_rank, 1);
  EXPECT_EQ(id.job, "ompi-2749038593");
}

TEST(LaunchEnvTest, SlurmAndTorchrun) {
  LaunchIdentity slurm = With({{"SLURM_PROCID", "12"},
                               {"SLURM_LOCALID", "4"},
                               {"SLURM_JOB_ID", "991"},
                               {"SLURM_STEP_ID", "0"}});
  EXPECT_EQ(slurm.rank, 12);
  EXPECT_EQ(slurm.local_rank, 4);
  EXPECT_EQ(slurm.job, "slurm-991.0");
  LaunchIdentity torch = With(
      {{"RANK", "5"}, {"LOCAL_RANK", "1"}, {"TORCHELASTIC_RUN_ID", "abc"}});
  EXPECT_EQ(torch.rank, 5);
  EXPECT_EQ(torch.job, "torchrun-abc");
}

TEST(LaunchEnvTest, MeridianVariablesWinAndBadValuesAreIgnored) {
  LaunchIdentity id = With({{"MERIDIAN_JOB", "resnet-7"},
                            {"MERIDIAN_RANK", "x2"},
                            {"PMI_RANK", "6"},
                            {"OMPI_MCA_ess_base_jobid", "1"}});
  EXPECT_EQ(id.job, "resnet-7");
  EXPECT_EQ(id.rank, 6);  // "x2" is not a rank
  EXPECT_EQ(id.local_rank, -1);
  EXPECT_EQ(With({}).job, "");
  EXPECT_EQ(With({}).rank, -1);
}

}  // namespace
}  // namespace meridian
