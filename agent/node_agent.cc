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

#include "absl/strings/str_cat.h"
#include "agent/agent_metrics.h"
#include "capture/probe/agent_dir.h"
#include "grpcpp/grpcpp.h"
#include "spdlog/spdlog.h"
#include "wire/batch_spans.h"

namespace meridian {
namespace {

int64_t Clock(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t NowMs() { return Clock(CLOCK_MONOTONIC) / 1000000; }

InvalidProcess InvalidOf(const ProbeSession& session) {
  InvalidProcess p;
  p.pid = session.pid();
  p.records = session.invalid_records();
  CopyField(session.job().c_str(), p.job, sizeof(p.job));
  CopyField(session.first_invalid().c_str(), p.first, sizeof(p.first));
  return p;
}

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
}

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

}  // namespace

NodeAgent::NodeAgent(NodeAgentOptions options)
    : options_(std::move(options)),
      agent_id_(absl::StrCat(options_.node, "/agent-", getpid(), "-",
                             Clock(CLOCK_REALTIME))),
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
    return Errno("setting up the agent's event loop");
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

absl::Status NodeAgent::Listen() {
  const std::string& path = options_.socket;
  sockaddr_un address{};
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket path \"", path, "\" is empty or longer than ",
                     sizeof(address.sun_path) - 1, " bytes"));
  }
  const std::string name = path.substr(path.rfind('/') + 1);  // npos + 1: 0
  std::string error;
  dir_fd_ = OpenPrivateDir(DirOf(path), options_.shared_gid, &error);
  if (dir_fd_ < 0) return absl::FailedPreconditionError(error);
  const std::string lock_name = name + ".lock";
  lock_fd_ = openat(dir_fd_, lock_name.c_str(),
                    O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) return Errno(absl::StrCat("opening ", path, ".lock"));
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return absl::AlreadyExistsError(
        absl::StrCat("another meridian-agent already serves ", path,
                     " (it holds ", path, ".lock)"));
  }
  // A socket file left by an agent that was killed.
  unlinkat(dir_fd_, name.c_str(), 0);
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  listen_fd_ =
      socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  address.sun_family = AF_UNIX;
  strcpy(address.sun_path, path.c_str());
  if (listen_fd_ < 0 ||
      bind(listen_fd_, reinterpret_cast<sockaddr*>(&address),
           sizeof(address)) != 0 ||
      listen(listen_fd_, 512) != 0) {
    return Errno(absl::StrCat("listening on ", path));
  }
  const bool shared = options_.shared_gid != static_cast<gid_t>(-1);
  if ((shared && fchownat(dir_fd_, name.c_str(), geteuid(), options_.shared_gid,
                          AT_SYMLINK_NOFOLLOW) != 0) ||
      fchmodat(dir_fd_, name.c_str(), shared ? 0660 : 0600, 0) != 0) {
    return Errno(absl::StrCat("setting the mode of ", path));
  }
  return absl::OkStatus();
}

NodeAgent::~NodeAgent() {
  relay_.reset();
  sender_.reset();
  for (auto& [fd, client] : clients_) close(fd);
  for (int fd : {listen_fd_, epoll_fd_, wake_fd_, signal_fd_}) {
    if (fd >= 0) close(fd);
  }
  if (listen_fd_ >= 0) unlink(options_.socket.c_str());
  for (int fd : {lock_fd_, reserve_fd_, dir_fd_}) {
    if (fd >= 0) close(fd);
  }
}

void NodeAgent::Stop() {
  uint64_t one = 1;
  stopping_ = true;
  (void)!write(wake_fd_, &one, sizeof(one));
}

void NodeAgent::Accept() {
  for (;;) {
    int fd =
        accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) ShedOne();
      return;
    }
    uid_t uid = 0;
    gid_t gid = 0;
    pid_t pid = 0;
    if (!PeerCredentials(fd, &uid, &gid, &pid) ||
        !PeerAllowed(geteuid(), options_.shared_gid, uid, gid,
                     options_.shared_gid != static_cast<gid_t>(-1) &&
                         PeerInGroup(fd, options_.shared_gid))) {
      Refuse(fd, "another user's process", uid, pid);
      continue;
    }
    if (clients_.size() >= options_.max_connections) {
      Refuse(fd, "over --max-connections", uid, pid);
      continue;
    }
    if (uid != geteuid() && uid != 0) {
      const size_t cap =
          options_.max_connections_per_user > 0
              ? options_.max_connections_per_user
              : std::max<size_t>(1, options_.max_connections / 2);
      size_t held = 0;
      for (const auto& [other, client] : clients_) held += client.uid == uid;
      if (held >= cap) {
        Refuse(fd, "over --max-connections-per-user", uid, pid);
        continue;
      }
    }
    clients_[fd] = Client{fd, nullptr, NowMs() + options_.idle_timeout_ms, uid};
    had_clients_ = true;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
  }
}

