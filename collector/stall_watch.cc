#include "collector/stall_watch.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "query/analysis/job_health.h"
#include "query/health_report.h"
#include "spdlog/spdlog.h"

extern char** environ;

namespace meridian {

StallWatch::StallWatch(const ActivityBoard* board, int64_t stall_after_ns,
                       std::string on_stall, const SlowdownWatch* slowdowns,
                       std::string on_slowdown)
    : board_(board),
      stall_after_ns_(stall_after_ns),
      on_stall_(std::move(on_stall)),
      slowdowns_(slowdowns),
      on_slowdown_(std::move(on_slowdown)) {}

StallWatch::~StallWatch() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void StallWatch::Start(absl::Duration period) {
  thread_ = std::thread([this, period] {
    for (;;) {
      {
        absl::MutexLock lock(&mutex_);
        if (mutex_.AwaitWithTimeout(absl::Condition(&stopping_), period)) {
          return;
        }
      }
      Check(absl::Now());
    }
  });
}

void StallWatch::Check(absl::Time now) {
  std::map<std::string, std::pair<double, std::string>> stalled;
  for (const std::string& job : board_->Jobs()) {
    const std::vector<LiveProcess> live = board_->Job(job, now);
    if (live.empty()) continue;
    const v1::HealthReply health = DiagnoseHealth(job, live, stall_after_ns_);
    if (health.state() != "stalled") continue;
    stalled[job] = {static_cast<double>(health.stalled_for_ns()) / 1e9,
                    HealthJson(health)};
  }
  std::map<std::string, std::vector<v1::HealthSlowdown>> slow;
  if (slowdowns_ != nullptr && !on_slowdown_.empty()) {
    slow = slowdowns_->SlowJobs();
  }
  absl::MutexLock lock(&mutex_);
  Reap();
  std::map<std::string, double> was = std::move(stalled_);
  stalled_.clear();
  for (const auto& [job, seconds_json] : stalled) {
    stalled_[job] = seconds_json.first;
    if (!was.count(job) && !on_stall_.empty()) {
      RunHook("--on-stall", "stalled", on_stall_, job, seconds_json.second);
    }
  }
  // Each slowdown once: a job whose list holds one not there at the last
  // Check runs the hook with all of them.
  std::set<std::string> slow_now;
  for (const auto& [job, found] : slow) {
    bool any_new = false;
    for (const v1::HealthSlowdown& s : found) {
      const std::string key =
          absl::StrCat(job, " ", s.rank(), " ", s.metric(), " ", s.from_step());
      any_new |= !slow_.count(key);
      slow_now.insert(key);
    }
    if (any_new) {
      RunHook("--on-slowdown", "slowed down", on_slowdown_, job,
              SlowdownJson(job, found, now));
    }
  }
  slow_ = std::move(slow_now);
}

std::string StallWatch::SlowdownJson(
    const std::string& job, const std::vector<v1::HealthSlowdown>& found,
    absl::Time now) const {
  const std::vector<LiveProcess> live = board_->Job(job, now);
  v1::HealthReply health;
  if (live.empty()) {
    health.set_job(job);
    health.set_state("finished");
    health.set_stall_after_ns(stall_after_ns_);
  } else {
    health = DiagnoseHealth(job, live, stall_after_ns_);
  }
  for (const v1::HealthSlowdown& s : found) *health.add_slowdowns() = s;
  return HealthJson(health);
}

std::vector<std::pair<std::string, double>> StallWatch::Stalled() const {
  absl::MutexLock lock(&mutex_);
  return std::vector<std::pair<std::string, double>>(stalled_.begin(),
                                                     stalled_.end());
}

int64_t StallWatch::hooks_run() const {
  absl::MutexLock lock(&mutex_);
  return hooks_run_;
}

void StallWatch::Reap() {
  for (auto it = hooks_.begin(); it != hooks_.end();) {
    it = waitpid(*it, nullptr, WNOHANG) != 0 ? hooks_.erase(it) : std::next(it);
  }
}

void StallWatch::RunHook(const char* flag, const char* what,
                         const std::string& command_line,
                         const std::string& job, const std::string& json) {
  if (hooks_.size() >= kMaxHooks) {
    spdlog::warn("{} not run for job {}: {} hooks still running", flag, job,
                 hooks_.size());
    return;
  }
  // The answer in a memory file, as the hook's stdin.
  const int input = memfd_create("meridian-hook", MFD_CLOEXEC);
  if (input < 0 ||
      write(input, json.data(), json.size()) !=
          static_cast<ssize_t>(json.size()) ||
      lseek(input, 0, SEEK_SET) != 0) {
    spdlog::error("{} not run for job {}: {}", flag, job, strerror(errno));
    if (input >= 0) close(input);
    return;
  }
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (strncmp(*e, "MERIDIAN_JOB=", 13) != 0) env.push_back(*e);
  }
  env.push_back("MERIDIAN_JOB=" + job);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string command = command_line;
  char sh[] = "/bin/sh";
  char dash_c[] = "-c";
  char* argv[] = {sh, dash_c, command.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input, STDIN_FILENO);
  pid_t pid = -1;
  const int failed =
      posix_spawn(&pid, sh, &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(input);
  if (failed != 0) {
    spdlog::error("{} not run for job {}: {}", flag, job, strerror(failed));
    return;
  }
  spdlog::warn("job {} {}: ran {} (pid {})", job, what, flag, pid);
  hooks_.push_back(pid);
  ++hooks_run_;
}

}  // namespace meridian
