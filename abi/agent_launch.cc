#include "abi/agent_launch.h"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "abi/agent_dir.h"

namespace meridian {
namespace {

// What an agent must not inherit from the traced process: it would load
// the probe and the GPU capture libraries into itself.
bool TracesItself(const char* entry) {
  static const char* const kNames[] = {
      "LD_PRELOAD=", "MERIDIAN_AGENT_SOCKET=", "CUDA_INJECTION64_PATH=",
      "NVTX_INJECTION64_PATH=", "NCCL_PROFILER_PLUGIN="};
  for (const char* name : kNames) {
    if (strncmp(entry, name, strlen(name)) == 0) return true;
  }
  return false;
}

std::string Text(const char* (*getenv_fn)(const char*), const char* name) {
  const char* value = getenv_fn(name);
  return value == nullptr ? "" : value;
}

}  // namespace

AgentLaunch AgentLaunchFromEnvironment(const char* (*getenv_fn)(const char*),
                                       const std::string& socket) {
  AgentLaunch launch;
  launch.agent = Text(getenv_fn, "MERIDIAN_AGENT_BIN");
  launch.collector = Text(getenv_fn, "MERIDIAN_COLLECTOR");
  launch.socket = socket;
  return launch;
}

std::string AgentLogPath(const std::string& socket) {
  return DirOf(socket) + "/agent.log";
}

pid_t SpawnAgent(const AgentLaunch& launch, char* const* environment,
                 std::string* error) {
  if (launch.agent.empty()) {
    *error = "no agent program (MERIDIAN_AGENT_BIN is not set)";
    return -1;
  }
  const int dir =
      OpenPrivateDir(DirOf(launch.socket), static_cast<gid_t>(-1), error);
  if (dir < 0) return -1;
  const int log =
      openat(dir, "agent.log",
             O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  const int saved = errno;
  close(dir);
  if (log < 0) {
    *error = AgentLogPath(launch.socket) + ": " + strerror(saved);
    return -1;
  }
  std::vector<std::string> args = {launch.agent, "--socket", launch.socket,
                                   "--exit-when-idle"};
  if (!launch.collector.empty()) {
    args.insert(args.begin() + 1, {"--collector", launch.collector});
  }
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char* const* e = environment; e != nullptr && *e != nullptr; ++e) {
    if (!TracesItself(*e)) envp.push_back(*e);
  }
  envp.push_back(nullptr);

  posix_spawn_file_actions_t files;
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&files, log, 2);
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, launch.agent.c_str(), &files, &attributes,
                             argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&files);
  close(log);
  if (rc != 0) {
    *error = "cannot execute " + launch.agent + ": " + strerror(rc);
    return -1;
  }
  return pid;
}

}  // namespace meridian
