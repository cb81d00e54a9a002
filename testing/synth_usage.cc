#include "testing/synth_usage.h"

namespace meridian {

const char kSynthUsage[] =
    R"(usage: meridian-synth [--collector HOST:PORT] [--job ID] [--ranks N]
                      [--nodes M] [--steps S] [--spans-per-batch B] [--resend]
                      [--pace-ms N] [--layers L] [--jitter-ns J] [--ended]
                      [--store LOCATION]
       meridian-synth [--collector HOST:PORT] --scenario NAME [--job ID]
                      [--node1-offset-ns X]
       meridian-synth --version | -h | --help

Sends a synthetic training job: N ranks (default 4) on M nodes (default 2),
S steps (default 10), each node's agent on its own stream. --resend sends
every batch a second time; the collector must store each once. --pace-ms N
sends it as a running job would: starting now (wall clock), each node's
batches one round at a time, N ms apart. --layers L adds L "layer" spans to
forward and to backward each step (6 + 2L spans a rank and step, as a
training step's kernels give). --jitter-ns J adds up to J ns to the times
(SyntheticJob::jitter_ns: a store compresses them as it would real ones).
--ended sends the job as agents send one whose processes have exited: each
process with the job's world size (N) and declared ended in its node's last
batch, so that the collector refreshes the job at once instead of once it
is quiet (docs/operations.md).
--store writes the job straight into a
store (a SQLite path or clickhouse://...) instead of sending it, as the
collector's writer would, holding one group of batches at a time: a job
too large to send from memory (benchmarks of 100M spans).

--scenario sends instead a small job whose analyses have known answers
(testing/scenario_job.h, docs/analysis.md): slow-rank, slow-link,
late-every-other-step, p2p-chain, setup-in-step or waits. The job id
defaults to
the name. With
--node1-offset-ns, node-1's clock reads that much ahead, and each node's
batch carries the clock model that undoes it.
)";

const std::vector<std::string>& SynthValueFlags() {
  static const auto* flags = new std::vector<std::string>{
      "collector",       "job",      "ranks",   "nodes",           "steps",
      "spans-per-batch", "scenario", "pace-ms", "node1-offset-ns", "layers",
      "store",           "jitter-ns"};
  return *flags;
}

const std::vector<std::string>& SynthSwitches() {
  static const auto* flags =
      new std::vector<std::string>{"resend", "ended", "help", "version"};
  return *flags;
}

}  // namespace meridian
