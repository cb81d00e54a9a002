#include "abi/agent_dir.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace meridian {
namespace {

constexpr gid_t kNoGroup = static_cast<gid_t>(-1);

std::string Mode(mode_t mode) {
  char text[8];
  snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

std::string DefaultAgentSocket() {
  if (const char* path = getenv("MERIDIAN_AGENT_SOCKET"); path && *path) {
    return path;
  }
  if (const char* dir = getenv("XDG_RUNTIME_DIR"); dir && *dir) {
    return std::string(dir) + "/meridian/agent.sock";
  }
  const std::string uid = std::to_string(getuid());
  const std::string run_user = "/run/user/" + uid;
  struct stat st;
  if (lstat(run_user.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
      st.st_uid == getuid()) {
    return run_user + "/meridian/agent.sock";
  }
  return "/tmp/meridian-" + uid + "/agent.sock";
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

int OpenPrivateDir(const std::string& dir, gid_t shared_gid,
                   std::string* error) {
  const bool shared = shared_gid != kNoGroup;
  if (mkdir(dir.c_str(), shared ? 0750 : 0700) == 0) {
    if (shared && chown(dir.c_str(), geteuid(), shared_gid) != 0) {
      *error = "giving " + dir + " to group " + std::to_string(shared_gid) +
               ": " + strerror(errno);
      return -1;
    }
  } else if (errno != EEXIST) {
    *error = "creating " + dir + ": " + strerror(errno);
    return -1;
  }
  const int fd =
      open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *error = dir + " is not a directory of its own (" + strerror(errno) +
             "): a link or a file there is refused; remove it";
    return -1;
  }
  struct stat st;
  std::string problem;
  if (fstat(fd, &st) != 0) {
    problem = std::string("cannot be examined: ") + strerror(errno);
  } else if (st.st_uid != geteuid()) {
    problem = "belongs to uid " + std::to_string(st.st_uid) + ", not " +
              std::to_string(geteuid());
  } else if ((st.st_mode & S_IWOTH) != 0 ||
             ((st.st_mode & S_IWGRP) != 0 &&
              (!shared || st.st_gid != shared_gid))) {
    problem = "may be written by other users (mode " + Mode(st.st_mode) + ")";
  }
  if (!problem.empty()) {
    close(fd);
    *error = dir + " " + problem +
             ": refusing it, since another user could take over the agent "
             "through it. Remove it, or choose a private directory "
             "(XDG_RUNTIME_DIR, --socket, MERIDIAN_AGENT_SOCKET)";
    return -1;
  }
  return fd;
}

bool PeerCredentials(int socket, uid_t* uid, gid_t* gid, pid_t* pid) {
  struct ucred cred;
  socklen_t size = sizeof(cred);
  if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &cred, &size) != 0 ||
      size != sizeof(cred)) {
    return false;
  }
  *uid = cred.uid;
  *gid = cred.gid;
  *pid = cred.pid;
  return true;
}

bool PeerAllowed(uid_t agent_uid, gid_t shared_gid, uid_t peer_uid,
                 gid_t peer_gid, bool peer_in_group) {
  if (peer_uid == agent_uid || peer_uid == 0) return true;
  return agent_uid == 0 && shared_gid != kNoGroup &&
         (peer_gid == shared_gid || peer_in_group);
}

bool PeerInGroup(int socket, gid_t gid) {
  gid_t groups[256];
  socklen_t length = sizeof(groups);
  if (getsockopt(socket, SOL_SOCKET, SO_PEERGROUPS, groups, &length) != 0) {
    return false;  // more than 256 groups, or an older kernel: not found
  }
  for (size_t i = 0; i < length / sizeof(gid_t); ++i) {
    if (groups[i] == gid) return true;
  }
  return false;
}

}  // namespace meridian
