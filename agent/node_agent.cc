#include "agent/node_agent.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "abi/agent_dir.h"
#include "absl/strings/str_cat.h"
#include "agent/agent_metrics.h"
#include "agent/agent_time.h"
#include "agent/errno_status.h"
#include "agent/thread_stacks.h"
#include "grpcpp/grpcpp.h"
#include "spdlog/spdlog.h"
#include "wire/batch_spans.h"

namespace meridian {
namespace {

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

}  // namespace

InvalidProcess NodeAgent::InvalidOf(const ProbeSession& session) {
  InvalidProcess p;
  p.pid = session.pid();
  p.records = session.invalid_records();
  CopyField(session.job().c_str(), p.job, sizeof(p.job));
  CopyField(session.first_invalid().c_str(), p.first, sizeof(p.first));
  return p;
}

NodeAgent::NodeAgent(NodeAgentOptions options)
    : options_(std::move(options)),
      agent_id_(absl::StrCat(options_.node, "/agent-", getpid(), "-",
                             ClockNs(CLOCK_REALTIME))),
      builder_(agent_id_) {}

absl::StatusOr<std::unique_ptr<NodeAgent>> NodeAgent::Start(
    NodeAgentOptions options) {
  if (options.node.empty()) options.node = HostName();
  if (options.collector.empty()) {
    return absl::InvalidArgumentError("no collector address (--collector)");
  }
  std::unique_ptr<NodeAgent> agent(new NodeAgent(std::move(options)));
  // Signals become events of the loop; blocked before any thread starts so
  // that every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  agent->signal_fd_ = signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
  agent->wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  agent->epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (agent->signal_fd_ < 0 || agent->wake_fd_ < 0 || agent->epoll_fd_ < 0) {
    return ErrnoStatus("setting up the agent's event loop");
  }
  if (absl::Status s = agent->Listen(); !s.ok()) return s;
  auto spool =
      Spool::Open(agent->options_.spool_dir, agent->options_.spool_max_bytes);
  if (!spool.ok()) return spool.status();
  agent->spool_ = std::move(*spool);
  for (const std::string& what : agent->spool_->corrupt_files()) {
    spdlog::error("spool file set aside as .corrupt, its spans lost: {}", what);
  }
  int wake = agent->wake_fd_;
  auto made =
      ClientChannel(agent->options_.collector, agent->options_.security);
  if (!made.ok()) return made.status();
  std::shared_ptr<grpc::Channel> channel = *made;
  agent->clock_sync_ = std::make_unique<ClockSync>(
      channel, agent->options_.clock_skew, agent->options_.clock_sync_ms);
  ClockSync* clock = agent->clock_sync_.get();
  agent->time_ = std::make_unique<NodeTimeMap>(
      NodeTimeMap::Sampler([clock] { return clock->Now(); }));
  if (agent->options_.stack_after_ms > 0) {
    agent->stacks_ = std::make_unique<StackReader>();
  }
  if (agent->options_.node_counters_ms > 0) {
    agent->node_counters_ =
        std::make_unique<NodeCounterReader>(NodeCounterReader::Options{});
  }
  agent->relay_ = std::make_unique<TraceRelay>(
      channel, agent->agent_id_, agent->options_.node,
      agent->options_.control_poll_ms, wake);
  agent->sender_ = std::make_unique<BatchSender>(
      channel, agent->spool_.get(),
      [wake] {
        uint64_t one = 1;
        (void)!write(wake, &one, sizeof(one));
      },
      absl::Milliseconds(agent->options_.ack_timeout_ms));
  const std::vector<Spool::Recovered>& recovered = agent->spool_->recovered();
  if (!recovered.empty()) {
    spdlog::info("resending {} batches found in the spool {}", recovered.size(),
                 agent->spool_->dir());
  }
  for (const Spool::Recovered& entry : recovered) {
    agent->sender_->EnqueueSpooled(entry);
  }
  for (int fd : {agent->listen_fd_, agent->wake_fd_, agent->signal_fd_}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    epoll_ctl(agent->epoll_fd_, EPOLL_CTL_ADD, fd, &event);
  }
  if (!agent->options_.metrics.empty()) {
    NodeAgent* a = agent.get();
    auto metrics = MetricsEndpoint::Start(agent->options_.metrics,
                                          [a] { return a->CollectMetrics(); });
    if (!metrics.ok()) return metrics.status();
    agent->metrics_ = std::move(*metrics);
    agent->Publish();
  }
  return agent;
}

void NodeAgent::Publish() {
  Published p;
  p.counters = counters();
  const BatchSender::State sender = sender_->state();
  p.spool_bytes = spool_->bytes();
  p.queued_batches = sender.queued_batches;
  p.queued_spans = sender.queued_spans;
  p.memory_batches = sender.memory_batches;
  p.collector_unreachable = sender.unreachable;
  p.clients = clients_.size();
  p.invalid = InvalidProcesses();
  absl::MutexLock lock(&published_mu_);
  published_ = p;
}

std::vector<prometheus::MetricFamily> NodeAgent::CollectMetrics() const {
  absl::MutexLock lock(&published_mu_);
  return AgentMetricFamilies(published_);
}

void NodeAgent::Stop() {
  uint64_t one = 1;
  stopping_ = true;
  (void)!write(wake_fd_, &one, sizeof(one));
}

double NodeAgent::Drain(const std::vector<ProbeSession*>& ending) {
  double fill = 0;
  bool emptied = false;
  // Sampled before reading. The map only ever bends at a sample's time,
  // which lies after every record read before the sample was taken; so
  // each record's times go through the same function whichever drain
  // reads it.
  UpdateTimeMap();
  // Bounded, so that a process recording faster than we read cannot keep
  // the loop here.
  for (int round = 0; round < 64; ++round) {
    size_t read = 0;
    for (auto& [fd, client] : clients_) {
      ProbeSession* session = client.session.get();
      if (session == nullptr) continue;
      const size_t room = options_.max_batch_spans - builder_.spans();
      const size_t n = session->Read(&builder_, *time_, room);
      if (n > 0) {
        read += n;
        in_batch_.push_back(session);
        fill =
            std::max(fill, static_cast<double>(n) / session->ring_capacity());
      }
      if (builder_.spans() >= options_.max_batch_spans) SendBatch();
    }
    if (read == 0) {
      emptied = true;
      break;
    }
  }
  // Processes that exited, all of them read: marked ended in the batch
  // that carries their last records (or alone, if it holds none). A ring
  // not emptied by the bound above gets no mark (its job waits for quiet).
  for (ProbeSession* session : ending) {
    if (emptied && session->MarkEnded(&builder_)) in_batch_.push_back(session);
  }
  AddNodeCounters(!ending.empty() || stopping_);
  SendBatch();
  // What was read is in memory now (sent or spooled). A ring still over
  // half full is not left waiting for the collector's acknowledgement of
  // it: its slots are released at once, so that the process keeps
  // recording (a slow acknowledgement would otherwise fill it, and a full
  // ring drops); below that they stay until the ack, for a successor agent.
  for (auto& [fd, client] : clients_) {
    ProbeSession* session = client.session.get();
    if (session == nullptr) continue;
    counters_.released_early +=
        session->ReleaseOver(session->ring_capacity() / 2);
  }
  return fill;
}

void NodeAgent::SampleActivity() {
  UpdateTimeMap();
  const int64_t now = clock_sync_->Now();
  std::vector<v1::ProcessActivity> activity;
  std::set<StackReader::Thread> alive;
  for (const auto& [fd, client] : clients_) {
    if (client.session == nullptr) continue;
    v1::ProcessActivity* process = &activity.emplace_back();
    client.session->SampleActivity(*time_, now, process);
    if (stacks_ != nullptr) AddStacks(process, &alive);
  }
  if (stacks_ != nullptr) stacks_->Keep(alive);  // threads gone: let go
  relay_->SetActivity(std::move(activity));
}

void NodeAgent::SampleNode() {
  const int64_t now = clock_sync_->Now();
  const int64_t last = std::exchange(last_counters_ns_, now);
  std::vector<NodeCounter> counters = node_counters_->Sample(now);
  if (now - last > int64_t{3} * options_.node_counters_ms * 1000000) {
    // The first since the agent was idle: its rates would average over the
    // idle spell. It only starts the next sample's.
    for (const std::string& why : node_counters_->skipped()) {
      spdlog::info("node counters: {}", why);
    }
    counters.clear();
  }
  std::vector<v1::NodeCounterValue> values;
  for (const NodeCounter& c : counters) {
    v1::NodeCounterValue& v = values.emplace_back();
    v.set_name(c.name);
    v.set_value(c.value);
  }
  relay_->SetNodeCounters(std::move(values), now);
  if (counters.empty()) return;
  pending_counters_.push_back({now, std::move(counters)});
  if (pending_counters_.size() > kMaxPendingSamples) {
    pending_counters_.pop_front();
  }
}

void NodeAgent::AddNodeCounters(bool force) {
  if (pending_counters_.empty()) return;
  const int64_t held_ns = clock_sync_->Now() - pending_counters_.front().ns;
  if (!force && in_batch_.empty() &&
      held_ns <
          int64_t{kMaxPendingSamples} * options_.node_counters_ms * 1000000) {
    return;  // ride along with the next batch of records
  }
  // Each job's process of the lowest rank here (unknown ranks last).
  std::map<std::string, ProbeSession*> owners;
  const auto before = [](const ProbeSession* a, const ProbeSession* b) {
    return std::make_tuple(a->rank() < 0, a->rank(), a->pid()) <
           std::make_tuple(b->rank() < 0, b->rank(), b->pid());
  };
  for (const auto& [fd, client] : clients_) {
    ProbeSession* session = client.session.get();
    if (session == nullptr) continue;
    auto [it, inserted] = owners.try_emplace(session->job(), session);
    if (!inserted && before(session, it->second)) it->second = session;
  }
  size_t spans = 0;  // the pending samples' spans for one process
  for (const PendingCounters& sample : pending_counters_) {
    spans += sample.counters.size();
  }
  for (const auto& [job, session] : owners) {
    if (builder_.spans() + spans > options_.max_batch_spans) SendBatch();
    for (const PendingCounters& sample : pending_counters_) {
      session->AddNodeCounters(&builder_, sample.ns, sample.counters);
    }
    in_batch_.push_back(session);
  }
  pending_counters_.clear();
}

void NodeAgent::AddStacks(v1::ProcessActivity* process,
                          std::set<StackReader::Thread>* alive) {
  const int64_t after_ns = int64_t{options_.stack_after_ms} * 1000000;
  for (v1::ThreadActivity& t : *process->mutable_threads()) {
    const bool stuck =
        t.call().empty() ? t.idle_ns() >= after_ns : t.call_ns() >= after_ns;
    if (!stuck) continue;
    const StackReader::Thread thread(process->pid(), t.tid());
    alive->insert(thread);
    // The episode: what it is stuck in (the same call, or none since the
    // same one).
    std::optional<StackReader::Stack> stack = stacks_->Get(
        thread, absl::StrCat(t.calls(), " ", t.call()), t.call().empty());
    if (!stack) continue;  // read on the stacks' thread; next sample
    for (const std::string& frame : stack->frames) t.add_stack(frame);
    for (const std::string& frame : stack->python_frames) {
      t.add_python_stack(frame);
    }
    t.set_stack_error(stack->error);
  }
}

void NodeAgent::UpdateTimeMap() {
  const SlewedClockMap& wall = time_->wall_map();
  const uint64_t steps = wall.steps();
  time_->Update();
  if (wall.steps() > steps) {
    spdlog::warn(
        "the node's clock stepped forward by over 100 ms: spans recorded "
        "from now on jump with it (docs/clocks.md)");
  }
}

// While the collector acknowledges within the window, a batch goes from the
// rings to the wire and nowhere else: its records stay in the rings until
// the ack (Release). Otherwise it is written to the spool first, after
// every batch still only in memory, and its records are released at once.
void NodeAgent::SendBatch() {
  if (in_batch_.empty()) return;
  std::sort(in_batch_.begin(), in_batch_.end());
  in_batch_.erase(std::unique(in_batch_.begin(), in_batch_.end()),
                  in_batch_.end());
  Pending pending;
  for (ProbeSession* session : in_batch_) session->Positions(&pending.ends);
  in_batch_.clear();
  const uint32_t node = builder_.String(options_.node);
  v1::Batch batch = builder_.Take();
  // The next batch declares again what it uses: the builder holds the
  // processes and tracks of one batch, not of every process since start.
  builder_.ForgetDeclarations();
  v1::ClockModel clock = clock_sync_->Model();
  if (clock.reference_ns() != 0) {
    clock.set_node(node);
    *batch.mutable_clock() = clock;
  }
  const uint64_t spans = SpanCount(batch);
  pending.seq = batch.batch_seq();
  pending_.push_back(std::move(pending));
  const BatchSender::State sender = sender_->state();
  const auto count_jobs = [&](uint64_t AgentCounters::*field) {
    for (const auto& [job, n] : SpansByJob(batch)) {
      TallyOf(job).*field += static_cast<uint64_t>(n);
    }
  };
  if (!stopping_ && !sender.unreachable &&
      sender.memory_batches < options_.ack_window) {
    counters_.spans_received += spans;
    count_jobs(&AgentCounters::spans_received);
    sender_->Enqueue(0, std::move(batch));
    return;
  }
  SpillMemory();
  auto id = spool_->Append(batch, pending_.back().ends);
  if (id.ok()) {
    counters_.spans_received += spans;
    count_jobs(&AgentCounters::spans_received);
    sender_->Enqueue(*id, std::move(batch));
  } else {
    // Full spool (or disk error): the spans are dropped, counted, and the
    // rings are released so the probes keep recording.
    counters_.spans_dropped += spans;
    count_jobs(&AgentCounters::spans_dropped);
    spdlog::error("{}", std::string(id.status().message()));
  }
  Release(pending_.back().seq);
}

void NodeAgent::SpillMemory() {
  absl::Status status = sender_->Spill(
      [this](const v1::Batch& batch) -> absl::StatusOr<uint64_t> {
        for (const Pending& p : pending_) {
          if (p.seq == batch.batch_seq()) return spool_->Append(batch, p.ends);
        }
        return spool_->Append(batch, {});
      },
      [this](uint64_t seq) { Release(seq); });
  if (!status.ok()) {
    // Their records stay in the rings: a later spill, or the collector's
    // return, takes them; a successor agent would read them again.
    spdlog::error("cannot spool: {}", std::string(status.message()));
  }
}

void NodeAgent::Release(uint64_t seq) {
  for (Pending& p : pending_) {
    if (p.seq == seq) p.done = true;
  }
  // Rings are released in batch order: a ring's records up to the end of
  // the oldest batch not yet done, never past it.
  while (!pending_.empty() && pending_.front().done) {
    for (const RingPosition& end : pending_.front().ends) {
      for (auto& [fd, client] : clients_) {
        ProbeSession* session = client.session.get();
        if (session != nullptr && session->incarnation() == end.incarnation) {
          session->CommitTo(end.ring, end.end);
        }
      }
    }
    pending_.pop_front();
  }
}

void NodeAgent::Reconcile() {
  for (uint64_t seq : sender_->TakeDelivered()) Release(seq);
  const BatchSender::State sender = sender_->state();
  if (sender.unreachable && sender.memory_batches > 0) SpillMemory();
}

AgentCounters NodeAgent::counters() const {
  AgentCounters c = counters_;
  const BatchSender::State sender = sender_->state();
  c.spans_sent = sender.sent_spans;
  c.spans_spooled = sender.spooled_spans;
  c.spool_writes = spool_->writes();
  c.spans_rejected = sender.rejected_spans;
  c.spans_dropped += dropped_by_closed_sessions_ + sender.lost_spans;
  c.spool_corrupt = spool_->corrupt_files().size();
  c.spans_invalid = sender.invalid_spans + invalid_by_closed_sessions_;
  for (const auto& [fd, client] : clients_) {
    if (client.session == nullptr) continue;
    c.spans_dropped += client.session->dropped();
    c.spans_invalid += client.session->invalid_records();
  }
  return c;
}

AgentCounters& NodeAgent::TallyOf(const std::string& job) {
  auto it = job_tallies_.find(job);
  if (it == job_tallies_.end()) {
    if (job_tallies_.size() >= kJobCounters) {
      // The one counted least recently goes.
      auto oldest = job_tallies_.begin();
      for (auto j = job_tallies_.begin(); j != job_tallies_.end(); ++j) {
        if (j->second.used < oldest->second.used) oldest = j;
      }
      job_tallies_.erase(oldest);
    }
    it = job_tallies_.emplace(job, JobTally()).first;
  }
  it->second.used = ++tally_clock_;
  return it->second.counters;
}

AgentCounters NodeAgent::CountersOf(const std::string& job) const {
  AgentCounters c;
  auto it = job_tallies_.find(job);
  if (it != job_tallies_.end()) c = it->second.counters;
  const BatchSender::JobDelivery delivery = sender_->job(job);
  c.spans_sent = delivery.sent;
  c.spans_rejected = delivery.rejected;
  c.spans_spooled = delivery.spooled;
  c.spool_corrupt = spool_->corrupt_files().size();
  for (const auto& [fd, client] : clients_) {
    if (client.session == nullptr || client.session->job() != job) continue;
    c.spans_dropped += client.session->dropped();
    c.spans_invalid += client.session->invalid_records();
  }
  return c;
}

std::vector<InvalidProcess> NodeAgent::InvalidProcesses() const {
  std::vector<InvalidProcess> out;
  for (const auto& [fd, client] : clients_) {
    if (client.session != nullptr && client.session->invalid_records() > 0 &&
        out.size() < FlushReply::kInvalidProcesses) {
      out.push_back(InvalidOf(*client.session));
    }
  }
  for (const InvalidProcess& ended : ended_invalid_) {
    if (out.size() < FlushReply::kInvalidProcesses) out.push_back(ended);
  }
  return out;
}

FlushReply NodeAgent::MakeReply(FlushReply::State state,
                                const std::optional<std::string>& job) const {
  FlushReply reply;
  reply.state = state;
  reply.counters = job ? CountersOf(*job) : counters();
  std::vector<InvalidProcess> invalid = InvalidProcesses();
  if (job) {
    invalid.erase(std::remove_if(invalid.begin(), invalid.end(),
                                 [&](const InvalidProcess& p) {
                                   // p.job is cut to its field's size.
                                   return job->substr(0, sizeof(p.job) - 1) !=
                                          p.job;
                                 }),
                  invalid.end());
  }
  reply.invalid_processes = static_cast<uint32_t>(invalid.size());
  std::copy(invalid.begin(), invalid.end(), reply.invalid);
  CopyField(options_.collector.c_str(), reply.collector,
            sizeof(reply.collector));
  CopyField(spool_->dir().c_str(), reply.spool, sizeof(reply.spool));
  return reply;
}

void NodeAgent::AnswerFlushes(bool final) {
  if (flushes_.empty()) return;
  const BatchSender::State sender = sender_->state();
  const int64_t now = NowMs();
  for (size_t i = 0; i < flushes_.size();) {
    FlushReply::State state;
    if (sender.queued_batches == 0) {
      state = FlushReply::kDelivered;
    } else if (final ||
               (sender.unreachable && !flushes_[i].wait_for_collector)) {
      state = FlushReply::kSpooled;
    } else if (now >= flushes_[i].deadline_ms) {
      state = FlushReply::kTimedOut;
    } else {
      ++i;
      continue;
    }
    FlushReply reply = MakeReply(state, flushes_[i].job);
    SendMessage(flushes_[i].fd, &reply, sizeof(reply), -1);
    flushes_.erase(flushes_.begin() + i);
  }
}

void NodeAgent::TakeInQueued() {
  Accept();
  std::vector<int> fds;
  for (const auto& [fd, client] : clients_) fds.push_back(fd);
  std::vector<int> ended;
  for (int fd : fds) {
    auto it = clients_.find(fd);
    if (it != clients_.end() && !Serve(&it->second)) ended.push_back(fd);
  }
  Close(ended);
}

uint32_t NodeAgent::Trace(const std::string& job, uint32_t steps,
                          uint32_t seconds) {
  uint32_t processes = 0;
  for (auto& [fd, client] : clients_) {
    if (client.session != nullptr &&
        (job.empty() || client.session->job() == job)) {
      client.session->RequestTrace(steps, seconds);
      ++processes;
    }
  }
  return processes;
}

void NodeAgent::ApplyTraces() {
  std::vector<v1::TraceOrder> orders = relay_->Take();
  if (orders.empty() && local_traces_.empty()) return;
  // A request covers every process that registered before it was made
  // (`meridian trace` after the job said it started): take those in first.
  TakeInQueued();
  for (const v1::TraceOrder& order : orders) {
    const uint32_t processes =
        Trace(order.job(), order.steps(), order.seconds());
    spdlog::info("trace order {} (job \"{}\"): {} processes", order.id(),
                 order.job(), processes);
    relay_->Applied(order.id(), processes);
  }
  // TakeInQueued may have added requests: the loop covers them too.
  for (size_t i = 0; i < local_traces_.size(); ++i) {
    const LocalTrace trace = local_traces_[i];
    TraceReply reply;
    reply.processes = Trace(trace.job, trace.steps, trace.seconds);
    if (trace.fd >= 0) SendMessage(trace.fd, &reply, sizeof(reply), -1);
  }
  local_traces_.clear();
}

// The drain period adapts to the rings' fill: it is chosen so that a ring
// fills to about a quarter between drains, between --drain-ms and
// --max-drain-ms, growing at most twofold at a time. A job recording little
// is read in a few large batches; an idle agent sleeps.
int NodeAgent::NextDrainPeriod(int period, double fill) const {
  const double target = 0.25;
  double next = fill <= 0 ? 2.0 * period : period * target / fill;
  next = std::min(next, 2.0 * period);
  next = std::max<double>(next, options_.drain_ms);
  next = std::min<double>(next,
                          std::max(options_.drain_ms, options_.max_drain_ms));
  return static_cast<int>(next);
}

int NodeAgent::WaitMs(int64_t next_drain_ms) const {
  int64_t timeout = next_drain_ms - NowMs();
  for (const PendingFlush& f : flushes_) {
    timeout = std::min(timeout, f.deadline_ms - NowMs());
  }
  for (const auto& [fd, client] : clients_) {
    if (client.silent_until_ms != 0) {
      timeout = std::min(timeout, client.silent_until_ms - NowMs());
    }
  }
  if (!clients_.empty()) timeout = std::min(timeout, next_sample_ms_ - NowMs());
  if (!clients_.empty() && node_counters_ != nullptr) {
    timeout = std::min(timeout, next_counters_ms_ - NowMs());
  }
  return static_cast<int>(std::max<int64_t>(timeout, 0));
}

AgentCounters NodeAgent::Run() {
  int period = options_.drain_ms;
  int64_t next_drain = NowMs() + period;
  while (!stopping_) {
    epoll_event events[64];
    const int n = epoll_wait(epoll_fd_, events, 64, WaitMs(next_drain));
    bool flush_requested = false;
    std::vector<int> ended;
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == listen_fd_) {
        Accept();
        // A process that just started may record at any rate: drain at the
        // shortest period until the rings' fill says otherwise (an idle
        // agent sits at the longest, which a fast process overruns).
        period = options_.drain_ms;
        next_drain = std::min(next_drain, NowMs() + period);
      } else if (fd == wake_fd_) {
        uint64_t count;
        (void)!read(wake_fd_, &count, sizeof(count));
      } else if (fd == signal_fd_) {
        signalfd_siginfo info;
        while (read(signal_fd_, &info, sizeof(info)) == sizeof(info)) {
          spdlog::info("signal {}: stopping", info.ssi_signo);
          stopping_ = true;
        }
      } else if (auto it = clients_.find(fd); it != clients_.end()) {
        const size_t before = flushes_.size();
        if (!Serve(&it->second)) ended.push_back(fd);
        flush_requested |= flushes_.size() > before;
      }
    }
    Close(ended);
    if (flush_requested) {
      // A flush covers every process that connected before it was sent.
      TakeInQueued();
      Drain();
      next_drain = NowMs() + period;
    }
    ApplyTraces();
    CloseSilent();
    if (drain_soon_) {
      // A ring is half full: read now, and at the shortest period until
      // the rings' fill says otherwise.
      drain_soon_ = false;
      period = options_.drain_ms;
      next_drain = NowMs();
    }
    // A sample drains first: the steps ended by now reach its report
    // (agent/step_times.h), not the next one.
    const bool sample = NowMs() >= next_sample_ms_;
    if (sample || NowMs() >= next_drain) {
      period = NextDrainPeriod(period, Drain());
      next_drain = NowMs() + period;
    }
    if (sample) {
      SampleActivity();
      next_sample_ms_ = NowMs() + options_.control_poll_ms;
    }
    if (node_counters_ != nullptr && !clients_.empty() &&
        NowMs() >= next_counters_ms_) {
      SampleNode();
      next_counters_ms_ = NowMs() + options_.node_counters_ms;
    }
    Reconcile();
    AnswerFlushes(false);
    if (metrics_ != nullptr) Publish();
    if (options_.exit_when_idle && had_clients_ && clients_.empty()) {
      // A connection waiting to be accepted (a `meridian run` starting just
      // as the last one ended) keeps the agent up.
      Accept();
      const BatchSender::State sender = sender_->state();
      if (clients_.empty() &&
          (sender.queued_batches == 0 || sender.unreachable)) {
        break;
      }
    }
  }
  return Finish();
}

AgentCounters NodeAgent::Finish() {
  Drain();
  // Give the sender the grace to deliver what is left; the spool keeps it
  // otherwise (Stop cancels the round still waiting on the collector).
  const int64_t deadline = NowMs() + kStopGraceMs;
  while (NowMs() < deadline) {
    Reconcile();
    const BatchSender::State sender = sender_->state();
    if (sender.queued_batches == 0 || sender.unreachable) break;
    epoll_event event;
    epoll_wait(epoll_fd_, &event, 1, 100);
    uint64_t count;
    (void)!read(wake_fd_, &count, sizeof(count));
  }
  // Nothing is left only in memory: what was not delivered is spooled.
  sender_->Stop();
  Reconcile();
  SpillMemory();
  AnswerFlushes(true);
  AgentCounters c = counters();
  spdlog::info(
      "agent stopped: {} processes, {} spans received, {} sent, {} spooled, "
      "{} dropped, {} rejected, {} invalid",
      c.processes, c.spans_received, c.spans_sent, c.spans_spooled,
      c.spans_dropped, c.spans_rejected, c.spans_invalid);
  return c;
}

}  // namespace meridian
