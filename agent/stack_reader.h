// StackReader: the agent's reads of stuck threads' native stacks
// (thread_stacks.h) and Python stacks (python_stacks.h), on a thread of its
// own, so that the agent's loop,
// which drains the rings, never waits for an unwind (each attaches, loads
// the process's objects and their debug information: tens to hundreds of
// ms).
//
// Contract:
//   - Get(pid, tid, episode, first) returns the stack read for that thread
//     in that episode (what the thread is stuck in: its calls left and its
//     call), if one was read; else it asks for one (at most kMaxQueued
//     waiting; more are asked again later) and returns nothing. A thread in
//     a new episode is read again. `first`: read before those asked without
//     it (the agent asks so for threads in no traced call, a hang's likely
//     cause, so that theirs come first when many threads wait at once).
//   - Keep(alive) forgets the threads not in `alive`.
//   - Thread-safe; the destructor stops the thread after the read under
//     way.
#ifndef MERIDIAN_AGENT_STACK_READER_H_
#define MERIDIAN_AGENT_STACK_READER_H_

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace meridian {

class StackReader {
 public:
  static constexpr size_t kMaxQueued = 64;

  struct Stack {
    std::vector<std::string> frames;
    std::vector<std::string> python_frames;  // none: no Python there
    std::string error;  // why there are none, native or Python
  };
  using Thread = std::pair<int64_t, int32_t>;  // pid, tid

  StackReader();
  ~StackReader();

  std::optional<Stack> Get(Thread thread, const std::string& episode,
                           bool first = false);
  void Keep(const std::set<Thread>& alive);
  // Returns once no read is asked for or under way (for tests).
  void WaitIdle();

 private:
  struct Entry {
    std::string episode;
    bool read = false;
    Stack stack;
  };
  static Stack Read(Thread thread);
  void Run();

  absl::Mutex mutex_;
  std::map<Thread, Entry> entries_ ABSL_GUARDED_BY(mutex_);
  std::deque<std::pair<Thread, std::string>> queue_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  bool reading_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_STACK_READER_H_
