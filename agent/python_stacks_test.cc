#include "agent/python_stacks.h"

#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/utf8.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

using ::testing::ElementsAre;

TEST(ParseFaulthandlerDumpTest, TheCurrentThreadsFramesInnermostFirst) {
  EXPECT_THAT(
      ParseFaulthandlerDump(
          "Thread 0x00007f0000000700 (most recent call first):\n"
          "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
          "\n"
          "Current thread 0x00007f0000000740 (most recent call first):\n"
          "  File \"/work/train.py\", line 63 in stuck\n"
          "  File \"/work/a \\\", line 1 in x.py\", line 106 in main\n"
          "  File \"/work/train.py\", line 130 in <module>\n"),
      ElementsAre("stuck (/work/train.py:63)",
                  "main (/work/a \\\", line 1 in x.py:106)",
                  "<module> (/work/train.py:130)"));
}

TEST(ParseFaulthandlerDumpTest, NoCurrentThreadOrNoFrameGivesNone) {
  EXPECT_TRUE(ParseFaulthandlerDump("").empty());
  EXPECT_TRUE(ParseFaulthandlerDump("Thread 0x1 (most recent call first):\n"
                                    "  File \"a.py\", line 1 in f\n")
                  .empty());
  EXPECT_TRUE(ParseFaulthandlerDump("Current thread 0x1 (most recent call "
                                    "first):\n  <no Python frame>\n")
                  .empty());
}

TEST(ParseFaulthandlerDumpTest, HostileTextIsBoundedAndValidText) {
  std::string dump = "Current thread 0x1:\n";
  for (int i = 0; i < 40; ++i) {
    dump += "  File \"" + std::string(600, 'p') + "\", line 1 in f\xC3\n";
  }
  dump += "  ...\n";
  const std::vector<std::string> frames = ParseFaulthandlerDump(dump);
  ASSERT_EQ(frames.size(), 32u);
  EXPECT_EQ(frames[0], "f\xEF\xBF\xBD (" + std::string(506, 'p'));
  for (const std::string& frame : frames) EXPECT_TRUE(IsValidUtf8(frame));
  // A line that is no frame ends the block.
  EXPECT_THAT(ParseFaulthandlerDump("Current thread 0x1:\n"
                                    "  File \"a.py\", line 1 in f\n"
                                    "  ...\n"
                                    "  File \"a.py\", line 2 in g\n"),
              ElementsAre("f (a.py:1)"));
}

// A Python child that runs `script` (its lines), given stacks.py's path;
// its first output line (the thread to read) in *tid.
pid_t StartPython(const std::string& script, pid_t* tid) {
  char dir[] = "/tmp/meridian-pystack-test-XXXXXX";
  const std::string path = std::string(mkdtemp(dir)) + "/job.py";
  std::ofstream(path) << script;
  int out[2];
  if (pipe(out) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    dup2(out[1], 1);
    const std::string stacks =
        std::string(getenv("TEST_SRCDIR")) +
        "/meridian/capture/probe/python/meridian/stacks.py";
    execlp("python3", "python3", path.c_str(), stacks.c_str(), nullptr);
    _exit(127);
  }
  close(out[1]);
  char line[32] = {};
  for (size_t n = 0; n < sizeof(line) - 1; ++n) {
    if (read(out[0], &line[n], 1) != 1 || line[n] == '\n') break;
  }
  close(out[0]);
  *tid = atoi(line);
  return child;
}

