#include "import/paths.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(PathsTest, BaseAndDirectoryNames) {
  EXPECT_EQ(PathBaseName("/a/b/c.json"), "c.json");
  EXPECT_EQ(PathBaseName("c.json"), "c.json");
  EXPECT_EQ(PathDirName("/a/b/c.json"), "/a/b");
  EXPECT_EQ(PathDirName("/c.json"), "/");
  EXPECT_EQ(PathDirName("c.json"), "");
}

// One slash between, however many the directory ends with.
TEST(PathsTest, JoinedWithOneSlash) {
  EXPECT_EQ(PathJoin("hta", "rank0.json"), "hta/rank0.json");
  EXPECT_EQ(PathJoin("hta/", "rank0.json"), "hta/rank0.json");
  EXPECT_EQ(PathJoin("hta//", "rank0.json"), "hta/rank0.json");
  EXPECT_EQ(PathJoin("/", "a"), "/a");
  EXPECT_EQ(PathJoin("//", "a"), "/a");
  EXPECT_EQ(PathJoin("", "a"), "a");
}

}  // namespace
}  // namespace meridian