void NodeAgent::ShedOne() {
  if (reserve_fd_ >= 0) close(reserve_fd_);
  const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
  if (fd >= 0) PeerCredentials(fd, &uid, &gid, &pid);
  Refuse(fd, "out of file descriptors", uid, pid);
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void NodeAgent::Refuse(int fd, const char* why, uid_t uid, pid_t pid) {
  if (fd >= 0) close(fd);
  // Said for the first few and then every 1000th: a flood must not flood
  // the log too.
  const uint64_t n = ++counters_.connections_refused;
  if (n <= 5 || n % 1000 == 0) {
    spdlog::warn("refused connection {} ({}: uid {}, pid {})", n, why, uid,
                 pid);
  }
}

bool NodeAgent::Serve(Client* client) {
  for (;;) {
    alignas(8) char message[1024];
    int fd = -1;
    const long n = ReceiveMessage(client->fd, message, sizeof(message), &fd);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n <= 0) return false;
    client->silent_until_ms = 0;
    AgentRequest request;
    const bool known =
        DecodeAgentRequest(message, static_cast<size_t>(n), &request);
    if (known && request.type == AgentMessage::kProbeHello &&
        client->session == nullptr) {
      const ProbeHello& hello = request.hello;
      auto session = ProbeSession::Open(hello, fd, options_.node);
      if (!session.ok()) {
        spdlog::warn("refused a process: {}",
                     std::string(session.status().message()));
        return false;
      }
      client->session = std::move(*session);
      client->session->set_symbolizer(&symbolizer_);
      for (const auto& [key, end] : spool_->recovered_positions()) {
        if (key.first == client->session->incarnation()) {
          client->session->SkipTo(key.second, end);
        }
      }
      ++counters_.processes;
      ++TallyOf(client->session->job()).processes;
      spdlog::info("process {} (job \"{}\", rank {}) registered", hello.pid,
                   client->session->job(), hello.rank);
      continue;
    }
    if (fd >= 0) close(fd);
    if (known && request.type == AgentMessage::kProbeIdentity &&
        client->session != nullptr) {
      client->session->SetIdentity(request.identity.rank,
                                   request.identity.local_rank,
                                   request.identity.world_size);
    } else if (known && request.type == AgentMessage::kDrainSoon &&
               client->session != nullptr) {
      drain_soon_ = true;
    } else if (known && request.type == AgentMessage::kLauncherHello &&
               client->session == nullptr) {
      // A launcher's connection: no longer silent, nothing to answer.
    } else if (known && request.type == AgentMessage::kFlushRequest) {
      flushes_.push_back(
          {client->fd, NowMs() + static_cast<int64_t>(request.flush.timeout_ms),
           request.flush.wait_for_collector != 0, std::nullopt});
    } else if (known && request.type == AgentMessage::kJobFlushRequest) {
      const JobFlushRequest& flush = request.job_flush;
      flushes_.push_back(
          {client->fd, NowMs() + static_cast<int64_t>(flush.timeout_ms),
           flush.wait_for_collector != 0, std::string(flush.job)});
    } else if (known && request.type == AgentMessage::kTraceRequest) {
      local_traces_.push_back({client->fd, request.trace.job,
                               request.trace.steps, request.trace.seconds});
    } else {
      spdlog::warn(
          "closing a connection that sent an unknown message (or a hello of "
          "another protocol version)");
      return false;
    }
  }
}

void NodeAgent::CloseSilent() {
  const int64_t now = NowMs();
  std::vector<int> silent;
  for (const auto& [fd, client] : clients_) {
    if (client.silent_until_ms != 0 && now >= client.silent_until_ms) {
      silent.push_back(fd);
    }
  }
  for (int fd : silent) {
    uid_t uid = 0;
    gid_t gid = 0;
    pid_t pid = 0;
    PeerCredentials(fd, &uid, &gid, &pid);
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    clients_.erase(fd);
    Refuse(fd, "sent nothing within --idle-timeout-ms", uid, pid);
  }
}

void NodeAgent::Close(const std::vector<int>& fds) {
  bool sessions = false;
  for (int fd : fds) {
    auto it = clients_.find(fd);
    sessions |= it != clients_.end() && it->second.session != nullptr;
  }
  // The processes exited (or crashed): everything they recorded is in
  // their rings; take it all before letting the memory go.
  if (sessions) Drain();
  for (int fd : fds) {
    auto it = clients_.find(fd);
    if (it == clients_.end()) continue;
    if (it->second.session != nullptr) {
      const ProbeSession& session = *it->second.session;
      dropped_by_closed_sessions_ += session.dropped();
      invalid_by_closed_sessions_ += session.invalid_records();
      AgentCounters& tally = TallyOf(session.job());
      tally.spans_dropped += session.dropped();
      tally.spans_invalid += session.invalid_records();
      if (session.invalid_records() > 0) {
        ended_invalid_.push_front(InvalidOf(session));
        if (ended_invalid_.size() > FlushReply::kInvalidProcesses) {
          ended_invalid_.pop_back();
        }
        spdlog::warn(
            "process {} (job {}) ended; {} of its records were invalid and "
            "dropped, the first: {}",
            session.pid(), session.job(), session.invalid_records(),
            session.first_invalid());
      } else {
        spdlog::info("process {} ended", session.pid());
      }
    }
    for (size_t i = 0; i < flushes_.size();) {
      if (flushes_[i].fd == fd) {
        flushes_.erase(flushes_.begin() + i);
      } else {
        ++i;
      }
    }
    for (LocalTrace& trace : local_traces_) {
      if (trace.fd == fd) trace.fd = -1;  // applied, but not answered
    }
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    close(fd);
    clients_.erase(it);
  }
}

double NodeAgent::Drain() {
  double fill = 0;
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
    if (read == 0) break;
  }
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

AgentCounters NodeAgent::Run() {
  int period = options_.drain_ms;
  int64_t next_drain = NowMs() + period;
  while (!stopping_) {
    int64_t timeout = next_drain - NowMs();
    for (const PendingFlush& f : flushes_) {
      timeout = std::min(timeout, f.deadline_ms - NowMs());
    }
    for (const auto& [fd, client] : clients_) {
      if (client.silent_until_ms != 0) {
        timeout = std::min(timeout, client.silent_until_ms - NowMs());
      }
    }
    epoll_event events[64];
    const int n = epoll_wait(epoll_fd_, events, 64,
                             static_cast<int>(std::max<int64_t>(timeout, 0)));
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
    if (NowMs() >= next_drain) {
      period = NextDrainPeriod(period, Drain());
      next_drain = NowMs() + period;
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
