// `meridian run` and `meridian trace`: the user's side of the node agent.
//
// RunTraced runs a command with the probe loaded (LD_PRELOAD), pointed at
// the node's agent ($MERIDIAN_AGENT_SOCKET or the default socket). If no
// agent answers there, it starts one (`meridian-agent --exit-when-idle`,
// logging to agent.log beside the socket) that exits after its last client.
// Works around a launcher (`meridian run -- mpirun -np 4 ./app`: Open MPI's
// mpirun gets `-x` for the variables so remote ranks see them too) and
// inside one (`mpirun -np 4 meridian run -- ./app`). When the command has
// exited, it asks the agent to flush and reports whether every span is
// acknowledged by the collector or spooled on disk. Returns the command's
// exit status (128 + signal if it was killed), or one of the codes below for
// meridian run's own failures, as env(1) and timeout(1) do.
#ifndef MERIDIAN_CLI_RUN_COMMAND_H_
#define MERIDIAN_CLI_RUN_COMMAND_H_

#include <string>
#include <vector>

namespace meridian {

// meridian run's own exit codes (docs/cli.md): a failure of meridian run
// itself (usage, no agent, a reused --job), the command found but not
// executable, the command not found.
constexpr int kRunFailed = 125;
constexpr int kRunCannotExecute = 126;
constexpr int kRunNotFound = 127;

struct RunOptions {
  std::string collector;  // for an agent started here
  std::string job;        // default: launcher's job id, else generated
  std::vector<std::string> command;
  bool on_demand = false;  // MERIDIAN_TRACE=on-demand
  // A --job that the collector already holds is refused unless `append`.
  bool append = false;
  // The summary at the end as one JSON object on stdout.
  bool json = false;
  int flush_timeout_ms = 60000;
};

int RunTraced(const RunOptions& options);

// Asks the node's agent to make the processes of `job` record the next
// `steps` steps or `seconds` seconds. Prints how many processes were told
// (as JSON with `json`); returns 0, or 1 if no agent answers.
int RequestTrace(const std::string& job, int steps, int seconds, bool json);

}  // namespace meridian

#endif  // MERIDIAN_CLI_RUN_COMMAND_H_
