// The job `meridian run` names (docs/launchers.md), the same on every node
// where it can be: all of a job's ranks must agree on it, or one job is
// stored as several.
#ifndef MERIDIAN_CLI_JOB_NAME_H_
#define MERIDIAN_CLI_JOB_NAME_H_

#include <string>
#include <vector>

namespace meridian {

// Whether `command` runs torchrun (`torchrun ...`, `python -m
// torch.distributed.run|launch ...`).
bool IsTorchrun(const std::vector<std::string>& command);

// torchrun's rendezvous id among its own arguments (`--rdzv-id X`,
// `--rdzv_id=X`; not the training script's), empty if none or not torchrun.
std::string TorchrunRunId(const std::vector<std::string>& command);

// `job_flag` (--job) if set; else `launcher_job` (LaunchIdentity::job of
// meridian run's own environment: inside sbatch, the Slurm job); else
// "torchrun-<rendezvous id>" (unless torchrun's default "none"); else
// "<program>-<utc_stamp>", which only this node knows.
std::string RunJobName(const std::string& job_flag,
                       const std::vector<std::string>& command,
                       const std::string& launcher_job,
                       const std::string& utc_stamp);

}  // namespace meridian

#endif  // MERIDIAN_CLI_JOB_NAME_H_
