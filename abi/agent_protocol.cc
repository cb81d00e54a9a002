#include "abi/agent_protocol.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "abi/agent_dir.h"

namespace meridian {

void CopyField(const char* s, char* field, size_t size) {
  size_t n = strnlen(s, size - 1);
  memcpy(field, s, n);
  field[n] = '\0';
}

int ConnectAgent(const char* path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof(address.sun_path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(address.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
      0) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  // The memory a process hands over goes only to its own user's agent, or
  // root's: not to a socket another user put in its place.
  uid_t uid;
  gid_t gid;
  pid_t pid;
  if (!PeerCredentials(fd, &uid, &gid, &pid) ||
      (uid != getuid() && uid != geteuid() && uid != 0)) {
    close(fd);
    errno = EACCES;
    return -1;
  }
  return fd;
}

bool SendMessage(int socket, const void* message, size_t bytes, int fd) {
  iovec iov{const_cast<void*>(message), bytes};
  msghdr header{};
  header.msg_iov = &iov;
  header.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (fd >= 0) {
    header.msg_control = control;
    header.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&header);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  ssize_t n;
  do {
    n = sendmsg(socket, &header, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(bytes);
}

bool DecodeAgentRequest(const void* data, size_t size, AgentRequest* out) {
  if (size < sizeof(AgentMessage)) return false;
  memcpy(&out->type, data, sizeof(out->type));
  switch (out->type) {
    case AgentMessage::kProbeHello:
      if (size != sizeof(ProbeHello)) return false;
      memcpy(&out->hello, data, size);
      out->hello.job[sizeof(out->hello.job) - 1] = '\0';
      return out->hello.version == kAgentProtocolVersion;
    case AgentMessage::kProbeIdentity:
      if (size != sizeof(ProbeIdentity)) return false;
      memcpy(&out->identity, data, size);
      return true;
    case AgentMessage::kLauncherHello:
      if (size != sizeof(LauncherHello)) return false;
      memcpy(&out->launcher, data, size);
      return out->launcher.version == kAgentProtocolVersion;
    case AgentMessage::kDrainSoon:
      return size == sizeof(DrainSoon);
    case AgentMessage::kFlushRequest:
      if (size != sizeof(FlushRequest)) return false;
      memcpy(&out->flush, data, size);
      return true;
    case AgentMessage::kJobFlushRequest:
      if (size != sizeof(JobFlushRequest)) return false;
      memcpy(&out->job_flush, data, size);
      out->job_flush.job[sizeof(out->job_flush.job) - 1] = '\0';
      return true;
    case AgentMessage::kTraceRequest:
      if (size != sizeof(TraceRequest)) return false;
      memcpy(&out->trace, data, size);
      out->trace.job[sizeof(out->trace.job) - 1] = '\0';
      return true;
    default:
      return false;
  }
}

long ReceiveMessage(int socket, void* message, size_t max, int* fd) {
  if (fd != nullptr) *fd = -1;
  iovec iov{message, max};
  msghdr header{};
  header.msg_iov = &iov;
  header.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  header.msg_control = control;
  header.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = recvmsg(socket, &header, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&header); c != nullptr;
       c = CMSG_NXTHDR(&header, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const int count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (int i = 0; i < count; ++i) {
      int received;
      memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      // Keep the first; never leak extra descriptors a peer sends.
      if (fd != nullptr && *fd < 0) {
        *fd = received;
      } else {
        close(received);
      }
    }
  }
  return static_cast<long>(n);
}

}  // namespace meridian
