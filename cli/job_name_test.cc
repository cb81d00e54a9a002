#include "cli/job_name.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

using Command = std::vector<std::string>;

TEST(JobNameTest, TakesTorchrunsRendezvousIdNotTheScripts) {
  EXPECT_EQ(TorchrunRunId({"torchrun", "--nnodes", "2", "--nproc-per-node", "4",
                           "--rdzv-id", "resnet-1", "train.py"}),
            "resnet-1");
  EXPECT_EQ(TorchrunRunId({"/opt/venv/bin/torchrun", "--standalone",
                           "--rdzv_id=abc", "train.py"}),
            "abc");
  EXPECT_EQ(TorchrunRunId({"python3", "-m", "torch.distributed.run",
                           "--nnodes=2", "--rdzv-id", "j7", "train.py"}),
            "j7");
  // The script's own --rdzv-id is not torchrun's.
  EXPECT_EQ(TorchrunRunId({"torchrun", "--nproc-per-node", "4", "train.py",
                           "--rdzv-id", "mine"}),
            "");
  EXPECT_EQ(TorchrunRunId({"mpirun", "--rdzv-id", "x"}), "");
  EXPECT_EQ(TorchrunRunId({"torchrun", "--rdzv-id"}), "");
  EXPECT_TRUE(IsTorchrun({"python", "-m", "torch.distributed.launch"}));
  EXPECT_FALSE(IsTorchrun({"python", "train.py"}));
  EXPECT_FALSE(IsTorchrun({}));
}

TEST(JobNameTest, FlagThenLauncherThenTorchrunThenProgramAndTime) {
  const Command torchrun = {"torchrun", "--rdzv-id", "r1", "train.py"};
  EXPECT_EQ(RunJobName("mine", torchrun, "slurm-9", "20261124-101500"), "mine");
  EXPECT_EQ(RunJobName("", torchrun, "slurm-9", "20261124-101500"), "slurm-9");
  EXPECT_EQ(RunJobName("", torchrun, "", "20261124-101500"), "torchrun-r1");
  EXPECT_EQ(RunJobName("", {"torchrun", "--rdzv-id", "none", "t.py"}, "",
                       "20261124-101500"),
            "torchrun-20261124-101500");
  EXPECT_EQ(RunJobName("", {"/usr/bin/mpirun", "-np", "4", "./app"}, "",
                       "20261124-101500"),
            "mpirun-20261124-101500");
}

}  // namespace
}  // namespace meridian
