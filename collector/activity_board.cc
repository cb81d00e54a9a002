#include "collector/activity_board.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace meridian {
namespace {

absl::Status CheckStacks(int64_t pid, const v1::ThreadActivity& t) {
  constexpr int kMaxFrames = ActivityBoard::kMaxFrames;
  constexpr size_t kMaxBytes = ActivityBoard::kMaxNameBytes;
  bool long_frame = t.stack_error().size() > kMaxBytes;
  for (const std::string& frame : t.stack()) {
    long_frame |= frame.size() > kMaxBytes;
  }
  for (const std::string& frame : t.python_stack()) {
    long_frame |= frame.size() > kMaxBytes;
  }
  if (t.stack_size() > kMaxFrames || t.python_stack_size() > kMaxFrames ||
      long_frame) {
    return absl::InvalidArgumentError(absl::StrCat(
        "activity: process ", pid, " sends a stack over ", kMaxFrames,
        " frames or a frame or error over ", kMaxBytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CheckSteps(const v1::ProcessActivity& p) {
  if (p.steps_size() > ActivityBoard::kMaxSteps) {
    return absl::InvalidArgumentError(
        absl::StrCat("activity: process ", p.pid(), " with ", p.steps_size(),
                     " steps: at most ", ActivityBoard::kMaxSteps));
  }
  for (const v1::StepTime& s : p.steps()) {
    if (s.dur_ns() < 0 || s.comm_ns() < 0 || s.comm_ns() > s.dur_ns()) {
      return absl::InvalidArgumentError(
          absl::StrCat("activity: process ", p.pid(), "'s step ", s.step(),
                       " lasts ", s.dur_ns(), " ns with ", s.comm_ns(),
                       " ns of communication (0 <= communication <= step)"));
    }
    if (s.peers_size() > ActivityBoard::kMaxStepPeers) {
      return absl::InvalidArgumentError(absl::StrCat(
          "activity: process ", p.pid(), "'s step ", s.step(), " with ",
          s.peers_size(), " peers: at most ", ActivityBoard::kMaxStepPeers));
    }
    for (const v1::PeerTime& peer : s.peers()) {
      if (peer.peer() < 0 || peer.ns() < 0 || peer.bytes() <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "activity: process ", p.pid(), "'s step ", s.step(), ": peer ",
            peer.peer(), " with ", peer.ns(), " ns and ", peer.bytes(),
            " bytes (a rank >= 0, ns >= 0, bytes > 0)"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ActivityBoard::Check(
    const google::protobuf::RepeatedPtrField<v1::ProcessActivity>& report) {
  if (report.size() > kMaxProcesses) {
    return absl::InvalidArgumentError(
        absl::StrCat("activity of ", report.size(), " processes: at most ",
                     kMaxProcesses, " a report"));
  }
  for (const v1::ProcessActivity& p : report) {
    if (p.job().size() > kMaxNameBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("activity: a job name of ", p.job().size(), " bytes"));
    }
    if (absl::Status steps = CheckSteps(p); !steps.ok()) return steps;
    if (p.threads_size() > kMaxThreads) {
      return absl::InvalidArgumentError(
          absl::StrCat("activity: process ", p.pid(), " with ",
                       p.threads_size(), " threads: at most ", kMaxThreads));
    }
    for (const v1::ThreadActivity& t : p.threads()) {
      if (t.call().size() > kMaxNameBytes || t.phase().size() > kMaxNameBytes ||
          t.waits_for().size() > kMaxNameBytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("activity: process ", p.pid(),
                         " names a call, phase or awaited operation over ",
                         kMaxNameBytes, " bytes"));
      }
      if (absl::Status stacks = CheckStacks(p.pid(), t); !stacks.ok()) {
        return stacks;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ActivityBoard::Report(const std::string& agent_id,
                                   const std::string& node,
                                   std::vector<v1::ProcessActivity> processes,
                                   absl::Time now) {
  absl::MutexLock lock(&mutex_);
  for (auto it = agents_.begin(); it != agents_.end();) {
    it =
        now - it->second.received > kForget ? agents_.erase(it) : std::next(it);
  }
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) {
    if (processes.empty()) return absl::OkStatus();  // nothing to follow
    if (agents_.size() >= kMaxAgents) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the collector follows the activity of at most ",
                       kMaxAgents, " agents"));
    }
    it = agents_.emplace(agent_id, Agent{}).first;
  }
  it->second.node = node;
  it->second.received = now;
  it->second.processes = std::move(processes);
  return absl::OkStatus();
}

std::vector<LiveProcess> ActivityBoard::Job(const std::string& job,
                                            absl::Time now) const {
  std::vector<LiveProcess> out;
  absl::MutexLock lock(&mutex_);
  for (const auto& [id, agent] : agents_) {
    for (const v1::ProcessActivity& p : agent.processes) {
      if (p.job() != job) continue;
      LiveProcess& live = out.emplace_back();
      live.node = agent.node;
      live.sampled_ago_ns = absl::ToInt64Nanoseconds(now - agent.received);
      live.activity = p;
    }
  }
  return out;
}

std::vector<std::string> ActivityBoard::Jobs() const {
  std::set<std::string> jobs;
  absl::MutexLock lock(&mutex_);
  for (const auto& [id, agent] : agents_) {
    for (const v1::ProcessActivity& p : agent.processes) jobs.insert(p.job());
  }
  return std::vector<std::string>(jobs.begin(), jobs.end());
}

}  // namespace meridian
