#include "abi/agent_launch.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "testing/file_text.h"

namespace meridian {
namespace {

std::string Dir(const std::string& name) {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp ? tmp : "/tmp") + "/" + name;
  std::string command = "rm -rf '" + dir + "'";
  EXPECT_EQ(system(command.c_str()), 0);
  EXPECT_EQ(mkdir(dir.c_str(), 0700), 0);
  return dir;
}

// A stand-in agent: writes its arguments and environment beside itself and
// a line to stderr, and exits as an agent that lost the race does.
std::string FakeAgent(const std::string& dir) {
  const std::string path = dir + "/fake-agent";
  std::ofstream(path) << "#!/bin/sh\n"
                         "here=$(dirname \"$0\")\n"
                         "echo \"$@\" > \"$here/args\"\n"
                         "env > \"$here/env\"\n"
                         "echo 'agent: another agent serves' >&2\n"
                         "exit 3\n";
  chmod(path.c_str(), 0700);
  return path;
}

int WaitFor(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(AgentLaunchTest, ReadsTheVariablesMeridianRunExports) {
  static std::map<std::string, std::string> env;
  env = {{"MERIDIAN_AGENT_BIN", "/opt/meridian/bin/meridian-agent"},
         {"MERIDIAN_COLLECTOR", "head:7070"}};
  AgentLaunch launch = AgentLaunchFromEnvironment(
      [](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      "/run/user/7/meridian/agent.sock");
  EXPECT_EQ(launch.agent, "/opt/meridian/bin/meridian-agent");
  EXPECT_EQ(launch.collector, "head:7070");
  EXPECT_EQ(launch.socket, "/run/user/7/meridian/agent.sock");
  EXPECT_EQ(AgentLogPath(launch.socket), "/run/user/7/meridian/agent.log");
}

TEST(AgentLaunchTest, StartsTheAgentUntracedWithItsLogInThePrivateDir) {
  const std::string dir = Dir("launch");
  const std::string runtime = dir + "/meridian";  // made by SpawnAgent
  AgentLaunch launch{FakeAgent(dir), "head:7070", runtime + "/agent.sock"};
  std::string probe_lib = "LD_PRELOAD=/lib/libmeridian_probe.so";
  std::string socket = "MERIDIAN_AGENT_SOCKET=" + launch.socket;
  std::string plugin = "NCCL_PROFILER_PLUGIN=/lib/libnccl-profiler.so";
  std::string kept = "MERIDIAN_JOB=resnet";
  std::string path = "PATH=/usr/bin:/bin";
  char* environment[] = {probe_lib.data(), socket.data(), plugin.data(),
                         kept.data(),      path.data(),   nullptr};
  std::string error;
  const pid_t pid = SpawnAgent(launch, environment, &error);
  ASSERT_GT(pid, 0) << error;
  EXPECT_EQ(WaitFor(pid), kAgentLostRace);
  EXPECT_EQ(FileText(dir + "/args"), "--collector head:7070 --socket " +
                                         launch.socket + " --exit-when-idle\n");
  const std::string env = FileText(dir + "/env");
  EXPECT_NE(env.find("MERIDIAN_JOB=resnet\n"), std::string::npos) << env;
  EXPECT_EQ(env.find("LD_PRELOAD"), std::string::npos) << env;
  EXPECT_EQ(env.find("MERIDIAN_AGENT_SOCKET"), std::string::npos) << env;
  EXPECT_EQ(env.find("NCCL_PROFILER_PLUGIN"), std::string::npos) << env;
  EXPECT_EQ(FileText(runtime + "/agent.log"), "agent: another agent serves\n");
  struct stat st;
  ASSERT_EQ(stat(runtime.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat((runtime + "/agent.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(AgentLaunchTest, RefusesWithAReason) {
  const std::string dir = Dir("refuse");
  char* environment[] = {nullptr};
  std::string error;
  EXPECT_EQ(SpawnAgent({"", "", dir + "/agent.sock"}, environment, &error), -1);
  EXPECT_EQ(error, "no agent program (MERIDIAN_AGENT_BIN is not set)");
  error.clear();
  EXPECT_EQ(SpawnAgent({dir + "/missing-agent", "", dir + "/agent.sock"},
                       environment, &error),
            -1);
  EXPECT_EQ(error, "cannot execute " + dir +
                       "/missing-agent: No such file or directory");
  // A directory others may write: nothing is written into it.
  const std::string open = Dir("refuse-open");
  chmod(open.c_str(), 0777);
  error.clear();
  EXPECT_EQ(SpawnAgent({FakeAgent(dir), "", open + "/agent.sock"}, environment,
                       &error),
            -1);
  EXPECT_NE(error.find(open), std::string::npos) << error;
  struct stat st;
  EXPECT_NE(stat((open + "/agent.log").c_str(), &st), 0);
}

}  // namespace
}  // namespace meridian
