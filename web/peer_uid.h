// Who is at the other end of a loopback TCP connection: the user owning the
// peer's socket, from the kernel's socket table (/proc/net/tcp, tcp6). On
// loopback every client's address is 127.0.0.1 or ::1, so a bound per
// client (the web page's, web_server.h) counts users, not addresses.
#ifndef MERIDIAN_WEB_PEER_UID_H_
#define MERIDIAN_WEB_PEER_UID_H_

#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace meridian {

// The uid owning the socket at `peer` connected to this host's `local`
// (both loopback addresses of one family), read from `table` (the text of
// /proc/net/tcp for IPv4, /proc/net/tcp6 for IPv6); nullopt if no
// connected socket of the table matches (gone already, or not on this
// host).
std::optional<uid_t> PeerUidIn(const std::string& table,
                               const sockaddr_storage& peer,
                               const sockaddr_storage& local);

// The same from this host's tables.
std::optional<uid_t> LoopbackPeerUid(const sockaddr_storage& peer,
                                     const sockaddr_storage& local);

}  // namespace meridian

#endif  // MERIDIAN_WEB_PEER_UID_H_
