// The agent's runtime directory and socket, and the checks that keep other
// users of a shared node out of them (docs/security.md).
//
// The directory holds the agent's socket and lock, and by default its
// spool. Another user must not be able to create it first, plant links in
// it, or put their own socket where a traced process looks for the agent:
//   - the agent makes the directory with mkdir (which fails if it exists,
//     so nobody else's directory is ever adopted silently), then opens it
//     with O_NOFOLLOW and checks that it is a directory, owned by the
//     agent's user, that no other user may write (OpenPrivateDir); files in
//     it are opened relative to that descriptor, never following links;
//   - both ends of the Unix socket check the other's credentials
//     (SO_PEERCRED): a process hands its memory only to an agent of its own
//     user or root (ConnectAgent), and an agent serves only processes of
//     its own user, root, or the one group a root agent is told to serve
//     (PeerAllowed).
//
// Plain POSIX: this is linked into traced processes.
#ifndef MERIDIAN_ABI_AGENT_DIR_H_
#define MERIDIAN_ABI_AGENT_DIR_H_

#include <sys/types.h>

#include <string>

namespace meridian {

// The agent's socket: $MERIDIAN_AGENT_SOCKET, else
// $XDG_RUNTIME_DIR/meridian/agent.sock, else /run/user/UID/meridian/
// agent.sock where /run/user/UID is this user's directory, else
// /tmp/meridian-UID/agent.sock.
std::string DefaultAgentSocket();

// The directory `path` is in ("." for a bare name, "/" at the root). For
// the agent's socket: its runtime directory, which OpenPrivateDir verifies.
std::string DirOf(const std::string& path);

// Makes `dir` (the parent must exist) or opens it if it exists, and returns
// a descriptor of it (O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) once it is
// verified: a directory, not a link, owned by this process's effective
// user, writable by nobody else (group write is allowed only for
// `shared_gid`, the group a root agent serves; -1: none). Returns -1 and
// sets *error (naming the owner and mode, and what to do) otherwise. A new
// directory is 0700, or 0750 group shared_gid.
int OpenPrivateDir(const std::string& dir, gid_t shared_gid,
                   std::string* error);

// The credentials of the process at the other end of a connected Unix
// socket. False if they cannot be read.
bool PeerCredentials(int socket, uid_t* uid, gid_t* gid, pid_t* pid);

// Whether an agent running as `agent_uid` serves a peer: the same user,
// root, or (for a root agent given one) a member of `shared_gid`, by its
// effective group or `peer_in_group` (a supplementary group: PeerInGroup).
bool PeerAllowed(uid_t agent_uid, gid_t shared_gid, uid_t peer_uid,
                 gid_t peer_gid, bool peer_in_group = false);

// Whether the peer of a connected Unix socket had `gid` among its
// supplementary groups when it connected (SO_PEERGROUPS, Linux 4.13).
bool PeerInGroup(int socket, gid_t gid);

}  // namespace meridian

#endif  // MERIDIAN_ABI_AGENT_DIR_H_
