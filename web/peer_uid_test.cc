#include "web/peer_uid.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace meridian {
namespace {

sockaddr_storage V4(const char* ip, uint16_t port) {
  sockaddr_storage s{};
  auto& v4 = reinterpret_cast<sockaddr_in&>(s);
  v4.sin_family = AF_INET;
  v4.sin_port = htons(port);
  inet_pton(AF_INET, ip, &v4.sin_addr);
  return s;
}

// Lines as the kernel writes them (a listener, a connection each way).
constexpr char kTable[] =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
    "retrnsmt   uid  timeout inode\n"
    "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 "
    "00000000  1000        0 1061 1 0 100 0 0 10 0\n"
    "   1: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 "
    "00000000  1234        0 2001 1 0 20 4 30 10 -1\n"
    "   2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 "
    "00000000  1000        0 2002 1 0 20 4 30 10 -1\n";

TEST(PeerUidTest, FindsTheUserOfThePeersSocket) {
  // 127.0.0.1:54321 (0xD431) connected to 127.0.0.1:8080 (0x1F90).
  EXPECT_EQ(PeerUidIn(kTable, V4("127.0.0.1", 54321), V4("127.0.0.1", 8080)),
            std::optional<uid_t>(1234));
  // The server's own end is not the peer's.
  EXPECT_EQ(PeerUidIn(kTable, V4("127.0.0.1", 8080), V4("127.0.0.1", 54321)),
            std::optional<uid_t>(1000));
  EXPECT_EQ(PeerUidIn(kTable, V4("127.0.0.1", 54322), V4("127.0.0.1", 8080)),
            std::nullopt);
  EXPECT_EQ(PeerUidIn("", V4("127.0.0.1", 1), V4("127.0.0.1", 2)),
            std::nullopt);
}

TEST(PeerUidTest, AConnectionOfThisProcessIsItsOwnUsers) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_storage local = V4("127.0.0.1", 0);
  ASSERT_EQ(
      bind(listener, reinterpret_cast<sockaddr*>(&local), sizeof(sockaddr_in)),
      0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t length = sizeof(local);
  getsockname(listener, reinterpret_cast<sockaddr*>(&local), &length);
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(
      connect(client, reinterpret_cast<sockaddr*>(&local), sizeof(sockaddr_in)),
      0);
  sockaddr_storage peer{};
  const int served = accept(listener, nullptr, nullptr);
  length = sizeof(peer);
  getpeername(served, reinterpret_cast<sockaddr*>(&peer), &length);
  EXPECT_EQ(LoopbackPeerUid(peer, local), std::optional<uid_t>(getuid()));
  close(served);
  close(client);
  close(listener);
}

}  // namespace
}  // namespace meridian
