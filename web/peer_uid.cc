#include "web/peer_uid.h"

#include <netinet/in.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace meridian {
namespace {

// ADDR:PORT as the kernel's socket table writes it: the address's 32-bit
// words in host order, %08X each, and the port %04X.
std::string TableAddress(const sockaddr_storage& address) {
  char out[64];
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    uint32_t word;
    std::memcpy(&word, &v4.sin_addr, 4);
    std::snprintf(out, sizeof(out), "%08X:%04X", word, ntohs(v4.sin_port));
    return out;
  }
  const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
  uint32_t words[4];
  std::memcpy(words, &v6.sin6_addr, 16);
  std::snprintf(out, sizeof(out), "%08X%08X%08X%08X:%04X", words[0], words[1],
                words[2], words[3], ntohs(v6.sin6_port));
  return out;
}

}  // namespace

std::optional<uid_t> PeerUidIn(const std::string& table,
                               const sockaddr_storage& peer,
                               const sockaddr_storage& local) {
  const std::string from = TableAddress(peer);
  const std::string to = TableAddress(local);
  for (absl::string_view line : absl::StrSplit(table, '\n')) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() < 8 || fields[1] != from || fields[2] != to) continue;
    if (fields[3] != "01") continue;  // TCP_ESTABLISHED
    uint32_t uid;
    if (absl::SimpleAtoi(fields[7], &uid)) return static_cast<uid_t>(uid);
  }
  return std::nullopt;
}

std::optional<uid_t> LoopbackPeerUid(const sockaddr_storage& peer,
                                     const sockaddr_storage& local) {
  std::ifstream file(peer.ss_family == AF_INET6 ? "/proc/net/tcp6"
                                                : "/proc/net/tcp");
  if (!file) return std::nullopt;
  std::stringstream text;
  text << file.rdbuf();
  return PeerUidIn(text.str(), peer, local);
}

}  // namespace meridian
