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

}  // namespace
}  // namespace meridian
