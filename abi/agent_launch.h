// Starting the node's agent from inside a traced process.
//
// `meridian run` starts an agent on the node it runs on. When it wraps a
// launcher that starts ranks on other nodes (mpirun with a hostfile, srun),
// nobody starts one there: a probe that finds no agent on its socket starts
// one for its node, with the collector address and agent program that
// `meridian run` exported (MERIDIAN_COLLECTOR, MERIDIAN_AGENT_BIN). Every
// rank of the node may try at once; the agent's lock on its socket lets one
// serve and the others exit with status 3 (kAgentLostRace). The agent runs
// with --exit-when-idle, so it goes when the node's last process has gone
// and everything is sent.
//
// Plain POSIX: this is linked into traced processes. Nothing here runs per
// event: at most once per process.
#ifndef MERIDIAN_ABI_AGENT_LAUNCH_H_
#define MERIDIAN_ABI_AGENT_LAUNCH_H_

#include <sys/types.h>

#include <string>

namespace meridian {

// The agent's exit status when another agent already serves its socket.
constexpr int kAgentLostRace = 3;

struct AgentLaunch {
  std::string agent;      // the meridian-agent program; empty: none known
  std::string collector;  // host:port; empty: the agent's default
  std::string socket;     // the socket it serves
};

// `socket` with $MERIDIAN_AGENT_BIN and $MERIDIAN_COLLECTOR. `getenv_fn` is
// getenv in production.
AgentLaunch AgentLaunchFromEnvironment(const char* (*getenv_fn)(const char*),
                                       const std::string& socket);

// Starts `agent --socket S [--collector C] --exit-when-idle` in a session
// of its own (a signal to the job's process group does not reach it), with
// stdin and stdout on /dev/null and stderr appended to agent.log in the
// socket's directory, which is made or verified private first
// (OpenPrivateDir). It runs with `environment` less the variables that
// would trace the agent itself (LD_PRELOAD, MERIDIAN_AGENT_SOCKET, the
// CUDA/NVTX injections, NCCL's profiler plugin). Does not wait for it.
// Returns its pid, or -1 and *error saying why.
pid_t SpawnAgent(const AgentLaunch& launch, char* const* environment,
                 std::string* error);

// The path of the log SpawnAgent writes for `socket`.
std::string AgentLogPath(const std::string& socket);

}  // namespace meridian

#endif  // MERIDIAN_ABI_AGENT_LAUNCH_H_
