#include "abi/agent_dir.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr gid_t kNoGroup = static_cast<gid_t>(-1);

class AgentDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/meridian-agent-dir-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    root_ = dir;
  }
  void TearDown() override {
    std::string command = "rm -rf " + root_;
    ASSERT_EQ(system(command.c_str()), 0);
  }
  std::string root_;
};

TEST_F(AgentDirTest, CreatesAPrivateDirectory) {
  std::string error;
  const std::string dir = root_ + "/agent";
  const int fd = OpenPrivateDir(dir, kNoGroup, &error);
  ASSERT_GE(fd, 0) << error;
  close(fd);
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, geteuid());
  // Opening it again (an agent restarting) is fine.
  const int again = OpenPrivateDir(dir, kNoGroup, &error);
  ASSERT_GE(again, 0) << error;
  close(again);
}

TEST_F(AgentDirTest, RefusesADirectoryOthersMayWrite) {
  const std::string dir = root_ + "/open";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  std::string error;
  EXPECT_EQ(OpenPrivateDir(dir, kNoGroup, &error), -1);
  EXPECT_EQ(error, dir +
                       " may be written by other users (mode 0777): refusing "
                       "it, since another user could take over the agent "
                       "through it. Remove it, or choose a private directory "
                       "(XDG_RUNTIME_DIR, --socket, MERIDIAN_AGENT_SOCKET)");
}

TEST_F(AgentDirTest, RefusesALink) {
  const std::string target = root_ + "/target";
  const std::string link = root_ + "/link";
  ASSERT_EQ(mkdir(target.c_str(), 0700), 0);
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  std::string error;
  EXPECT_EQ(OpenPrivateDir(link, kNoGroup, &error), -1);
  EXPECT_NE(error.find(link + " is not a directory of its own"),
            std::string::npos)
      << error;
}

TEST_F(AgentDirTest, RefusesAnotherUsersDirectory) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make one";
  const std::string dir = root_ + "/theirs";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(chown(dir.c_str(), 4242, 4242), 0);
  std::string error;
  EXPECT_EQ(OpenPrivateDir(dir, kNoGroup, &error), -1);
  EXPECT_NE(error.find(dir + " belongs to uid 4242, not 0: refusing it"),
            std::string::npos)
      << error;
}

TEST(DirOfTest, BareNamesRootAndNested) {
  EXPECT_EQ(DirOf("agent.sock"), ".");
  EXPECT_EQ(DirOf("/agent.sock"), "/");
  EXPECT_EQ(DirOf("/run/user/7/meridian/agent.sock"), "/run/user/7/meridian");
}

TEST(PeerAllowedTest, SameUserRootOrTheServedGroup) {
  EXPECT_TRUE(PeerAllowed(1000, kNoGroup, 1000, 1000));
  EXPECT_TRUE(PeerAllowed(1000, kNoGroup, 0, 0));
  EXPECT_FALSE(PeerAllowed(1000, kNoGroup, 1001, 1000));
  // Only a root agent serves a group.
  EXPECT_FALSE(PeerAllowed(1000, 50, 1001, 50));
  EXPECT_TRUE(PeerAllowed(0, 50, 1001, 50));
  EXPECT_FALSE(PeerAllowed(0, 50, 1001, 51));
  EXPECT_FALSE(PeerAllowed(0, kNoGroup, 1001, 1001));
  // A member of the served group by a supplementary group.
  EXPECT_TRUE(PeerAllowed(0, 50, 1001, 51, /*peer_in_group=*/true));
  EXPECT_FALSE(PeerAllowed(1000, 50, 1001, 51, /*peer_in_group=*/true));
}

TEST(PeerInGroupTest, SeesThePeersSupplementaryGroups) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds), 0);
  gid_t groups[256];
  const int n = getgroups(256, groups);
  ASSERT_GE(n, 0);
  for (int i = 0; i < n; ++i) EXPECT_TRUE(PeerInGroup(fds[0], groups[i]));
  gid_t absent = 54321;
  while (std::find(groups, groups + n, absent) != groups + n) ++absent;
  EXPECT_FALSE(PeerInGroup(fds[0], absent));
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace meridian
