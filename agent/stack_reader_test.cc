#include "agent/stack_reader.h"

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <thread>

#include "gtest/gtest.h"

namespace meridian {
namespace {

std::atomic<pid_t> g_tid{0};

__attribute__((noinline)) void ParkedForTheReader() {
  g_tid = static_cast<pid_t>(syscall(SYS_gettid));
  for (;;) pause();
}

TEST(StackReaderTest, ReadOncePerEpisodeOffTheCallersThread) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::thread parked(ParkedForTheReader);
    while (g_tid.load() == 0) usleep(100);
    const pid_t tid = g_tid.load();
    (void)!write(ready[1], &tid, sizeof(tid));
    parked.join();
    _exit(0);
  }
  pid_t tid = 0;
  ASSERT_EQ(read(ready[0], &tid, sizeof(tid)),
            static_cast<ssize_t>(sizeof(tid)));
  StackReader reader;
  const StackReader::Thread thread(child, tid);
  EXPECT_FALSE(reader.Get(thread, "3 ").has_value());  // asked for
  reader.WaitIdle();
  std::optional<StackReader::Stack> stack = reader.Get(thread, "3 ");
  ASSERT_TRUE(stack.has_value());
  EXPECT_EQ(stack->error, "");
  bool found = false;
  for (const std::string& frame : stack->frames) {
    found |= frame.find("ParkedForTheReader") != std::string::npos;
  }
  EXPECT_TRUE(found) << ::testing::PrintToString(stack->frames);
  // Another episode: read again; a thread let go: forgotten.
  EXPECT_FALSE(reader.Get(thread, "4 MPI_Send").has_value());
  reader.WaitIdle();
  EXPECT_TRUE(reader.Get(thread, "4 MPI_Send").has_value());
  reader.Keep({});
  EXPECT_FALSE(reader.Get(thread, "4 MPI_Send").has_value());
  reader.WaitIdle();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  // A process gone: the read says why.
  EXPECT_FALSE(reader.Get({child, tid}, "5 ").has_value());
  reader.WaitIdle();
  stack = reader.Get({child, tid}, "5 ");
  ASSERT_TRUE(stack.has_value());
  EXPECT_TRUE(stack->frames.empty());
  EXPECT_NE(stack->error.find(std::to_string(child)), std::string::npos)
      << stack->error;
}

}  // namespace
}  // namespace meridian