// Returns once thread `tid` of `pid` sleeps (state S: the script has
// printed its thread and only its wait is left), or the thread is gone.
void AwaitSleeping(pid_t pid, pid_t tid) {
  const std::string path =
      "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat";
  for (;;) {
    std::ifstream in(path);
    std::string stat((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos || stat.compare(paren, 3, ") S") == 0) {
      return;
    }
    sched_yield();
  }
}

void Stop(pid_t child) {
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

// Registers stacks.py's dump (argv[1]) as the meridian package does, then
// waits in wait_here() (line 9), called at line 10.
const char kWaiting[] =
    "import importlib.util, signal, sys, threading\n"
    "spec = importlib.util.spec_from_file_location('stacks', sys.argv[1])\n"
    "stacks = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(stacks)\n"
    "BLOCK\n"
    "assert stacks.register()\n"
    "def wait_here():\n"
    "    print(threading.get_native_id(), flush=True)\n"
    "    threading.Event().wait()\n"
    "wait_here()\n";

std::string Waiting(const std::string& block) {
  std::string script = kWaiting;
  script.replace(script.find("BLOCK"), 5, block);
  return script;
}

TEST(PythonStackTest, AStuckThreadsStackReadTwice) {
  pid_t tid = 0;
  const pid_t child = StartPython(Waiting("pass"), &tid);
  ASSERT_GT(tid, 0);
  AwaitSleeping(child, tid);
  for (int read = 0; read < 2; ++read) {  // the second after the first
    absl::StatusOr<std::vector<std::string>> stack = PythonStack(child, tid);
    ASSERT_TRUE(stack.ok()) << stack.status();
    ASSERT_EQ(stack->size(), 4u) << ::testing::PrintToString(*stack);
    // Event.wait in Condition.wait, in threading.py; then the script's.
    EXPECT_EQ((*stack)[0].rfind("wait (", 0), 0u) << (*stack)[0];
    EXPECT_NE((*stack)[1].find("threading.py:"), std::string::npos);
    const std::string script = (*stack)[2].substr((*stack)[2].find('/'));
    EXPECT_EQ((*stack)[2],
              "wait_here (" + script.substr(0, script.find(':')) + ":9)");
    EXPECT_EQ((*stack)[3],
              "<module> (" + script.substr(0, script.find(':')) + ":10)");
  }
  Stop(child);
}

TEST(PythonStackTest, AThreadThatBlocksTheSignalSaysSo) {
  pid_t tid = 0;
  const pid_t child = StartPython(
      Waiting("signal.pthread_sigmask(signal.SIG_BLOCK, [stacks.SIGNAL])"),
      &tid);
  ASSERT_GT(tid, 0);
  absl::StatusOr<std::vector<std::string>> stack = PythonStack(child, tid);
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.status().message(),
            "thread " + std::to_string(tid) + " did not answer signal " +
                std::to_string(SIGRTMIN + 7) + " in 1 s (it blocks it)");
  EXPECT_EQ(waitpid(child, nullptr, WNOHANG), 0);  // still running
  Stop(child);
}

TEST(PythonStackTest, NoDumpRegisteredGivesNoneAndNoSignal) {
  // Not Python at all.
  const pid_t plain = fork();
  if (plain == 0) {
    pause();
    _exit(0);
  }
  absl::StatusOr<std::vector<std::string>> stack = PythonStack(plain, plain);
  ASSERT_TRUE(stack.ok()) << stack.status();
  EXPECT_TRUE(stack->empty());
  Stop(plain);
  // A file that names SIGKILL: never sent.
  pid_t tid = 0;
  const pid_t child = StartPython(
      "import os, threading\n"
      "fd = os.memfd_create('meridian-python-stacks-9')\n"
      "print(threading.get_native_id(), flush=True)\n"
      "threading.Event().wait()\n",
      &tid);
  ASSERT_GT(tid, 0);
  stack = PythonStack(child, tid);
  ASSERT_TRUE(stack.ok()) << stack.status();
  EXPECT_TRUE(stack->empty());
  EXPECT_EQ(waitpid(child, nullptr, WNOHANG), 0);  // not killed
  Stop(child);
}

TEST(PythonStackTest, NoSuchProcessSaysSo) {
  absl::StatusOr<std::vector<std::string>> stack = PythonStack(999999999, 1);
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.status().message(),
            "cannot list process 999999999's files (/proc/999999999/fd): No "
            "such file or directory");
}

}  // namespace
}  // namespace meridian
