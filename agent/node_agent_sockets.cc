// NodeAgent's socket stage: the listening socket, accepting and refusing
// connections, serving each connection's messages, and closing those that
// ended or went silent (node_agent.h).
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "abi/agent_dir.h"
#include "absl/strings/str_cat.h"
#include "agent/agent_time.h"
#include "agent/errno_status.h"
#include "agent/node_agent.h"
#include "spdlog/spdlog.h"

namespace meridian {

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
  // Agents starting on one socket take turns (ranks of a node each start
  // one under `meridian run`): the one that holds `.lock` is listening by
  // the time another finds the lock taken and exits, so that whoever
  // started the loser connects to the winner, not to nothing.
  const std::string starting_name = name + ".starting";
  const int starting = openat(dir_fd_, starting_name.c_str(),
                              O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (starting < 0) {
    return ErrnoStatus(absl::StrCat("opening ", path, ".starting"));
  }
  int locked;
  do {
    locked = flock(starting, LOCK_EX);
  } while (locked != 0 && errno == EINTR);
  absl::Status status = ListenLocked(path, name);
  close(starting);  // the next agent's turn
  return status;
}

absl::Status NodeAgent::ListenLocked(const std::string& path,
                                     const std::string& name) {
  sockaddr_un address{};
  const std::string lock_name = name + ".lock";
  lock_fd_ = openat(dir_fd_, lock_name.c_str(),
                    O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) return ErrnoStatus(absl::StrCat("opening ", path, ".lock"));
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
    return ErrnoStatus(absl::StrCat("listening on ", path));
  }
  const bool shared = options_.shared_gid != static_cast<gid_t>(-1);
  if ((shared && fchownat(dir_fd_, name.c_str(), geteuid(), options_.shared_gid,
                          AT_SYMLINK_NOFOLLOW) != 0) ||
      fchmodat(dir_fd_, name.c_str(), shared ? 0660 : 0600, 0) != 0) {
    return ErrnoStatus(absl::StrCat("setting the mode of ", path));
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
  std::vector<ProbeSession*> ending;
  for (int fd : fds) {
    auto it = clients_.find(fd);
    if (it != clients_.end() && it->second.session != nullptr) {
      ending.push_back(it->second.session.get());
    }
  }
  // The processes exited (or crashed): everything they recorded is in
  // their rings; take it all before letting the memory go, and mark them
  // ended (the collector summarises a job whose processes have all ended
  // at once: collector/job_ends.h).
  if (!ending.empty()) Drain(ending);
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

}  // namespace meridian
