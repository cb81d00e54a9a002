#include "agent/thread_stacks.h"

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace meridian {
namespace {

std::atomic<pid_t> g_tid{0};
std::atomic<bool> g_stop{false};

// Where the other thread waits: its stack must name this function and its
// file.
__attribute__((noinline)) void WaitHereForTheTest() {
  g_tid = static_cast<pid_t>(syscall(SYS_gettid));
  while (!g_stop.load()) usleep(1000);
}

TEST(ThreadStacksTest, AnotherThreadOfThisProcess) {
  // A thread cannot ptrace its own process's threads: read a child's.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::thread waiter(WaitHereForTheTest);
    while (g_tid.load() == 0) usleep(100);
    const pid_t tid = g_tid.load();
    (void)!write(ready[1], &tid, sizeof(tid));
    waiter.join();  // never returns: killed by the test
    _exit(0);
  }
  pid_t tid = 0;
  ASSERT_EQ(read(ready[0], &tid, sizeof(tid)),
            static_cast<ssize_t>(sizeof(tid)));
  absl::StatusOr<std::vector<std::string>> stack = ThreadStack(child, tid);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(stack.ok()) << stack.status();
  bool found = false;
  for (const std::string& frame : *stack) {
    found |= frame.find("WaitHereForTheTest") != std::string::npos &&
             frame.find("thread_stacks_test.cc:") != std::string::npos;
  }
  EXPECT_TRUE(found) << ::testing::PrintToString(*stack);
}

TEST(ThreadStacksTest, NoSuchProcessSaysSo) {
  absl::StatusOr<std::vector<std::string>> stack = ThreadStack(999999999, 1);
  ASSERT_FALSE(stack.ok());
  EXPECT_NE(stack.status().message().find("process 999999999"),
            std::string::npos)
      << stack.status();
}

}  // namespace
}  // namespace meridian
