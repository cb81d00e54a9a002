#include "agent/stack_reader.h"

#include "absl/strings/str_cat.h"
#include "agent/python_stacks.h"
#include "agent/thread_stacks.h"

namespace meridian {

StackReader::StackReader() : thread_([this] { Run(); }) {}

StackReader::~StackReader() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  thread_.join();
}

std::optional<StackReader::Stack> StackReader::Get(Thread thread,
                                                   const std::string& episode,
                                                   bool first) {
  absl::MutexLock lock(&mutex_);
  auto it = entries_.find(thread);
  if (it != entries_.end() && it->second.episode == episode) {
    if (it->second.read) return it->second.stack;
    return std::nullopt;  // asked for, not read yet
  }
  if (queue_.size() >= kMaxQueued) return std::nullopt;
  entries_[thread] = Entry{episode, false, {}};
  if (first) {
    queue_.emplace_front(thread, episode);
  } else {
    queue_.emplace_back(thread, episode);
  }
  return std::nullopt;
}

void StackReader::Keep(const std::set<Thread>& alive) {
  absl::MutexLock lock(&mutex_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = alive.count(it->first) ? std::next(it) : entries_.erase(it);
  }
}

void StackReader::WaitIdle() {
  auto idle = [this] { return queue_.empty() && !reading_; };
  absl::MutexLock lock(&mutex_);
  mutex_.Await(absl::Condition(&idle));
}

// The native stack, then (the thread running again) the Python one.
StackReader::Stack StackReader::Read(Thread thread) {
  const pid_t pid = static_cast<pid_t>(thread.first);
  Stack stack;
  absl::StatusOr<std::vector<std::string>> frames =
      ThreadStack(pid, thread.second);
  if (frames.ok()) {
    stack.frames = std::move(*frames);
  } else {
    stack.error = std::string(frames.status().message());
  }
  absl::StatusOr<std::vector<std::string>> python =
      PythonStack(pid, thread.second);
  if (python.ok()) {
    stack.python_frames = std::move(*python);
  } else {
    absl::StrAppend(&stack.error, stack.error.empty() ? "" : "; ",
                    "Python stack: ", python.status().message());
  }
  return stack;
}

void StackReader::Run() {
  auto work = [this] { return stopping_ || !queue_.empty(); };
  for (;;) {
    std::pair<Thread, std::string> next;
    {
      absl::MutexLock lock(&mutex_);
      mutex_.Await(absl::Condition(&work));
      if (stopping_) return;
      next = std::move(queue_.front());
      queue_.pop_front();
      reading_ = true;
    }
    Stack stack = Read(next.first);
    absl::MutexLock lock(&mutex_);
    reading_ = false;
    auto it = entries_.find(next.first);
    if (it != entries_.end() && it->second.episode == next.second) {
      it->second.read = true;
      it->second.stack = std::move(stack);
    }
  }
}

}  // namespace meridian
